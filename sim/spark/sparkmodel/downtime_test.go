package sparkmodel

import (
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// TestNextTriggerSkipsDowntime: a trigger due in a downtime span fires at
// its end, and at the end of the span that starts there when two touch;
// outside them the trigger lattice and overruns are as without one.
// Trigger 10 s, spans [25 s, 40 s) and [40 s, 52 s), in seconds.
func TestNextTriggerSkipsDowntime(t *testing.T) {
	cfg := Config{Partitions: 1, Provider: HDFS, Executors: 1, CoresPerExecutor: 1, Downtime: []Downtime{
		{At: interval.Duration(25 * time.Second), For: interval.Duration(15 * time.Second)},
		{At: interval.Duration(40 * time.Second), For: interval.Duration(12 * time.Second)},
	}}
	const s = int64(1e6)
	tr := NewTracker(cfg, nil, 0, 10*s, 0, 100*s)
	for _, c := range []struct{ start, end, want int64 }{
		{10 * s, 10 * s, 20 * s}, // before: the next boundary
		{20 * s, 20 * s, 52 * s}, // 30 s is down until 40 s, 40 s until 52 s
		{20 * s, 27 * s, 52 * s}, // an overrun ending in the downtime
		{52 * s, 52 * s, 60 * s}, // after: the lattice again
		{52 * s, 61 * s, 61 * s}, // an overrun, at its end
	} {
		if got := tr.NextTrigger(c.start, c.end); got != c.want {
			t.Errorf("after a batch from %d s to %d s: next trigger at %g s, want %d s", c.start/s, c.end/s, float64(got)/float64(s), c.want/s)
		}
	}
}
