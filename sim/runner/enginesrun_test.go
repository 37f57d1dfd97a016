package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

const enginesScenario = `name: engines
seed: 3
duration: 3m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: spark
    query: dropDuplicates(["event_id"])
  - name: kstreams
    engine: kafka-streams
    window: 2 minutes
    time: stream
  - name: beam
    engine: beam
    timeDomain: processing
    duration: 1 minute
  - name: beam-event
    engine: beam
    timeDomain: event
    duration: 1 minute
`

// engineRows are the rows of TestKafkaStreamsAndBeamInARun: four events
// with int ids, each copy carrying its event's first arrival as event
// time. In seconds after start, arrival: event (event time):
//
//	r1 1: e0 (1)    r2 30: e0 (1)    r3 50: e1 (50)    r4 100: e2 (100)
//	r5 105: e0 (1)  r6 130: e1 (50)  r7 170: e3 (170)  r8 175: e1 (50)
func engineRows(start int64) [][]int64 {
	return [][]int64{{1000, 30000, 105000}, {50000, 130000, 175000}, {100000}, {170000}}
}

// TestKafkaStreamsAndBeamInARun runs a Spark, a Kafka Streams and two
// Beam queries on engineRows (8 rows, 4 events, 4 true duplicates) and
// checks every counter against a derivation by hand (times in seconds
// after start, which is a whole minute, so the window store's 60 s
// segments start at whole minutes too).
//
// Spark, dropDuplicates(["event_id"]): keeps every key; emits r1 r3 r4
// r7, drops the 4 copies; state 1 1 2 3 3 3 4 4 at the 8 samples.
//
// Kafka Streams, W = 120 s, stream time st (the largest event time so
// far, the record's included); each record looks up [st-60, st+60] and
// puts (id, st):
//
//	r1 st 1: emit, put e0@1      r2 st 1: e0@1 found, drop
//	r3 st 50: emit, e1@50        r4 st 100: emit, e2@100
//	r5 st 100: [40,160] misses e0@1: emit (missed), put e0@100
//	r6 st 100: e1@50 found: drop, put e1@100
//	r7 st 170: emit, e3@170
//	r8 st 170: [110,230] misses e1@50 and e1@100: emit (missed), e1@170
//
// Visible rows have ts >= st - 120 + 1; segment 0 ([0, 60)) lives while
// (st - 120) / 60 truncates to 0: logical 1 1 2 3 4 5 4 5, physical
// 1 1 2 3 4 5 6 7, no put dropped.
//
// Beam, processing time (the arrival), d = 60 s; a timer set for T fires
// once processing time is past T, at a row's arrival or a sample:
//
//	r1: emit, e0 timer 61    r2: drop      r3: emit, e1 timer 110
//	r4 100: e0 fires; emit, e2 timer 160
//	r5 105: emit (missed), e0 timer 165
//	r6 130: e1 fires; emit (missed), e1 timer 190
//	r7 170: e2, e0 fire; emit, e3 timer 230     r8 175: drop
//
// State 1 1 2 2 3 3 2 2, 4 timers fired.
//
// Beam, event time, d = 60 s: the watermark is the largest event time of
// the rows before (at a sample, of all rows so far), the timer the
// watermark + 60 s (Beam's minimum + 60 s before the first row's):
//
//	r1: emit, e0 timer min+60; sample 10: watermark 1 fires it
//	r2: emit (missed), e0 timer 61     r3: emit, e1 timer 61
//	r4: watermark 50; emit, e2 timer 110; sample 100: e0, e1 fire
//	r5: watermark 100: emit (missed), e0 timer 160
//	r6: emit (missed), e1 timer 160    r7: emit, e3 timer 160
//	sample 170: watermark 170 fires e2, e0, e1, e3
//	r8: emit (missed), e1 timer 230
//
// State 0 1 2 1 2 3 0 1, 7 timers fired, every row emitted.
func TestKafkaStreamsAndBeamInARun(t *testing.T) {
	sc := load(t, enginesScenario)
	rows := retryRows(sc.Start.UnixMicro(), engineRows(0))
	res, err := Run(context.Background(), sc, Options{
		Workers: 2,
		hooks: testHooks{NewSource: func(*scenario.Scenario) (Source, error) {
			return &listSource{rows: rows}, nil
		},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	type totals struct {
		InputRows, LogicalEvents, TrueDuplicates, EmittedRows, MissedDuplicates, FalseDrops, DroppedDuplicates, Batches, SinkWrites, PeakStateRows, FinalStateRows int64
	}
	want := map[string]totals{
		"spark":      {8, 4, 4, 4, 0, 0, 4, 8, 4, 4, 4},
		"kstreams":   {8, 4, 4, 6, 2, 0, 2, 8, 6, 5, 5},
		"beam":       {8, 4, 4, 6, 2, 0, 2, 8, 6, 3, 2},
		"beam-event": {8, 4, 4, 8, 4, 0, 0, 8, 8, 3, 1},
	}
	wantStates := map[string][]int64{
		"spark":      {1, 1, 2, 3, 3, 3, 4, 4},
		"kstreams":   {1, 1, 2, 3, 4, 5, 4, 5},
		"beam":       {1, 1, 2, 2, 3, 3, 2, 2},
		"beam-event": {0, 1, 2, 1, 2, 3, 0, 1},
	}
	wantCounters := map[string]map[string]int64{
		"kstreams":   {"peakPhysicalStateRows": 7, "finalPhysicalStateRows": 7, "droppedRecordsTotal": 0},
		"beam":       {"peakPhysicalStateRows": 3, "finalPhysicalStateRows": 2, "timersFired": 4},
		"beam-event": {"peakPhysicalStateRows": 3, "finalPhysicalStateRows": 1, "timersFired": 7},
	}
	wantStore := map[string]string{"spark": "memory", "kstreams": "rocksdb-window-store", "beam": "direct-runner", "beam-event": "direct-runner"}
	wantQuery := map[string]string{
		"kstreams":   `{"engine":"kafka-streams","window":"2m","time":"stream"}`,
		"beam":       `{"engine":"beam","timeDomain":"processing","duration":"1m"}`,
		"beam-event": `{"engine":"beam","timeDomain":"event","duration":"1m"}`,
	}
	for _, q := range res.Summary.Queries {
		got := totals{q.InputRows, q.LogicalEvents, q.TrueDuplicates, q.EmittedRows, q.MissedDuplicates, q.FalseDrops, q.DroppedDuplicates, q.Batches, q.SinkWrites, q.PeakStateRows, q.FinalStateRows}
		if got != want[q.Name] {
			t.Errorf("%s: summary\n got %+v\nwant %+v", q.Name, got, want[q.Name])
		}
		if !maps.Equal(q.EngineCounters, wantCounters[q.Name]) {
			t.Errorf("%s: engineCounters %v, want %v", q.Name, q.EngineCounters, wantCounters[q.Name])
		}
		if q.Store != wantStore[q.Name] {
			t.Errorf("%s: store %q, want %q", q.Name, q.Store, wantStore[q.Name])
		}
		if w, ok := wantQuery[q.Name]; ok && q.Query != w {
			t.Errorf("%s: query %s, want %s", q.Name, q.Query, w)
		}
		if q.Name != "spark" && len(q.Warnings) == 0 {
			t.Errorf("%s: no warnings; want explain's", q.Name)
		}
	}
	recs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string][]int64{}
	for _, r := range recs {
		states[r.Query] = append(states[r.Query], r.StateRows)
	}
	for name, w := range wantStates {
		if !equalInts(states[name], w) {
			t.Errorf("%s: state at the samples %v, want %v", name, states[name], w)
		}
	}
	// The progress lines carry the physical rows and the engine's own
	// counters at each sample.
	op := lastStateOperator(t, res, "kstreams")
	if op.OperatorName != "FindDistinctEvents" || op.NumRowsTotal != 5 || op.CustomMetrics["numPhysicalEntries"] != 7 || op.CustomMetrics["droppedRecordsTotal"] != 0 {
		t.Errorf("kstreams' last progress line: %+v; want FindDistinctEvents, 5 rows, 7 physical, droppedRecordsTotal 0", op)
	}
}

// TestKafkaStreamsRecordTimeDropsLatePuts runs the record-time processor
// (W = 120 s) on rows whose last copy comes back with an event time
// older than the store keeps: in seconds after start, e0 at 1 (event
// time 1), e1 at 200 (200), a copy of e0 at 210 (1). The copy's lookup,
// [1-60, 1+60] raised to 200 - 120 + 1 = 81, finds nothing: emitted, a
// missed duplicate; its put into segment 0 is dropped, since segment
// (200 - 120) / 60 = 1 is the oldest live one: droppedRecordsTotal 1.
// Segment 0 itself went at e1's put, so no sample sees two rows: physical
// rows 1 at every sample.
func TestKafkaStreamsRecordTimeDropsLatePuts(t *testing.T) {
	sc := load(t, strings.Replace(strings.Replace(enginesScenario, "time: stream", "time: record", 1), "duration: 3m", "duration: 4m", 1))
	rows := retryRows(sc.Start.UnixMicro(), [][]int64{{1000, 210000}, {200000}})
	res, err := Run(context.Background(), sc, Options{
		Workers: 1,
		hooks: testHooks{NewSource: func(*scenario.Scenario) (Source, error) {
			return &listSource{rows: rows}, nil
		},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	q := res.Summary.Queries[1]
	if q.Name != "kstreams" || q.EmittedRows != 3 || q.MissedDuplicates != 1 || q.FinalStateRows != 1 ||
		!maps.Equal(q.EngineCounters, map[string]int64{"droppedRecordsTotal": 1, "peakPhysicalStateRows": 1, "finalPhysicalStateRows": 1}) {
		t.Errorf("%s: emitted %d, missed %d, final state %d, counters %v; want 3, 1, 1, dropped 1, physical peak and final 1",
			q.Name, q.EmittedRows, q.MissedDuplicates, q.FinalStateRows, q.EngineCounters)
	}
	if !strings.Contains(q.Query, `"time":"record"`) {
		t.Errorf("query %s, want record time", q.Query)
	}
}

// TestEngineQueriesRefused checks that what a Kafka Streams or Beam query
// cannot run with is refused in one line naming the query and the key,
// as a Flink query's is, and that a resumable run is refused before its
// checkpoint folder is written.
func TestEngineQueriesRefused(t *testing.T) {
	for _, c := range []struct{ edit, repl, want string }{
		{"queries:", "faults: [{at: 1m, kind: restart}]\nqueries:", "faults[0].kind: must not be restart with a kafka-streams query (queries[1]): not yet supported"},
		{"queries:", "faults: [{at: 1m, kind: lose-checkpoint}]\nqueries:", "faults[0].kind: must not be lose-checkpoint with a kafka-streams query (queries[1])"},
		{"queries:", "sink: {failureProbability: 0.1}\nqueries:", "sink.failureProbability: must be 0 with a kafka-streams query (queries[1])"},
		{"queries:", "spark: {partitions: 2}\nqueries:", "spark: must be left out with a kafka-streams query (queries[1]): it models Spark's cluster"},
		{"    time: stream", "    time: stream\n    store: pebble", "queries[1].store: must be left out for a kafka-streams query (its state is a persistent (RocksDB) window store, in the model), got pebble"},
		{"    timeDomain: processing", "    timeDomain: processing\n    store: memory", "queries[2].store: must be left out for a beam query (its state is the DirectRunner's in-memory state, in the model), got memory"},
		{"    time: stream", "    time: stream\n    query: x", "queries[1].query: must be left out for a kafka-streams query (it takes window, time, partitions, mode, form and punctuate)"},
		{"    timeDomain: processing", "    timeDomain: processing\n    window: 1 minute", "queries[2].window: must be {fixed: DURATION} for a beam query (fixed windows of that size; left out, the global window), got 1m"},
		{"    window: 2 minutes", "", "queries[1].window: must be set to the window store's retention and window size W"},
		{"time: stream", "time: wall", "queries[1].time: must be stream (the task's stream time), record (the record's timestamp) or wall-clock (a key-value store purged by a wall-clock punctuation), got wall"},
		{"timeDomain: processing", "timeDomain: wall", "queries[2].timeDomain: must be processing (Beam's default) or event, got wall"},
		{"duration: 1 minute", "duration: 0s", "queries[2].duration: must be at least 1 ms, got 0s"},
	} {
		_, err := scenario.Parse([]byte(strings.Replace(enginesScenario, c.edit, c.repl, 1)), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%q -> %q: got %v, want one line containing %q", c.edit, c.repl, err, c.want)
		}
	}
	dir := t.TempDir() + "/ck"
	_, err := Run(context.Background(), load(t, strings.Replace(enginesScenario, "  - name: spark\n    query: dropDuplicates([\"event_id\"])\n", "", 1)), Options{Workers: 1, CheckpointDir: dir})
	if err == nil || !strings.Contains(err.Error(), "queries kstreams: a kafka-streams query cannot yet run in a resumable run") {
		t.Fatalf("got %v, want the resumable run refused", err)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("%s was written: %v", dir, statErr)
	}
}

// TestKafkaStreamsAndBeamAgainstNaiveModels runs a seeded scenario with
// retries (several copies, jittered timestamps) and future timestamps
// through a Kafka Streams and two Beam queries and compares each with a
// deliberately naive model of its rule, written from docs/kafka-streams.md
// and docs/beam.md over the same generated rows:
//
//   - Kafka Streams, stream time st = the largest event time so far: a
//     record is a duplicate when its id's last stored time is at least
//     st - W/2 (stored times never exceed st), and (id, st) is stored;
//     logical rows are the (id, t) stored with t >= st - W + 1, physical
//     those whose segment t / max(W/2, 60 s) is at least (st - W) / it.
//   - Beam: a map of seen ids to timers, every advance scanning it; in
//     processing time the clock is the arrival, in event time the largest
//     event time of the rows before (at a sample: of every row so far),
//     a timer the clock + d (the minimum + d before the first row).
//
// Totals, every sample's state, the physical rows and the fired timers
// must agree.
func TestKafkaStreamsAndBeamAgainstNaiveModels(t *testing.T) {
	const wMs, dMs, segMs = 90_000, 45_000, 60_000
	sc := load(t, `name: engines-naive
seed: 21
duration: 10m
trigger: 10s
workload:
  rate: 20/s
  ids: int
  retries:
    probability: 0.3
    copies: {dist: geometric, mean: 2}
    delay: {dist: lognormal, median: 30s, p99: 4m}
    timestamp: jitter
    jitter: 20s
  futureTimestamps:
    probability: 0.002
    skew: {dist: uniform, min: 1m, max: 20m}
queries:
  - name: kstreams
    engine: kafka-streams
    window: 90 seconds
  - name: beam
    engine: beam
    duration: 45 seconds
  - name: beam-event
    engine: beam
    timeDomain: event
    duration: 45 seconds
`)
	res, err := Run(context.Background(), sc, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	recs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}

	type model struct {
		emitted, missed, dropped, fired int64
		emittedEvent                    map[uint64]bool
		states, physical                []int64
	}
	newModel := func() *model { return &model{emittedEvent: map[uint64]bool{}} }
	ks, bp, be := newModel(), newModel(), newModel()
	verdict := func(m *model, r *generators.Row, dup bool) {
		if dup {
			m.dropped++
			return
		}
		m.emitted++
		if m.emittedEvent[r.Truth.Event] {
			m.missed++
		}
		m.emittedEvent[r.Truth.Event] = true
	}
	// Kafka Streams.
	st := int64(-1)
	last := map[int64]int64{}
	stored := map[[2]int64]bool{}
	// Beam.
	procTimers, eventTimers := map[int64]int64{}, map[int64]int64{}
	const minTS = -9223372036854775
	wm, maxEvent := int64(minTS), int64(minTS)
	fire := func(m *model, timers map[int64]int64, now int64) {
		for k, at := range timers {
			if now > at {
				delete(timers, k)
				m.fired++
			}
		}
	}

	g, err := generators.New(sc.Generator())
	if err != nil {
		t.Fatal(err)
	}
	var r generators.Row
	has := g.Next(&r)
	trig := sc.Trigger.Micros()
	for tr := sc.Start.UnixMicro() + trig; has; tr += trig {
		arrived := false
		for has && r.Arrival <= tr {
			arrived = true
			ts, at := r.EventTime/1000, r.Arrival/1000
			st = max(st, ts)
			l, ok := last[r.EventNum]
			verdict(ks, &r, ok && l >= st-wMs/2)
			last[r.EventNum] = st
			stored[[2]int64{r.EventNum, st}] = true

			fire(bp, procTimers, at)
			_, seen := procTimers[r.EventNum]
			verdict(bp, &r, seen)
			if !seen {
				procTimers[r.EventNum] = at + dMs
			}

			wm = max(wm, maxEvent)
			fire(be, eventTimers, wm)
			_, seen = eventTimers[r.EventNum]
			verdict(be, &r, seen)
			if !seen {
				eventTimers[r.EventNum] = wm + dMs
			}
			maxEvent = max(maxEvent, ts)
			has = g.Next(&r)
		}
		if !arrived {
			continue
		}
		var logical, physical int64
		for p := range stored {
			if p[1] >= st-wMs+1 {
				logical++
			}
			if p[1]/segMs >= (st-wMs)/segMs {
				physical++
			}
		}
		ks.states, ks.physical = append(ks.states, logical), append(ks.physical, physical)
		fire(bp, procTimers, tr/1000)
		bp.states = append(bp.states, int64(len(procTimers)))
		wm = max(wm, maxEvent)
		fire(be, eventTimers, wm)
		be.states = append(be.states, int64(len(eventTimers)))
	}

	byQuery := map[string][]metrics.BatchRecord{}
	for _, rec := range recs {
		byQuery[rec.Query] = append(byQuery[rec.Query], rec)
	}
	for i, m := range []*model{ks, bp, be} {
		q := res.Summary.Queries[i]
		if q.EmittedRows != m.emitted || q.MissedDuplicates != m.missed || q.DroppedDuplicates != m.dropped || q.FalseDrops != 0 {
			t.Errorf("%s: emitted %d, missed %d, dropped %d, false drops %d; naive model: emitted %d, missed %d, dropped %d, none",
				q.Name, q.EmittedRows, q.MissedDuplicates, q.DroppedDuplicates, q.FalseDrops, m.emitted, m.missed, m.dropped)
		}
		if m.missed == 0 || m.dropped == 0 {
			t.Errorf("%s: the scenario shows nothing: %d missed, %d dropped", q.Name, m.missed, m.dropped)
		}
		if i > 0 && q.EngineCounters["timersFired"] != m.fired {
			t.Errorf("%s: %d timers fired, naive model %d", q.Name, q.EngineCounters["timersFired"], m.fired)
		}
		var states []int64
		for _, rec := range byQuery[q.Name] {
			states = append(states, rec.StateRows)
		}
		if !equalInts(states, m.states) {
			t.Errorf("%s: state at the samples differs from the naive model's (%d and %d samples)", q.Name, len(states), len(m.states))
		}
		t.Logf("%s: %d rows: %d emitted, %d missed, %d dropped, %d samples", q.Name, q.InputRows, m.emitted, m.missed, m.dropped, len(m.states))
	}
	prog, err := res.Progress("kstreams")
	if err != nil {
		t.Fatal(err)
	}
	var physical []int64
	for _, line := range bytes.Split(bytes.TrimSpace(prog), []byte("\n")) {
		var p metrics.ProgressLine
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatal(err)
		}
		physical = append(physical, p.StateOperators[0].CustomMetrics["numPhysicalEntries"])
	}
	if !equalInts(physical, ks.physical) {
		t.Errorf("kstreams: physical rows at the samples differ from the naive model's")
	}
}

// progressOperator is the first state operator of a progress line, as the
// engine tests read it.
type progressOperator struct {
	OperatorName  string
	NumRowsTotal  int64
	CustomMetrics map[string]int64
}

// lastStateOperator returns the first state operator of query's last
// progress line.
func lastStateOperator(t *testing.T, res *Results, query string) progressOperator {
	t.Helper()
	prog, err := res.Progress(query)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(prog), []byte("\n"))
	var last struct{ StateOperators []progressOperator }
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
		t.Fatal(err)
	}
	if len(last.StateOperators) == 0 {
		t.Fatalf("%s: the last progress line has no state operator", query)
	}
	return last.StateOperators[0]
}
