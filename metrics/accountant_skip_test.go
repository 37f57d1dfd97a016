package metrics

import (
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
)

// TestSkippedEventsLeaveTheWindow: an accountant that counts one event in
// four (a part of a run split by key) and skips the others holds only the
// events in flight, however long the run: the skipped events finish at
// once and leave its window, none of them becomes a straggler, and only
// the counted events are counted.
func TestSkippedEventsLeaveTheWindow(t *testing.T) {
	var a Accountant
	a.win.limit = 1000
	rows := make([]generators.Row, 0, 100)
	outcomes := make([]engines.Outcome, 0, 100)
	const events = 200_000
	for e := uint64(0); e < events; e++ {
		if e%4 == 0 {
			rows = append(rows, generators.Row{Truth: generators.Truth{Event: e, Copies: 1}})
			outcomes = append(outcomes, engines.Emitted)
		} else {
			a.Skip(e)
		}
		if e%100 == 99 {
			a.ObserveBatch(rows, outcomes, false)
			rows, outcomes = rows[:0], outcomes[:0]
			if p := a.Pending(); p > 200 {
				t.Fatalf("after event %d: %d events pending (%d stragglers), want at most a batch's", e, p, len(a.win.stragglers))
			}
		}
	}
	if a.LogicalEvents != events/4 || a.InputRows != events/4 || a.FalseDrops != 0 {
		t.Errorf("counted %d events, %d rows, %d false drops; want %d, %d, 0", a.LogicalEvents, a.InputRows, a.FalseDrops, events/4, events/4)
	}
}
