package runner

import (
	"math"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// drainScenario has copies that come back long after the traffic ends (a
// drain of up to 20 minutes after a 10m5s run), and queries on both sides
// of saturation: a within-watermark query keeps a key 2 x delay + trigger,
// 610s at 5m (>= 605s: saturated) and 590s at 4m50s (not).
const drainScenario = `
name: drain
seed: 3
duration: 10m5s
trigger: 10s
workload:
  rate: 40/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.2
    copies: {dist: constant, value: 1}
    delay: {dist: uniform, min: 1m, max: 20m}
    timestamp: same
queries:
  - name: within-1m
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: within-5m
    query: withWatermark("event_time", "5 minutes").dropDuplicatesWithinWatermark(["event_id"])
  - name: within-4m50s
    query: withWatermark("event_time", "4 minutes 50 seconds").dropDuplicatesWithinWatermark(["event_id"])
  - name: pair-keyed
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])
  - name: global
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
`

// TestTrafficWindowFields: peaks and the watermark lag are measured over
// the batches of the traffic window (up to the first trigger at or after
// the duration), never over the drain, while totals cover the whole run;
// the summary says which window each field covers; each query carries its
// flavour, its key horizon and whether that horizon reaches the traffic
// window.
func TestTrafficWindowFields(t *testing.T) {
	s := load(t, drainScenario)
	r := run(t, s, 0)
	checkIdentities(t, r)
	w := r.Summary.Windows
	if w == nil || w.TrafficEnd != 605 || w.LastTrafficBatch != 610 {
		t.Fatalf("windows %+v; want traffic to 605s, its last batch at 610s", w)
	}
	if len(w.Traffic) == 0 || len(w.Run) == 0 {
		t.Errorf("windows do not list the fields they cover: %+v", w)
	}
	last := s.Start.UnixMilli() + 610_000
	type want struct {
		flavour   string
		horizon   float64 // 0: none
		saturated bool
	}
	wants := map[string]want{
		"within-1m":    {metrics.FlavourWithin, 130, false},
		"within-5m":    {metrics.FlavourWithin, 610, true},
		"within-4m50s": {metrics.FlavourWithin, 590, false},
		"pair-keyed":   {metrics.FlavourPairKeyed, 70, false},
		"global":       {metrics.FlavourOther, 0, false},
		"unbounded":    {metrics.FlavourUnbounded, 0, false},
	}
	for _, q := range r.Summary.Queries {
		wt := wants[q.Name]
		if q.Flavour != wt.flavour || q.Saturated != wt.saturated {
			t.Errorf("%s: flavour %q, saturated %v; want %q, %v", q.Name, q.Flavour, q.Saturated, wt.flavour, wt.saturated)
		}
		switch {
		case wt.horizon == 0 && q.KeyHorizonSeconds != nil:
			t.Errorf("%s: key horizon %v; it never evicts, want null", q.Name, *q.KeyHorizonSeconds)
		case wt.horizon > 0 && (q.KeyHorizonSeconds == nil || *q.KeyHorizonSeconds != wt.horizon):
			t.Errorf("%s: key horizon %v; want %vs", q.Name, q.KeyHorizonSeconds, wt.horizon)
		}
		var peak, peakBytes int64
		lag, runLag := math.Inf(-1), math.Inf(-1)
		drain := 0
		for _, b := range records(r, q.Name) {
			l := math.Inf(-1)
			if b.WatermarkSet() {
				l = float64(b.ProcessingTime-b.Watermark) / 1000
			}
			runLag = max(runLag, l)
			if b.ProcessingTime > last {
				drain++
				continue
			}
			peak, peakBytes, lag = max(peak, b.StateRows), max(peakBytes, b.StateBytes), max(lag, l)
		}
		if drain == 0 {
			t.Fatalf("%s: no batch after the traffic window; the test needs a drain", q.Name)
		}
		if q.PeakStateRows != peak || q.PeakStateBytes != peakBytes {
			t.Errorf("%s: peak %d rows, %d B; the traffic window's batches peak at %d, %d", q.Name, q.PeakStateRows, q.PeakStateBytes, peak, peakBytes)
		}
		if q.Flavour == metrics.FlavourUnbounded {
			if q.MaxWatermarkLagSeconds != nil {
				t.Errorf("%s: a watermark lag without a watermark", q.Name)
			}
			continue
		}
		if q.MaxWatermarkLagSeconds == nil || *q.MaxWatermarkLagSeconds != lag {
			t.Errorf("%s: max watermark lag %v; the traffic window's batches give %v", q.Name, q.MaxWatermarkLagSeconds, lag)
		}
		// The drain's lag grows while the watermark stands still: the
		// test shows the window matters.
		if !(runLag > lag+60) {
			t.Errorf("%s: the run's largest lag %v is not well above the window's %v; the drain does not show", q.Name, runLag, lag)
		}
	}
}
