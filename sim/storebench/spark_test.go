package storebench

import (
	"context"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// TestRefusesSparkBlock: the store comparison measures one store per
// operator, so a scenario with a spark: block is refused with one line,
// before anything runs.
func TestRefusesSparkBlock(t *testing.T) {
	sc, err := scenario.Parse([]byte(`name: s
duration: 1m
workload: {rate: 10/s}
queries: [{name: a, query: 'dropDuplicates(["event_id"])'}]
spark: {partitions: 4}
`), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), sc, Options{TempDir: t.TempDir()})
	if err == nil || !strings.HasPrefix(err.Error(), "bench-stores: scenario s.yaml: spark: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line refusing the spark: block", err)
	}
}
