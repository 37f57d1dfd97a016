package plan

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// WrittenCostTerms returns the keys written in the spark.cost block of
// the scenario file at path: the terms a scenario gives, which --provider
// keeps, the others taking that provider's defaults.
func WrittenCostTerms(path string) (map[string]bool, error) {
	data, err := fileio.ReadFile(path, fileio.MaxScenarioBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the scenario: %s", path, fileio.Reason(err))
	}
	var raw struct {
		Spark struct {
			Cost map[string]yaml.Node `yaml:"cost"`
		} `yaml:"spark"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: spark.cost: %w", path, err)
	}
	out := map[string]bool{}
	for k := range raw.Spark.Cost {
		out[k] = true
	}
	return out, nil
}
