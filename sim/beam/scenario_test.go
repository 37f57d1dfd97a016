package beam

import (
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/beam"
)

// TestScenarioQueryTextIsAQuery checks that the query object a scenario's
// results show is one `simulate explain` takes, and means the same query.
func TestScenarioQueryTextIsAQuery(t *testing.T) {
	for _, q := range []*Trace{ScenarioQuery(beam.ProcessingTime, beam.DefaultDuration), ScenarioQuery(beam.EventTime, 1), ScenarioQuery(beam.EventTime, 61_500)} {
		back, err := LoadQuery([]byte(q.QueryText()))
		if err != nil {
			t.Fatalf("%s: %v", q.QueryText(), err)
		}
		if back.Domain != q.Domain || back.Duration != q.Duration || back.Window != 0 {
			t.Errorf("%s loads as %+v, want %+v", q.QueryText(), back, q)
		}
	}
}

// TestScenarioOperatorWorkedExample runs the worked example of
// ScenarioOperator (event time, d = 10 s): x@100 s, y@105 s, then copies
// of y while the watermark is 110 s and 110.001 s.
func TestScenarioOperatorWorkedExample(t *testing.T) {
	op, err := ScenarioQuery(beam.EventTime, 10_000).NewScenarioOperator()
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		key       string
		proc, ts  int64
		want      engines.Outcome
		watermark int64
	}{
		{"x", 1, 100_000, engines.Emitted, beam.MinTimestamp},
		{"y", 2, 105_000, engines.Emitted, 100_000}, // x's timer fired
		{"z", 3, 110_000, engines.Emitted, 105_000}, // moves the watermark
		{"w", 4, 110_000, engines.Emitted, 110_000}, // to 110 s
		{"y", 5, 105_000, engines.DroppedDuplicate, 110_000},
		{"v", 6, 110_001, engines.Emitted, 110_000},
		{"y", 7, 105_000, engines.Emitted, 110_001},
	}
	for i, s := range steps {
		if got := op.Process([]byte(s.key), s.proc, s.ts); got != s.want || op.Watermark() != s.watermark {
			t.Fatalf("step %d (%s@%d): %v at watermark %d, want %v at %d", i, s.key, s.ts, got, op.Watermark(), s.want, s.watermark)
		}
	}
	// x fired, then y (timer 110 s) at the watermark 110.001 s.
	if op.TimersFired() != 2 {
		t.Errorf("%d timers fired, want 2", op.TimersFired())
	}
}
