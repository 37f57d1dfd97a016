package scenario

import (
	"testing"

	"github.com/dedupsim/dedupsim/generators"
)

// TestGoodScenariosGenerate generates the first rows of every good
// scenario of testdata/good, through Load: what the loader accepts, the
// generators run.
func TestGoodScenariosGenerate(t *testing.T) {
	for _, path := range yamlFiles(t, "good") {
		s, err := Load(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		g, err := generators.New(s.Generator())
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		var r generators.Row
		n := 0
		for n < 50000 && g.Next(&r) {
			n++
		}
		if n == 0 {
			t.Errorf("%s: no rows", path)
		}
	}
}
