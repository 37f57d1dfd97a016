package runner

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

const wallClockScenario = `name: wall-clock
seed: 3
duration: 3m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: wallclock
    engine: kafka-streams
    window: 1 minute
    time: wall-clock
    punctuate: 30s
`

// TestKafkaStreamsWallClockInARun runs the Kafka Streams wall-clock fix
// (W = 60 s, P = 30 s) on engineRows (8 rows, 4 events, 4 true
// duplicates; see TestKafkaStreamsAndBeamInARun) and checks every counter
// against a derivation by hand, the one of
// sim/kstreams/testdata/cases/own-scenario-wall-clock-rows-at-arrival
// (which Kafka Streams' TopologyTestDriver checks). The wall clock is the
// arrival; the task starts at r1's (1 s), so punctuations are due from
// 31 s. In seconds after start, a punctuation at now deletes the keys
// first seen at or before now - 60:
//
//	r1 1: e0 new          r2 30: drop
//	r3 50: punctuation (e0 49 s old, kept), next 61; e1 new
//	r4 100: punctuation deletes e0; 91 is past: next 121 (the grid); e2 new
//	r5 105: e0 new (missed)
//	r6 130: punctuation deletes e1 (seen 50); next 151; e1 new (missed)
//	r7 170: punctuation deletes e0 (105) and e2 (100); next 181; e3 new
//	r8 175: e1 (130) found: drop; sample 180: none due
//
// Emitted 6, missed 2, dropped 2; state at the samples 10, 30, 50, 100,
// 110, 130, 170, 180: 1 1 2 2 3 3 2 2; 4 punctuations.
func TestKafkaStreamsWallClockInARun(t *testing.T) {
	sc := load(t, wallClockScenario)
	rows := retryRows(sc.Start.UnixMicro(), engineRows(0))
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
	type totals struct {
		InputRows, LogicalEvents, TrueDuplicates, EmittedRows, MissedDuplicates, FalseDrops, DroppedDuplicates, Batches, SinkWrites, PeakStateRows, FinalStateRows int64
	}
	if len(res.Summary.Queries) != 1 {
		t.Fatalf("%d queries, want 1", len(res.Summary.Queries))
	}
	q := res.Summary.Queries[0]
	got := totals{q.InputRows, q.LogicalEvents, q.TrueDuplicates, q.EmittedRows, q.MissedDuplicates, q.FalseDrops, q.DroppedDuplicates, q.Batches, q.SinkWrites, q.PeakStateRows, q.FinalStateRows}
	if want := (totals{8, 4, 4, 6, 2, 0, 2, 8, 6, 3, 2}); got != want {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
	if w := map[string]int64{"peakPhysicalStateRows": 3, "finalPhysicalStateRows": 2, "punctuations": 4}; !maps.Equal(q.EngineCounters, w) {
		t.Errorf("engineCounters %v, want %v", q.EngineCounters, w)
	}
	const wantQuery = `{"engine":"kafka-streams","window":"1m","time":"wall-clock","punctuate":"30s"}`
	if q.Store != "rocksdb-kv-store" || q.Query != wantQuery || len(q.Warnings) == 0 {
		t.Errorf("store %q, query %s, warnings %q; want rocksdb-kv-store, %s and explain's", q.Store, q.Query, q.Warnings, wantQuery)
	}
	op := lastStateOperator(t, res, q.Name)
	if op.OperatorName != "WallClockPunctuatedDedup" || op.NumRowsTotal != 2 || op.CustomMetrics["numPhysicalEntries"] != 2 || op.CustomMetrics["punctuations"] != 4 {
		t.Errorf("last progress line %+v; want WallClockPunctuatedDedup, 2 rows, 2 physical, 4 punctuations", op)
	}
	recs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	var states []int64
	for _, r := range recs {
		states = append(states, r.StateRows)
	}
	if w := []int64{1, 1, 2, 2, 3, 3, 2, 2}; !equalInts(states, w) {
		t.Errorf("state at the samples %v, want %v", states, w)
	}
}

// TestWallClockRefusesAKeySplit: a run split by key refuses a wall-clock
// Kafka Streams query in one line (every part would fire the task's
// punctuations, so their counters would not sum), and splits the same
// scenario with a stream-time query.
func TestWallClockRefusesAKeySplit(t *testing.T) {
	err := CheckKeyShard(load(t, wallClockScenario))
	if err == nil || !strings.Contains(err.Error(), "punctuation") || strings.Contains(err.Error(), "\n") {
		t.Errorf("wall-clock: %v, want one line refusing the split for its punctuations", err)
	}
	stream := strings.Replace(strings.Replace(wallClockScenario, "time: wall-clock", "time: stream", 1), "    punctuate: 30s\n", "", 1)
	if err := CheckKeyShard(load(t, stream)); err != nil {
		t.Errorf("stream time: %v, want it split", err)
	}
}
