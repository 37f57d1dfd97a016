package beam

import (
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/beam"
)

// TestLateAtTheWatermarkIsNotABadClock: a late drop is blamed on a bad
// clock only when the watermark is strictly ahead of the arrival. By
// hand (fixed windows of 60 s, allowed lateness 0, event time, d = 1
// min; times in seconds): w@10, x@50 and y@70 arrive at their event
// times. A copy of x@50 arriving at 70: the watermark is the largest
// event time before it, 70, equal to the arrival, not ahead of it (no
// row was stamped in the future); window [0, 60) ended at 59.999 < 70,
// so the copy is dropped as late, and LateAhead must be false.
func TestLateAtTheWatermarkIsNotABadClock(t *testing.T) {
	op, err := ScenarioQuery(beam.EventTime, 60_000, 60_000, 0).NewScenarioOperator()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		key string
		at  int64
	}{{"w", 10_000}, {"x", 50_000}, {"y", 70_000}} {
		if o := op.Process([]byte(r.key), r.at, r.at); o != engines.Emitted {
			t.Fatalf("%s@%d: %v", r.key, r.at, o)
		}
	}
	o := op.Process([]byte("x"), 70_000, 50_000)
	if wm := op.Watermark(); wm != 70_000 {
		t.Fatalf("watermark %d at the copy's arrival, want 70000", wm)
	}
	if o != engines.DroppedLate || op.LateAhead() || op.DroppedLate() != 1 {
		t.Errorf("x@50 s arriving at 70 s, watermark 70 s: %v, ahead %v, late %d; want DroppedLate, not ahead, 1", o, op.LateAhead(), op.DroppedLate())
	}
}
