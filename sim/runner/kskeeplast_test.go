package runner

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

const keepLastScenario = `name: keep-last
seed: 3
duration: 3m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: totable
    engine: kafka-streams
    mode: keep-last
  - name: reduce
    engine: kafka-streams
    mode: keep-last
    form: reduce
`

// TestKafkaStreamsKeepLastInARun runs Kafka Streams keep-last, toTable
// and reduce, on engineRows (8 rows, 4 events, 4 true duplicates; see
// TestKafkaStreamsAndBeamInARun) and checks every counter against a
// derivation by hand. The table forwards every record as an upsert:
// every row is emitted (8 sink writes, one record each: no -U), and the
// copies after each event's first (r2, r5 of e0; r6, r8 of e1) are the 4
// missed duplicates, as a Flink keep-last +U is counted; nothing is
// dropped, so no false drop. The table holds every key ever seen,
// logical and physical alike: at the samples 10, 30, 50, 100, 110, 130,
// 170 and 180 s, 1 1 2 3 3 3 4 4 rows; peak and final 4. reduce differs
// only in the forwarded timestamp, which the accounting does not read.
func TestKafkaStreamsKeepLastInARun(t *testing.T) {
	sc := load(t, keepLastScenario)
	if q := sc.Queries[0]; q.Time != "" || q.Window != nil {
		t.Errorf("resolved keep-last query has time %q, window %v; want neither (no lookup time, no window)", q.Time, q.Window)
	}
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
	want := totals{8, 4, 4, 8, 4, 0, 0, 8, 8, 4, 4}
	wantQuery := map[string]string{
		"totable": `{"engine":"kafka-streams","mode":"keep-last","form":"toTable"}`,
		"reduce":  `{"engine":"kafka-streams","mode":"keep-last","form":"reduce"}`,
	}
	wantFunction := map[string]string{"totable": "KTableSource", "reduce": "KStreamReduce"}
	if len(res.Summary.Queries) != 2 {
		t.Fatalf("%d queries, want 2", len(res.Summary.Queries))
	}
	for _, q := range res.Summary.Queries {
		got := totals{q.InputRows, q.LogicalEvents, q.TrueDuplicates, q.EmittedRows, q.MissedDuplicates, q.FalseDrops, q.DroppedDuplicates, q.Batches, q.SinkWrites, q.PeakStateRows, q.FinalStateRows}
		if got != want {
			t.Errorf("%s: summary\n got %+v\nwant %+v", q.Name, got, want)
		}
		if w := map[string]int64{"peakPhysicalStateRows": 4, "finalPhysicalStateRows": 4}; !maps.Equal(q.EngineCounters, w) {
			t.Errorf("%s: engineCounters %v, want %v", q.Name, q.EngineCounters, w)
		}
		if q.Store != "rocksdb-kv-store" || q.Query != wantQuery[q.Name] || len(q.Warnings) == 0 {
			t.Errorf("%s: store %q, query %s, warnings %q; want rocksdb-kv-store, %s and explain's", q.Name, q.Store, q.Query, q.Warnings, wantQuery[q.Name])
		}
		op := lastStateOperator(t, res, q.Name)
		if op.OperatorName != wantFunction[q.Name] || op.NumRowsTotal != 4 || op.CustomMetrics["numPhysicalEntries"] != 4 {
			t.Errorf("%s: last progress line %+v; want %s, 4 rows, 4 physical", q.Name, op, wantFunction[q.Name])
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
	for _, name := range []string{"totable", "reduce"} {
		if w := []int64{1, 1, 2, 3, 3, 3, 4, 4}; !equalInts(states[name], w) {
			t.Errorf("%s: state at the samples %v, want %v", name, states[name], w)
		}
	}
}

// TestKafkaStreamsKeepLastRefused checks that what a keep-last query
// cannot take is refused in one line naming the query and the key, and
// that a sweep over it is refused once, whatever the number of values.
func TestKafkaStreamsKeepLastRefused(t *testing.T) {
	for _, c := range []struct{ edit, repl, want string }{
		{"    mode: keep-last\n  - name: reduce", "    mode: keep-last\n    window: 2 minutes\n  - name: reduce", "queries[0].window: must be left out of a keep-last query (keep-last (toTable, reduce) keeps every key forever: no window), got 2m"},
		{"    mode: keep-last\n  - name: reduce", "    mode: keep-last\n    time: record\n  - name: reduce", "queries[0].time: must be left out of a keep-last query"},
		{"    mode: keep-last\n  - name: reduce", "    mode: keep-last\n    partitions: 4\n  - name: reduce", "queries[0].partitions: must be left out of a keep-last query (only keep-first, the window-store pattern, takes partitions), got 4"},
		{"form: reduce", "form: aggregate", "queries[1].form: must be toTable (stream.toTable, the default) or reduce (groupByKey().reduce), got aggregate"},
		{"    mode: keep-last\n    form: reduce", "    mode: keep-first\n    window: 1m\n    form: reduce", "queries[1].form: must be left out of a keep-first query (only keep-last takes a form"},
		{"    mode: keep-last\n  - name: reduce", "    mode: keep-latest\n  - name: reduce", "queries[0].mode: must be keep-first (the window-store processor, the default) or keep-last (toTable or reduce), got keep-latest"},
		{"queries:", "sweep: {delay: [1m, 2m, 4m]}\nqueries:", "sweep: cannot sweep queries[0] (a kafka-streams query): a keep-last (toTable, reduce) query has no window to sweep or plan"},
	} {
		_, err := scenario.Parse([]byte(strings.Replace(keepLastScenario, c.edit, c.repl, 1)), "test.yaml")
		lines := 0
		if err != nil {
			lines = strings.Count(err.Error(), "\n") + 1
		}
		// The sweep refuses both queries: one line each.
		wantLines := 1
		if strings.HasPrefix(c.want, "sweep:") {
			wantLines = 2
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || lines != wantLines {
			t.Errorf("%q -> %q: got %v, want %d lines, one containing %q", c.edit, c.repl, err, wantLines, c.want)
		}
	}
}
