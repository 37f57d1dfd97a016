package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// sweepScenario is a small seeded sweep: re-stamped retries with a
// lognormal gap, arrival delays far shorter than the smallest delay (so no
// row is late and the missed rate is the dedup's alone), four query
// shapes, five delays.
const sweepScenario = `
name: sweep-small
seed: 19
duration: 5m
trigger: 5s
workload:
  rate: 150/s
  arrivalDelay: {dist: exponential, mean: 1s}
  retries:
    probability: 0.2
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 15s, p99: 2m}
    timestamp: restamp
queries:
  - name: within-watermark
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: pair-keyed
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])
  - name: global
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
sweep:
  delay: [20s, 40s, 1m, 2m, 4m]
`

func loadSweep(t *testing.T) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(sweepScenario), "sweep-small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runSweep(t *testing.T, s *scenario.Scenario, workers int) *Results {
	t.Helper()
	r, err := runOpts(t, s, Options{Workers: workers})
	if err != nil {
		t.Fatalf("run with %d workers: %v", workers, err)
	}
	return r
}

// TestSweepMonotone checks, for each query of a seeded sweep, that the
// missed-duplicate rate never rises and peak state never falls as the
// delay grows, and that the sweep expands as documented: one job per
// query and delay, a query without a watermark once.
//
// Monotonicity is a property of the dedup when no row is late, as here.
// With arrival delays that reach past the delay it does not hold for a
// pair-keyed query with re-stamped copies: a longer delay drops fewer
// copies behind the watermark, so more are emitted again (see
// experiments/horizon-tradeoff.yaml).
func TestSweepMonotone(t *testing.T) {
	s := loadSweep(t)
	r := runSweep(t, s, 0)
	byQuery := map[string][]metrics.QuerySummary{}
	var order []string
	for _, q := range r.Summary.Queries {
		if _, ok := byQuery[q.Name]; !ok {
			order = append(order, q.Name)
		}
		byQuery[q.Name] = append(byQuery[q.Name], q)
	}
	want := map[string]int{"within-watermark": 5, "pair-keyed": 5, "global": 5, "unbounded": 1}
	for name, n := range want {
		if got := len(byQuery[name]); got != n {
			t.Errorf("%s: %d jobs, want %d", name, got, n)
		}
	}
	for _, name := range order {
		qs := byQuery[name]
		for i := 1; i < len(qs); i++ {
			a, b := qs[i-1], qs[i]
			if a.Delay == nil || b.Delay == nil || *b.Delay <= *a.Delay {
				t.Fatalf("%s: delays not increasing: %v then %v", name, a.Delay, b.Delay)
			}
			if b.MissedDuplicateRate > a.MissedDuplicateRate {
				t.Errorf("%s: missed rate rose from %.5f at %vs to %.5f at %vs", name, a.MissedDuplicateRate, *a.Delay, b.MissedDuplicateRate, *b.Delay)
			}
			if b.PeakStateRows < a.PeakStateRows || b.PeakStateBytes < a.PeakStateBytes {
				t.Errorf("%s: peak state fell from %d rows (%d B) at %vs to %d rows (%d B) at %vs",
					name, a.PeakStateRows, a.PeakStateBytes, *a.Delay, b.PeakStateRows, b.PeakStateBytes, *b.Delay)
			}
		}
	}
	// The sweep is informative: within-watermark's missed rate falls
	// strictly over the sweep, and pair-keyed misses every re-stamped copy.
	ww := byQuery["within-watermark"]
	if first, last := ww[0].MissedDuplicateRate, ww[len(ww)-1].MissedDuplicateRate; !(last < first/4) {
		t.Errorf("within-watermark: missed rate %.4f at the smallest delay, %.4f at the largest; want a steep fall", first, last)
	}
	for _, q := range byQuery["pair-keyed"] {
		if q.MissedDuplicates != q.TrueDuplicates || q.TrueDuplicates == 0 {
			t.Errorf("pair-keyed at %vs: missed %d of %d re-stamped copies; want all", *q.Delay, q.MissedDuplicates, q.TrueDuplicates)
		}
	}
}

// TestSweepDeterministicAcrossWorkers checks that a sweep's results
// folder is byte-identical with one worker and with several, apart from
// the wall-clock fields of summary.json.
func TestSweepDeterministicAcrossWorkers(t *testing.T) {
	s := loadSweep(t)
	dirs := map[int]string{}
	for _, w := range []int{1, 3} {
		dir := filepath.Join(t.TempDir(), "r")
		if err := Write(dir, runSweep(t, s, w)); err != nil {
			t.Fatal(err)
		}
		dirs[w] = dir
	}
	files := []string{"timeseries.csv"}
	entries, err := os.ReadDir(filepath.Join(dirs[1], "progress"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		files = append(files, filepath.Join("progress", e.Name()))
	}
	if len(files) != 1+16 {
		t.Errorf("%d progress files, want 16 (one per query and delay)", len(files)-1)
	}
	for _, f := range files {
		a, errA := os.ReadFile(filepath.Join(dirs[1], f))
		b, errB := os.ReadFile(filepath.Join(dirs[3], f))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", f, errA, errB)
		}
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between 1 and 3 workers (or is empty)", f)
		}
	}
	a, b := stableSummary(t, dirs[1]), stableSummary(t, dirs[3])
	if !bytes.Equal(a, b) {
		t.Errorf("summary.json differs between 1 and 3 workers beyond its wall-clock fields")
	}
}

// stableSummary returns dir's summary.json with the wall-clock fields
// zeroed.
func stableSummary(t *testing.T, dir string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s metrics.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	for i := range s.Queries {
		s.Queries[i].EventsPerSecond, s.Queries[i].WallSeconds = 0, 0
	}
	out, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The lessons of the two planning experiments, registered with the lesson
// tests' list (lessons_test.go) unless it already names them.
// TestLessonHorizonTradeoff: within-watermark's missed rate falls steeply
// with the delay, pair-keyed misses nearly every re-stamped copy at every
// delay, false drops fall with the delay and are the same for every query,
// state grows with the delay (within-watermark's about twice
// pair-keyed's), and the global dedup keeps every key it emitted.
func TestLessonHorizonTradeoff(t *testing.T) {
	s := loadExperiment(t, "horizon-tradeoff.yaml")
	// 720k rows per job at full size; 15 minutes at half the rate keep
	// the lesson.
	shrink(s, 15*time.Minute)
	half := *s.Workload.Rate / 2
	s.Workload.Rate = &half
	r := runLesson(t, s)
	ww, pk, gl := swept(t, r, "within-watermark"), swept(t, r, "pair-keyed"), swept(t, r, "global")
	if len(ww) != len(s.Sweep.Delay) || len(pk) != len(ww) || len(gl) != len(ww) {
		t.Fatalf("%d, %d, %d runs per query; want %d", len(ww), len(pk), len(gl), len(s.Sweep.Delay))
	}
	for i := range ww {
		d := *ww[i].Delay
		if i > 0 {
			if ww[i].MissedDuplicateRate >= ww[i-1].MissedDuplicateRate {
				t.Errorf("within-watermark: missed %.4f at %vs, not below %.4f at the delay before", ww[i].MissedDuplicateRate, d, ww[i-1].MissedDuplicateRate)
			}
			for _, q := range [][]metrics.QuerySummary{ww, pk} {
				if q[i].PeakStateRows <= q[i-1].PeakStateRows {
					t.Errorf("%s: peak state %d at %vs, not above %d at the delay before", q[i].Name, q[i].PeakStateRows, d, q[i-1].PeakStateRows)
				}
			}
			if ww[i].FalseDropRate > ww[i-1].FalseDropRate {
				t.Errorf("false drops rose to %.5f at %vs", ww[i].FalseDropRate, d)
			}
		}
		if pk[i].MissedDuplicateRate < 0.9 {
			t.Errorf("pair-keyed at %vs: missed %.3f of re-stamped copies; want nearly all", d, pk[i].MissedDuplicateRate)
		}
		if pk[i].FalseDrops != ww[i].FalseDrops || gl[i].FalseDrops != ww[i].FalseDrops {
			t.Errorf("at %vs: false drops %d, %d, %d; the late-row filter is the same for every query", d, ww[i].FalseDrops, pk[i].FalseDrops, gl[i].FalseDrops)
		}
		if ratio := float64(ww[i].PeakStateRows) / float64(pk[i].PeakStateRows); ratio < 1.3 || ratio > 2.2 {
			t.Errorf("at %vs: within-watermark keeps %.2f x pair-keyed's state; want about twice", d, ratio)
		}
		if gl[i].FinalStateRows != gl[i].EmittedRows || gl[i].MissedDuplicates != 0 {
			t.Errorf("global at %vs: final state %d of %d emitted, missed %d; it never evicts and misses nothing", d, gl[i].FinalStateRows, gl[i].EmittedRows, gl[i].MissedDuplicates)
		}
	}
	if first, last := ww[0].MissedDuplicateRate, ww[len(ww)-1].MissedDuplicateRate; last > first/10 {
		t.Errorf("within-watermark: missed %.4f at the smallest delay, %.4f at the largest; want a tenfold fall", first, last)
	}
	if ww[0].FalseDropRate < 0.01 || ww[len(ww)-1].FalseDropRate > ww[0].FalseDropRate/10 {
		t.Errorf("false drops %.4f to %.5f; want the arrival-delay tail to show (over 1%% at the smallest delay, a tenfold fall)", ww[0].FalseDropRate, ww[len(ww)-1].FalseDropRate)
	}
}

// TestLessonCapacityPlan: at the delay the file is written with,
// within-watermark drops all but a few re-stamped copies while pair-keyed
// emits every one of them again.
func TestLessonCapacityPlan(t *testing.T) {
	s := loadExperiment(t, "capacity-plan.yaml")
	shrink(s, 15*time.Minute)
	q := byName(t, runLesson(t, s), "within-watermark", "pair-keyed")
	ww, pk := q["within-watermark"], q["pair-keyed"]
	if ww.MissedDuplicateRate == 0 || ww.MissedDuplicateRate > 0.005 || ww.FalseDrops != 0 {
		t.Errorf("within-watermark: missed %.4f, lost %d; want a few copies past the horizon (under 0.5%%) and no loss", ww.MissedDuplicateRate, ww.FalseDrops)
	}
	if pk.TrueDuplicates == 0 || pk.MissedDuplicates != pk.TrueDuplicates {
		t.Errorf("pair-keyed: missed %d of %d re-stamped copies; want all", pk.MissedDuplicates, pk.TrueDuplicates)
	}
}
