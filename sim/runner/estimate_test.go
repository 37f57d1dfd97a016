package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// TestEstimateRefusesARunThatCannotFinish: 1e9 events/s for 30 days with
// an unbounded dedup (about 2.6e15 events) was accepted. The estimate
// before the run finds the rows, the peak state and the time, and refuses
// it, on memory and, with the state on disk, on time; --go-ahead lets it
// run.
func TestEstimateRefusesARunThatCannotFinish(t *testing.T) {
	sc, err := scenario.Parse([]byte(`name: huge
seed: 1
duration: 30d
trigger: 1ms
workload:
  rate: 1e9/s
queries:
  - name: u
    query: dropDuplicates(["event_id"])
`), "huge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := EstimateRun(sc, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	// 1e9/s x 30 d = 2.592e15 rows, every one a key that stays.
	if e.Rows != 2.592e15 || e.PeakStateRows != 2.592e15 || e.PeakStateBytes != 2.592e15*EstimateNumberedBytes || e.Seconds != 2.592e15/EstimateRowsPerSecond {
		t.Fatalf("estimate %+v", e)
	}
	e.Memory = 24 << 30
	if err := e.Check(false); err == nil || !strings.Contains(err.Error(), "cannot finish on this machine: about 2.6e+15 rows") || !strings.Contains(err.Error(), "over its 24.0 GiB of memory") {
		t.Fatalf("Check = %v; want a refusal on memory", err)
	}
	if err := e.Check(true); err != nil {
		t.Fatalf("--go-ahead: %v", err)
	}
	disk, err := EstimateRun(sc, 1, scenario.StorePebble)
	if err != nil {
		t.Fatal(err)
	}
	if disk.PeakStateRows != 0 {
		t.Fatalf("a Pebble run's state counted in memory: %+v", disk)
	}
	if err := disk.Check(false); err == nil || !strings.Contains(err.Error(), "would take too long") || !strings.Contains(err.Error(), "over the limit of 1d") {
		t.Fatalf("Check = %v; want a refusal on time", err)
	}
}

// TestEstimateAcceptsTheExperiments: every scenario in experiments/ runs
// without --go-ahead on a machine of 8 GiB.
func TestEstimateAcceptsTheExperiments(t *testing.T) {
	files, _ := filepath.Glob("../../experiments/*.yaml")
	if len(files) < 10 {
		t.Fatalf("%d experiments", len(files))
	}
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		e, err := EstimateRun(sc, 2, "")
		if err != nil {
			t.Fatal(err)
		}
		e.Memory = 8 << 30
		if err := e.Check(false); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if e.Rows <= 0 || e.Seconds <= 0 {
			t.Errorf("%s: estimate %+v", f, e)
		}
	}
}
