package sim_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"testing"
)

// measurement matches a measured number in a comment: "measured" and a
// number with a unit in one sentence, a per-row cost, a speed-up.
var measurement = regexp.MustCompile(`(?i)\bmeasured\b[^.;]*?\d[\d,.e]*\s*(ns|µs|us|ms|s|%|x|MB|MiB|GB|GiB|KB|bytes|rows|rows/s|cores)\b|\d[\d,.]*\s*(ns/row|ns a row|million rows/s)|\d[\d,.]*x (faster|slower)|\d[\d,.]*% (faster|slower)`)

// commentNumbersAllowed are the comments whose numbers are not our
// measurements, by file: what they say instead.
var commentNumbersAllowed = map[string]string{
	// The sizes of the index's entries, by structure (8-byte entries, 16
	// bytes), beside the benchmark that measures it.
	"generators/logsource.go": "structure",
	// Spark's own StateStoreBasicOperationsBenchmark figures, the source of
	// the default cost terms (docs/spark-model.md), not a measurement here.
	"sim/spark/sparkmodel/cost.go": "Spark's published figures",
}

// TestNoMeasurementsInComments checks that no comment of the module's Go
// code carries a measured number (a per-row cost, a speed-up, a measured
// size): comments keep the why, and the numbers, which change with the
// machine and the code, live in BENCHMARKS.md with how they were taken.
func TestNoMeasurementsInComments(t *testing.T) {
	root := moduleRoot(t)
	err := walkGoFiles(root, func(p, rel string) error {
		if _, ok := commentNumbersAllowed[filepath.ToSlash(rel)]; ok {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, cg := range f.Comments {
			if m := measurement.FindString(cg.Text()); m != "" {
				t.Errorf("%s:%d: a measured number in a comment (%q): move it to BENCHMARKS.md and keep the why", filepath.ToSlash(rel), fset.Position(cg.Pos()).Line, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMeasurementPattern pins what the check flags and what it leaves.
func TestMeasurementPattern(t *testing.T) {
	for s, want := range map[string]bool{
		"spent up to a sixth of its CPU (measured at 1e7 rows, load 7-11 on 2 cores)": true,
		"costs about a megabyte (measured: 200 stores held 257 MB more)":              true,
		"the new loop is 1.4x faster":                                                 true,
		"it costs 812 ns/row":                                                         true,
		"the cost is measured in BENCHMARKS.md":                                       false,
		"a trigger of 10 s, 1,000 rows a batch":                                       false,
	} {
		if got := measurement.MatchString(s); got != want {
			t.Errorf("%q: flagged %v, want %v", s, got, want)
		}
	}
}
