package generators

import (
	"path/filepath"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// TestScenarioFiles generates the first rows of every good scenario of
// sim/scenario's tests (SCENARIO.md's example among them), through Load:
// what the loader accepts, the generator runs.
func TestScenarioFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "sim", "scenario", "testdata", "good", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no scenarios in ../sim/scenario/testdata/good")
	}
	for _, path := range files {
		s, err := scenario.Load(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		g := mustNew(t, s)
		var r Row
		n := 0
		for n < 50000 && g.Next(&r) {
			n++
		}
		if n == 0 {
			t.Errorf("%s: no rows", path)
		}
	}
}
