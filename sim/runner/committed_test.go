package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// wallClockField matches summary.json's two wall-clock fields.
var wallClockField = regexp.MustCompile(`"(eventsPerSecond|wallSeconds)": [0-9.e+-]+`)

// TestCommittedResultsWithoutSparkBlock reruns experiments without a
// spark: block and compares what they write with the committed results:
// timeseries.csv byte for byte, summary.json but its wall-clock fields.
// The spark: model must leave every result of a scenario without one as
// it was.
func TestCommittedResultsWithoutSparkBlock(t *testing.T) {
	for _, name := range []string{"stall", "watermark-pitfalls", "unbounded-state", "key-choice"} {
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Load(filepath.Join("..", "..", "experiments", name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if sc.Spark != nil {
				t.Fatalf("%s has a spark: block", name)
			}
			out := filepath.Join(t.TempDir(), name)
			if err := Write(out, run(t, sc, 2)); err != nil {
				t.Fatal(err)
			}
			committed := filepath.Join("..", "..", "results", name)
			for _, f := range []string{"timeseries.csv", "summary.json"} {
				want, err := os.ReadFile(filepath.Join(committed, f))
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				want, got = wallClockField.ReplaceAll(want, []byte(`"$1": 0`)), wallClockField.ReplaceAll(got, []byte(`"$1": 0`))
				if !bytes.Equal(want, got) {
					t.Errorf("%s differs from results/%s/%s", f, name, f)
				}
			}
			if _, err := os.Stat(filepath.Join(out, "spark.csv")); err == nil {
				t.Error("spark.csv written without a spark: block")
			}
		})
	}
}
