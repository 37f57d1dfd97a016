package beam

import (
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/beam"
)

// TestScenarioQueryTextIsAQuery checks that the query object a scenario's
// results show is one `simulate explain` takes, and means the same query.
func TestScenarioQueryTextIsAQuery(t *testing.T) {
	for _, q := range []*Trace{ScenarioQuery(beam.ProcessingTime, beam.DefaultDuration, 0, 0), ScenarioQuery(beam.EventTime, 1, 0, 0), ScenarioQuery(beam.EventTime, 61_500, 0, 0),
		ScenarioQuery(beam.EventTime, 60_000, 60_000, 0), ScenarioQuery(beam.ProcessingTime, 1_000, 90_500, 5_000)} {
		back, err := LoadQuery([]byte(q.QueryText()))
		if err != nil {
			t.Fatalf("%s: %v", q.QueryText(), err)
		}
		if back.Domain != q.Domain || back.Duration != q.Duration || back.Window != q.Window || back.Lateness != q.Lateness {
			t.Errorf("%s loads as %+v, want %+v", q.QueryText(), back, q)
		}
	}
}

// TestScenarioOperatorWorkedExample runs the worked example of
// ScenarioOperator (event time, d = 10 s): x@100 s, y@105 s, then copies
// of y while the watermark is 110 s and 110.001 s.
func TestScenarioOperatorWorkedExample(t *testing.T) {
	op, err := ScenarioQuery(beam.EventTime, 10_000, 0, 0).NewScenarioOperator()
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

// TestScenarioOperatorFixedWindows runs the fixed-window worked example of
// ScenarioOperator.Process (windows of 60 s, allowed lateness 0, event
// time, d = 1 min): w@10 s, x@50 s, y@70 s, then a copy of x@50 s
// arriving at 80 s with the watermark at 70 s: dropped as late, not
// ahead of its arrival. With 30 s of allowed lateness the copy is a
// duplicate (x's timer is 10 + 60 = 70 s, not yet fired at watermark 70).
func TestScenarioOperatorFixedWindows(t *testing.T) {
	for _, c := range []struct {
		lateness int64
		want     engines.Outcome
		late     int64
	}{{0, engines.DroppedLate, 1}, {30_000, engines.DroppedDuplicate, 0}} {
		op, err := ScenarioQuery(beam.EventTime, 60_000, 60_000, c.lateness).NewScenarioOperator()
		if err != nil {
			t.Fatal(err)
		}
		if o := op.Process([]byte("w"), 10_000, 10_000); o != engines.Emitted {
			t.Fatalf("w: %v", o)
		}
		if o := op.Process([]byte("x"), 50_000, 50_000); o != engines.Emitted {
			t.Fatalf("x: %v", o)
		}
		if o := op.Process([]byte("y"), 70_000, 70_000); o != engines.Emitted {
			t.Fatalf("y: %v", o)
		}
		if o := op.Process([]byte("x"), 80_000, 50_000); o != c.want || op.LateAhead() || op.DroppedLate() != c.late {
			t.Errorf("lateness %d: x copy %v, ahead %v, late %d; want %v, not ahead, %d", c.lateness, o, op.LateAhead(), op.DroppedLate(), c.want, c.late)
		}
	}
	// A bad clock: z@600 s arrives at 90 s; x@95 s arriving at 95 s is
	// then late behind a watermark ahead of its arrival.
	op, _ := ScenarioQuery(beam.EventTime, 60_000, 60_000, 0).NewScenarioOperator()
	op.Process([]byte("z"), 90_000, 600_000)
	if o := op.Process([]byte("x"), 95_000, 95_000); o != engines.DroppedLate || !op.LateAhead() {
		t.Errorf("x behind the bad clock: %v, ahead %v; want DroppedLate, ahead", o, op.LateAhead())
	}
}
