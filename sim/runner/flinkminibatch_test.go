package runner

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// miniBatchStream is the stream of TestFlinkMiniBatchInARun, in arrival
// order: event, copy, copies, event time, arrival (ms after start).
var miniBatchStream = [][5]int64{
	{0, 0, 3, 1000, 1000},   // row 1
	{0, 1, 3, 1000, 2000},   // row 2
	{1, 0, 2, 3000, 3000},   // row 3
	{1, 1, 2, 3000, 5000},   // row 4
	{2, 0, 2, 9000, 9000},   // row 5
	{2, 1, 2, 9000, 11000},  // row 6
	{3, 0, 1, 25000, 25000}, // row 7
	{0, 2, 3, 1000, 29000},  // row 8
	{4, 0, 1, 45000, 45000}, // row 9
}

const miniBatchScenario = `name: flink-mini-batch
seed: 3
duration: 1m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: q
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ORDER) AS rn FROM events) WHERE rn = 1
    options: {table.exec.mini-batch.enabled: true, table.exec.mini-batch.allow-latency: 4 s, table.exec.mini-batch.size: 1000}
`

// TestFlinkMiniBatchInARun runs the proctime mini-batch dedups on
// miniBatchStream: 9 rows, 5 events, 4 true duplicates, allow-latency 4 s
// (the start is a multiple of it: the mini-batch watermarks, and so the
// flushes, at 4, 8, 12, ... s after it), no TTL. The bundles (times in s
// after start): [0, 4) rows 1-3, [4, 8) row 4, [8, 12) rows 5-6,
// [24, 28) row 7, [28, 32) row 8, [44, 48) row 9, flushed by the timer at
// the bundle's end; rows arrive at the triggers 10 (rows 1-5), 20 (6),
// 30 (7, 8) and 50 (9); a sample accounts for the rows whose bundle was
// flushed by its time (the timer at 48 fires before the end of input at
// 50).
//
// Keep-first (ProcTimeMiniBatchDeduplicateKeepFirstRowFunction): flush 4
// emits rows 1 and 3 (row 2 is behind row 1 in the bundle); flush 8 finds
// event 1 in state (row 4 dropped); flush 12 emits row 5 (row 6 behind
// it); flush 28 row 7; flush 32 finds event 0 (row 8 dropped); flush 48
// emits row 9. Samples: at 10 rows 1-4 (2 emitted, 2 dropped, state 2),
// at 20 rows 5-6 (1, 1, 3), at 30 row 7 (1, 0, 4; row 8 waits for 32), at
// 50 rows 8-9 (1, 1, 5). Emitted 5, missed 0; changelog 5 +I.
//
// Keep-last (ProcTimeMiniBatchDeduplicateKeepLastRowFunction, no TTL:
// rows compared; copies differ in attempt): flush 4 emits row 2 (+I; row
// 1 before it in the bundle) and row 3 (+I); flush 8 row 4 (+U, event 1
// emitted again: missed); flush 12 row 6 (row 5 before it); flush 28 row
// 7; flush 32 row 8 (+U, event 0 again: missed); flush 48 row 9.
// Samples: at 10 (3 emitted, 1 dropped, state 2), 20 (1, 1, 3), 30 (1, 0,
// 4), 50 (2, 0, 5). Emitted 7, missed 2; changelog 5 +I (rows 2, 3, 6,
// 7, 9), 2 +U (rows 4, 8), no -U (the append sink needs none).
func TestFlinkMiniBatchInARun(t *testing.T) {
	type totals struct {
		InputRows, LogicalEvents, TrueDuplicates, EmittedRows, MissedDuplicates, FalseDrops, DroppedDuplicates, SinkWrites, Batches, PeakStateRows, FinalStateRows int64
		Counters                                                                                                                                                   map[string]int64
	}
	counters := func(inserts, updates int64) map[string]int64 {
		return map[string]int64{"peakPhysicalStateRows": 5, "finalPhysicalStateRows": 5, "insertsEmitted": inserts, "updatesEmitted": updates, "retractionsEmitted": 0}
	}
	for _, c := range []struct {
		order, function string
		want            totals
		samples         [][4]int64 // per sample: input, emitted, dropped duplicates, state rows
	}{
		{"ASC", "ProcTimeMiniBatchDeduplicateKeepFirstRowFunction", totals{9, 5, 4, 5, 0, 0, 4, 5, 4, 5, 5, counters(5, 0)},
			[][4]int64{{5, 2, 2, 2}, {1, 1, 1, 3}, {2, 1, 0, 4}, {1, 1, 1, 5}}},
		{"DESC", "ProcTimeMiniBatchDeduplicateKeepLastRowFunction", totals{9, 5, 4, 7, 2, 0, 2, 7, 4, 5, 5, counters(5, 2)},
			[][4]int64{{5, 3, 1, 2}, {1, 1, 1, 3}, {2, 1, 0, 4}, {1, 2, 0, 5}}},
	} {
		sc := load(t, strings.Replace(miniBatchScenario, "proc_time ORDER", "proc_time "+c.order, 1))
		if sc.Start.UnixMilli()%4000 != 0 {
			t.Fatalf("the start %s is not a multiple of 4 s", sc.Start)
		}
		res, err := Run(context.Background(), sc, Options{
			Workers: 1,
			hooks: testHooks{NewSource: func(*scenario.Scenario) (Source, error) {
				return &listSource{rows: timedRows(sc.Start.UnixMicro(), miniBatchStream)}, nil
			},
			},
		})
		if err != nil {
			t.Fatalf("%s: %v", c.order, err)
		}
		q := res.Summary.Queries[0]
		got := totals{q.InputRows, q.LogicalEvents, q.TrueDuplicates, q.EmittedRows, q.MissedDuplicates, q.FalseDrops,
			q.DroppedDuplicates, q.SinkWrites, q.Batches, q.PeakStateRows, q.FinalStateRows, q.EngineCounters}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: summary\n got %+v\nwant %+v", c.order, got, c.want)
		}
		recs, err := res.Records()
		if err != nil {
			t.Fatal(err)
		}
		var samples [][4]int64
		for _, r := range recs {
			samples = append(samples, [4]int64{r.InputRows, r.EmittedRows, r.DroppedDuplicates, r.StateRows})
		}
		if !reflect.DeepEqual(samples, c.samples) {
			t.Errorf("%s: samples (input, emitted, dropped, state)\n got %v\nwant %v", c.order, samples, c.samples)
		}
		res.Close()
	}
}

// TestFlinkMiniBatchDeterministic runs a seeded scenario with retries
// through the mini-batch keep-first (TTL 1 min, allow-latency 2 s, a
// size that also flushes) and keep-last, by proctime and by rowtime
// (watermark 5 s), twice: the summaries (but the
// wall-clock fields) and every timeseries row agree; every row gets its
// verdict by the end, and keep-first without a false drop emits every
// event at least once (a proctime function always emits a new key's
// first bundle row).
func TestFlinkMiniBatchDeterministic(t *testing.T) {
	const yaml = `name: flink-mini-batch-seeded
seed: 11
duration: 5m
trigger: 10s
workload:
  rate: 20/s
  ids: int
  retries:
    probability: 0.3
    delay: {dist: lognormal, median: 5s, p99: 1m}
queries:
  - name: first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time) AS rn FROM events) WHERE rn = 1
    options: {table.exec.mini-batch.enabled: true, table.exec.mini-batch.allow-latency: 2 s, table.exec.mini-batch.size: 25, table.exec.state.ttl: 1 min}
  - name: last
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time DESC) AS rn FROM events) WHERE rn = 1
    options: {table.exec.mini-batch.enabled: true, table.exec.mini-batch.allow-latency: 2 s, table.exec.mini-batch.size: 1000}
  - name: rowtime-first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time) AS rn FROM events) WHERE rn = 1
    options: {watermark: 5 s, table.exec.mini-batch.enabled: true, table.exec.mini-batch.allow-latency: 2 s, table.exec.mini-batch.size: 25, table.exec.state.ttl: 1 min}
  - name: rowtime-last
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time DESC) AS rn FROM events) WHERE rn = 1
    options: {watermark: 5 s, table.exec.mini-batch.enabled: true, table.exec.mini-batch.allow-latency: 2 s, table.exec.mini-batch.size: 1000}
`
	run := func() ([]any, []any) {
		res, err := Run(context.Background(), load(t, yaml), Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		recs, err := res.Records()
		if err != nil {
			t.Fatal(err)
		}
		var sums, rows []any
		for _, q := range res.Summary.Queries {
			q.WallSeconds, q.EventsPerSecond = 0, 0
			sums = append(sums, q)
		}
		for _, r := range recs {
			rows = append(rows, r)
		}
		return sums, rows
	}
	s1, r1 := run()
	s2, r2 := run()
	if !reflect.DeepEqual(s1, s2) || !reflect.DeepEqual(r1, r2) {
		t.Fatalf("two runs differ:\n%+v\n%+v", s1, s2)
	}
	first, last := s1[0].(metrics.QuerySummary), s1[1].(metrics.QuerySummary)
	if first.InputRows == 0 || first.FalseDrops != 0 || first.EmittedRows < first.LogicalEvents || first.EmittedRows+first.DroppedDuplicates != first.InputRows {
		t.Errorf("keep-first: %+v", first)
	}
	if last.FalseDrops != 0 || last.EmittedRows+last.DroppedDuplicates != last.InputRows {
		t.Errorf("keep-last: %+v", last)
	}
	// RowTimeMiniBatchDeduplicateFunction has no late filter: a key's
	// first row is always emitted, and every row is emitted or dropped.
	for _, q := range s1[2:] {
		q := q.(metrics.QuerySummary)
		if q.InputRows != first.InputRows || q.FalseDrops != 0 || q.EmittedRows+q.DroppedDuplicates != q.InputRows || q.EmittedRows < q.LogicalEvents {
			t.Errorf("%s: %+v", q.Name, q)
		}
		t.Logf("%s: emitted %d, missed %d, dropped %d", q.Name, q.EmittedRows, q.MissedDuplicates, q.DroppedDuplicates)
	}
	t.Logf("keep-first: %d rows, %d events, emitted %d, missed %d; keep-last: emitted %d, missed %d, dropped %d",
		first.InputRows, first.LogicalEvents, first.EmittedRows, first.MissedDuplicates, last.EmittedRows, last.MissedDuplicates, last.DroppedDuplicates)
}
