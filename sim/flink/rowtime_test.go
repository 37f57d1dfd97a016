package flink

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	ef "github.com/dedupsim/dedupsim/engines/flink"
)

const rowTimeFirstSQL = "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ASC) AS rn FROM events) WHERE rn = 1"

// TestScenarioWatermarkAssigner drives the 2.3 rowtime keep-first
// (RowTimeDeduplicateKeepFirstRowFunction) behind the SQL watermark
// assigner (delay 5 s, auto-watermark interval 200 ms, opened at 0). By
// hand (arrival/event time in ms; the assigner's watermark starts at 0):
//
//	1 a 1000/10000: not late (no watermark yet), waits; the watermark
//	  rises to 5000, more than 200 above 0: emitted after the row.
//	2 b 1100/10150: waits; the watermark 5150 is only 150 above 5000:
//	  held for the timer.
//	3 a 1150/5100: 5100 >= 5000, not late; earlier than a's waiting
//	  10000: replaces row 1 (row 1: DroppedDuplicate), waits.
//	4 d 1200/5100: the tick at 1200 fires before the row and emits
//	  5150, which fires a's timer (5100): row 3 Emitted; then 5100 <
//	  5150: d dropped late (numLateRecordsDropped 1).
//	5 f 1300/15600: waits; the watermark 10600 is 5450 above 5150:
//	  emitted after the row; b's timer (10150) fires: row 2 Emitted.
//	end at 2000: the maximum watermark fires f's timer: row 5 Emitted.
func TestScenarioWatermarkAssigner(t *testing.T) {
	sq, err := ParseScenarioQuery(rowTimeFirstSQL, map[string]string{OptWatermark: "5 s"})
	if err != nil {
		t.Fatal(err)
	}
	if sq.Watermark != (Watermark{Delay: 5000, Interval: 200}) {
		t.Fatalf("watermark %+v, want delay 5000 and the default interval 200", sq.Watermark)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	if op.Function() != "RowTimeDeduplicateKeepFirstRowFunction" || !op.Defers() {
		t.Fatalf("function %s (defers %v)", op.Function(), op.Defers())
	}
	op.Open(0)
	type step struct {
		key          string
		proc, event  int64
		want         engines.Outcome
		deferred     bool
		wantVerdicts []Verdict
	}
	D, E, L := engines.DroppedDuplicate, engines.Emitted, engines.DroppedLate
	for i, s := range []step{
		{"a", 1000, 10000, D, true, nil},
		{"b", 1100, 10150, D, true, nil},
		{"a", 1150, 5100, D, true, []Verdict{{1, D}}},
		{"d", 1200, 5100, L, false, []Verdict{{3, E}}},
		{"f", 1300, 15600, D, true, []Verdict{{2, E}}},
	} {
		got, _ := op.Process([]byte(s.key), nil, s.proc, s.event)
		v := op.Verdicts(nil)
		if got != s.want || op.Deferred() != s.deferred || !slices.Equal(v, s.wantVerdicts) {
			t.Errorf("row %d: %v (deferred %v), verdicts %v; want %v (deferred %v), %v", i+1, got, op.Deferred(), v, s.want, s.deferred, s.wantVerdicts)
		}
	}
	if op.LateDropped() != 1 {
		t.Errorf("numLateRecordsDropped %d, want 1", op.LateDropped())
	}
	op.End(2000)
	if v := op.Verdicts(nil); !slices.Equal(v, []Verdict{{5, E}}) {
		t.Errorf("at the end: verdicts %v, want row 5 emitted", v)
	}
	// The flags of a, b and f: no TTL, all live; no row waits.
	if l, p := op.State(2000); l != 3 || p != 3 {
		t.Errorf("state %d/%d, want 3/3", l, p)
	}
}

// TestScenarioTickBeforeRow: a watermark held back is emitted by the
// first tick after it (at 1200), not by a later one, so the flags the
// timers write carry that TTL time: with a TTL of 1000 ms, a's flag,
// written at 1200, has expired at 2200 but not at 2199.
func TestScenarioTickBeforeRow(t *testing.T) {
	sq, err := ParseScenarioQuery(rowTimeFirstSQL, map[string]string{OptWatermark: "0 s", OptStateTTL: "1000 ms"})
	if err != nil {
		t.Fatal(err)
	}
	op, _ := sq.NewOperator()
	op.Open(0)
	op.Process([]byte("z"), nil, 1000, 1000) // watermark 1000, eager: z's timer fires at once
	op.Process([]byte("a"), nil, 1100, 1100) // waits; 1100 is 100 above 1000: held
	if v := op.Verdicts(nil); !slices.Equal(v, []Verdict{{1, engines.Emitted}}) {
		t.Fatalf("verdicts %v, want row 1 emitted at once (delay 0)", v)
	}
	if l, _ := op.State(2199); l != 1 {
		t.Errorf("at 2199: %d live entries, want a's flag (written at the tick at 1200)", l)
	}
	if v := op.Verdicts(nil); !slices.Equal(v, []Verdict{{2, engines.Emitted}}) {
		t.Errorf("verdicts %v, want row 2 emitted by the tick", v)
	}
	if l, _ := op.State(2200); l != 0 {
		t.Errorf("at 2200: %d live entries, want none (1200 + 1000 <= 2200)", l)
	}
}

// TestScenarioRowTimeOptions: a rowtime query needs the watermark; a
// proctime one refuses it; mini-batch needs its allow-latency, each in
// one line.
func TestScenarioRowTimeOptions(t *testing.T) {
	for _, c := range []struct {
		sql  string
		opts map[string]string
		want string
	}{
		{rowTimeFirstSQL, nil, "ORDER BY event_time needs option watermark, the delay d of the table's WATERMARK FOR event_time AS event_time - INTERVAL d"},
		{rowTimeFirstSQL, map[string]string{OptWatermark: "soon"}, `option watermark: "soon" is not a duration`},
		{rowTimeFirstSQL, map[string]string{OptWatermark: "5 s", OptWatermarkInterval: "x"}, `option pipeline.auto-watermark-interval: "x" is not a duration`},
		{keepFirstSQL, map[string]string{OptWatermark: "5 s"}, "option watermark: only a rowtime query (ORDER BY event_time) reads a watermark; this one orders by proc_time"},
		{rowTimeFirstSQL, map[string]string{OptWatermark: "5 s", OptMiniBatch: "true", OptMiniBatchSize: "10"}, "option table.exec.mini-batch.allow-latency must be above 0"},
	} {
		_, err := ParseScenarioQuery(c.sql, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %v, want one line containing %q", c.opts, err, c.want)
		}
	}
	for v, fn := range map[string]ef.Function{"2.0": ef.RowTimeChangelog, "2.1": ef.RowTimeKeepFirstInsertOnly, "2.3": ef.RowTimeKeepFirstInsertOnly} {
		sq, err := ParseScenarioQuery(rowTimeFirstSQL, map[string]string{OptWatermark: "5 s", OptVersion: v, OptWatermarkInterval: "1 s"})
		if err != nil || sq.Config.Function() != fn || sq.Watermark.Interval != 1000 {
			t.Errorf("version %s: %v, %+v, want %s", v, err, sq.Watermark, fn.ClassName())
		}
	}
}

// TestScenarioWatermarksOfTheCase feeds the rows of the case
// own-rowtime-keep-first-scenario-watermarks-2.3 (sim/runner's
// TestFlinkRowTimeInARun stream shifted by 100 s) through the scenario
// operator and checks that its watermark assigner emits the watermarks
// the case gives to Flink's harness, after the rows the case puts them
// after (the notes derive them).
func TestScenarioWatermarksOfTheCase(t *testing.T) {
	sq, err := ParseScenarioQuery(rowTimeFirstSQL, map[string]string{OptWatermark: "5 s", OptStateTTL: "60 s"})
	if err != nil {
		t.Fatal(err)
	}
	op, _ := sq.NewOperator()
	op.Open(100000)
	const S = 100000
	for _, r := range []struct {
		id            string
		ts, arrival   int64
		wantWatermark int64 // the dedup's watermark after the row
	}{
		{"e0", 1000, 1000, S - 4000}, {"e1", 2000, 2000, S - 3000}, {"e1", 2000, 2500, S - 3000}, {"e0", 1000, 3000, S - 3000},
		{"e3", 8000, 8000, S + 3000}, {"e2", 500, 9000, S + 3000}, {"e0", 1000, 20000, S + 3000}, {"e3", 8000, 30000, S + 3000},
		{"e5", 40500, 40600, S + 35500}, {"e5", 40000, 41000, S + 35500}, {"e4", 115000, 115000, S + 110000},
	} {
		op.Process([]byte(r.id), nil, S+r.arrival, S+r.ts)
		if got := op.op.CurrentWatermark(); got != r.wantWatermark {
			t.Errorf("after %s at %d: watermark %d, want %d", r.id, r.arrival, got, r.wantWatermark)
		}
	}
	if l, p := op.State(S + 120000); l != 2 || p != 5 || op.LateDropped() != 2 {
		t.Errorf("state %d/%d, late %d; want 2/5 and 2 (the case's step 27)", l, p, op.LateDropped())
	}
}

// TestScenarioRowTimeAllocatesNothingPerRow: a rowtime keep-first row
// (waiting, duplicate, late, fired by a watermark) allocates nothing once
// the state, the timer heap and the verdicts have their size.
func TestScenarioRowTimeAllocatesNothingPerRow(t *testing.T) {
	sq, err := ParseScenarioQuery(rowTimeFirstSQL, map[string]string{OptWatermark: "2 s", OptStateTTL: "10 s"})
	if err != nil {
		t.Fatal(err)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	op.Open(0)
	key := make([]byte, 36)
	var verdicts []Verdict
	i, fired := int64(0), 0
	step := func() {
		k := i
		if i%4 == 0 {
			k = i - 3
		}
		binary.BigEndian.PutUint64(key, uint64(k))
		// Event times 0-3 s behind the arrival: some rows late.
		op.Process(key, nil, 1_000_000+i*50, 1_000_000+i*50-(i*7919)%3000)
		verdicts = op.Verdicts(verdicts[:0])
		for _, v := range verdicts {
			if v.Outcome == engines.Emitted {
				fired++
			}
		}
		if i%50 == 0 {
			op.State(1_000_000 + i*50)
		}
		i++
	}
	for range 20_000 {
		step()
	}
	if op.LateDropped() == 0 || fired == 0 {
		t.Fatalf("%d rows late, %d emitted by a watermark: the test does not cover both", op.LateDropped(), fired)
	}
	if a := testing.AllocsPerRun(2000, step); a != 0 {
		t.Errorf("%v allocations per row", a)
	}
}
