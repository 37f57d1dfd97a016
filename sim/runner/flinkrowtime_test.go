package runner

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// timedRows returns rows with int ids: each is {event, copy, copies,
// event time, arrival} in milliseconds after start (microseconds), given
// in arrival order.
func timedRows(start int64, spec [][5]int64) []generators.Row {
	rows := make([]generators.Row, len(spec))
	for i, s := range spec {
		rows[i] = generators.Row{EventNum: s[0], EventTime: start + s[3]*1000, IngestTime: start + s[3]*1000, Arrival: start + s[4]*1000, Attempt: s[1],
			Truth: generators.Truth{Event: uint64(s[0]), Copy: uint32(s[1]), Copies: uint32(s[2])}}
	}
	return rows
}

// rowTimeStream is the stream of TestFlinkRowTimeInARun, in arrival order:
// event, copy, copies, event time, arrival (ms after start). Every copy of
// an event keeps its event time but event 5's, whose retry (copy 1,
// restamped at 40.5 s) arrives before its delayed original (40 s); event
// 2's only copy arrives 8.5 s after its event time.
var rowTimeStream = [][5]int64{
	{0, 0, 3, 1000, 1000},     // row 1
	{1, 0, 2, 2000, 2000},     // row 2
	{1, 1, 2, 2000, 2500},     // row 3
	{0, 1, 3, 1000, 3000},     // row 4
	{3, 0, 2, 8000, 8000},     // row 5
	{2, 0, 1, 500, 9000},      // row 6
	{0, 2, 3, 1000, 20000},    // row 7
	{3, 1, 2, 8000, 30000},    // row 8
	{5, 1, 2, 40500, 40600},   // row 9
	{5, 0, 2, 40000, 41000},   // row 10
	{4, 0, 1, 115000, 115000}, // row 11
}

const rowTimeScenario = `name: flink-rowtime
seed: 3
duration: 2m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: q
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ORDER) AS rn FROM events) WHERE rn = 1
    options: {watermark: 5 s, version: "VERSION"}
`

// TestFlinkRowTimeInARun runs the rowtime dedups on rowTimeStream: 11
// rows, 6 events, 5 true duplicates (events 0: 2, 1: 1, 3: 1, 5: 1), the
// SQL watermark 5 s behind the largest event time, auto-watermark
// interval 200 ms. By hand (times in s after start, W the watermark the
// assigner emitted; each emission here is eager, more than 200 ms above
// the last):
//
// 2.3 keep-first (RowTimeDeduplicateKeepFirstRowFunction): row 1 waits,
// W = -4; row 2 waits, W = -3; rows 3 and 4 are not late and not earlier
// than their key's waiting row: dropped; row 5 waits, W = 3 fires events
// 0 and 1 (rows 1, 2 emitted); row 6 (event time 0.5 < 3) is dropped
// late, event 2's only copy: a false drop, cause late; row 7 (1 < 3)
// dropped late, a duplicate; row 8 not earlier than event 3's waiting
// row 5: dropped; row 9 waits, W = 35.5 fires event 3 (row 5 emitted at
// 40.6); row 10 (40 >= 35.5, earlier than row 9's 40.5) replaces row 9
// (dropped) and waits; row 11 waits, W = 110 fires event 5 (row 10); the
// end of input (maximum watermark, at the last trigger, 120) fires event
// 4 (row 11): without it row 11 would never be emitted. Emitted 5,
// missed 0, false drops 1 (late), 2 dropped by the watermark
// (numLateRecordsDropped 2), 4 dropped duplicates; final state the five
// emitted flags (no TTL). Changelog: 5 +I (every emission), no +U.
//
// 2.0 keep-first (RowTimeDeduplicateFunction, changelog, no late
// filter): the first row of each key +I (rows 1, 2, 5, 6, 9, 11); a copy
// with the same event time is no earlier: dropped (rows 3, 4, 7, 8); row
// 10 is earlier than row 9 (40 < 40.5): +U, emitted again: a missed
// duplicate. Emitted 7, missed 1, no false drop; state: six rows.
// Changelog: 6 +I, 1 +U (row 10), no -U (the append sink needs none).
//
// keep-last (RowTimeDeduplicateFunction in every version): a copy with
// the same or a later event time is kept (+U): rows 3, 4, 7, 8 are
// missed duplicates; row 10 (40 < 40.5) is dropped. Emitted 10, missed
// 4, 1 dropped; state: six rows. Changelog: 6 +I (each key's first
// row), 4 +U (rows 3, 4, 7, 8), no -U.
func TestFlinkRowTimeInARun(t *testing.T) {
	type totals struct {
		InputRows, LogicalEvents, TrueDuplicates, EmittedRows, MissedDuplicates, FalseDrops, FalseDropsLate, DroppedByWatermark, DroppedDuplicates, SinkWrites, Batches, PeakStateRows, FinalStateRows int64
		Counters                                                                                                                                                                                       map[string]int64
	}
	for _, c := range []struct {
		version, order, function string
		want                     totals
		samples                  [][4]int64 // per sample: emitted, dropped duplicates, state rows, false drops
	}{
		{"2.3", "ASC", "RowTimeDeduplicateKeepFirstRowFunction",
			totals{11, 6, 5, 5, 0, 1, 1, 2, 4, 5, 5, 5, 5, map[string]int64{"numLateRecordsDropped": 2, "peakPhysicalStateRows": 5, "finalPhysicalStateRows": 5,
				"insertsEmitted": 5, "updatesEmitted": 0, "retractionsEmitted": 0}},
			// Samples at 10 (rows 1-6), 20 (7), 30 (8), 50 (9, 10), 120 (11):
			// state at 10, 20, 30: flags 0, 1, waiting 3; at 50: flags
			// 0, 1, 3, waiting 5; at 120: five flags.
			[][4]int64{{2, 2, 3, 1}, {0, 0, 3, 1}, {0, 1, 3, 1}, {1, 1, 4, 1}, {2, 0, 5, 1}}},
		{"2.0", "ASC", "RowTimeDeduplicateFunction",
			totals{11, 6, 5, 7, 1, 0, 0, 0, 4, 7, 5, 6, 6, map[string]int64{"peakPhysicalStateRows": 6, "finalPhysicalStateRows": 6,
				"insertsEmitted": 6, "updatesEmitted": 1, "retractionsEmitted": 0}},
			[][4]int64{{4, 2, 4, 0}, {0, 1, 4, 0}, {0, 1, 4, 0}, {2, 0, 5, 0}, {1, 0, 6, 0}}},
		{"2.3", "DESC", "RowTimeDeduplicateFunction",
			totals{11, 6, 5, 10, 4, 0, 0, 0, 1, 10, 5, 6, 6, map[string]int64{"peakPhysicalStateRows": 6, "finalPhysicalStateRows": 6,
				"insertsEmitted": 6, "updatesEmitted": 4, "retractionsEmitted": 0}},
			[][4]int64{{6, 0, 4, 0}, {1, 0, 4, 0}, {1, 0, 4, 0}, {1, 1, 5, 0}, {1, 0, 6, 0}}},
		{"2.0", "DESC", "RowTimeDeduplicateFunction",
			totals{11, 6, 5, 10, 4, 0, 0, 0, 1, 10, 5, 6, 6, map[string]int64{"peakPhysicalStateRows": 6, "finalPhysicalStateRows": 6,
				"insertsEmitted": 6, "updatesEmitted": 4, "retractionsEmitted": 0}},
			[][4]int64{{6, 0, 4, 0}, {1, 0, 4, 0}, {1, 0, 4, 0}, {1, 1, 5, 0}, {1, 0, 6, 0}}},
	} {
		name := c.version + " " + c.order
		yaml := strings.NewReplacer("VERSION", c.version, "event_time ORDER", "event_time "+c.order).Replace(rowTimeScenario)
		sc := load(t, yaml)
		res, err := Run(context.Background(), sc, Options{
			Workers: 1,
			hooks: testHooks{NewSource: func(*scenario.Scenario) (Source, error) {
				return &listSource{rows: timedRows(sc.Start.UnixMicro(), rowTimeStream)}, nil
			},
			},
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		q := res.Summary.Queries[0]
		got := totals{q.InputRows, q.LogicalEvents, q.TrueDuplicates, q.EmittedRows, q.MissedDuplicates, q.FalseDrops, q.FalseDropsByCause.Late, q.DroppedByWatermark,
			q.DroppedDuplicates, q.SinkWrites, q.Batches, q.PeakStateRows, q.FinalStateRows, q.EngineCounters}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: summary\n got %+v\nwant %+v", name, got, c.want)
		}
		recs, err := res.Records()
		if err != nil {
			t.Fatal(err)
		}
		var samples [][4]int64
		for _, r := range recs {
			samples = append(samples, [4]int64{r.EmittedRows, r.DroppedDuplicates, r.StateRows, r.FalseDrops})
		}
		if !reflect.DeepEqual(samples, c.samples) {
			t.Errorf("%s: samples (emitted, dropped, state, false drops)\n got %v\nwant %v", name, samples, c.samples)
		}
		res.Close()
	}
}

// TestFlinkRowTimeDeterministic runs a seeded scenario with retries and
// late arrivals through the 2.3 rowtime keep-first and keep-last twice:
// the summaries (but the wall-clock fields) and every timeseries row
// agree. The insert-only keep-first without TTL emits each event at most
// once, so it misses no duplicate and every event is emitted or lost
// (emitted + false drops = events), its losses late ones; every row gets
// a verdict by the end.
func TestFlinkRowTimeDeterministic(t *testing.T) {
	const yaml = `name: flink-rowtime-seeded
seed: 11
duration: 5m
trigger: 10s
workload:
  rate: 20/s
  ids: int
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.3
    delay: {dist: lognormal, median: 5s, p99: 1m}
queries:
  - name: first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time) AS rn FROM events) WHERE rn = 1
    options: {watermark: 5 s}
  - name: last
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time DESC) AS rn FROM events) WHERE rn = 1
    options: {watermark: 5 s, table.exec.state.ttl: 1 min}
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
	first := s1[0].(metrics.QuerySummary)
	if first.InputRows == 0 || first.MissedDuplicates != 0 || first.EmittedRows+first.FalseDrops != first.LogicalEvents ||
		first.FalseDrops != first.FalseDropsByCause.Late || first.FalseDrops == 0 ||
		first.EngineCounters["numLateRecordsDropped"] != first.DroppedByWatermark {
		t.Errorf("keep-first: %+v", first)
	}
	t.Logf("keep-first: %d rows, %d events, emitted %d, false drops %d (late), late rows %d; keep-last: emitted %d, missed %d",
		first.InputRows, first.LogicalEvents, first.EmittedRows, first.FalseDrops, first.DroppedByWatermark,
		s1[1].(metrics.QuerySummary).EmittedRows, s1[1].(metrics.QuerySummary).MissedDuplicates)
}

// TestFlinkRowTimeBadClock: the 2.3 rowtime keep-first (watermark 5 s)
// loses events behind a watermark a future timestamp pushed ahead (cause
// bad clock) and behind a normal one (cause late). By hand (ms after
// start; every row its event's only copy):
//
//	e0 1000/1000: waits; W = -4000.
//	e1 100000 at 2000 (stamped 98 s ahead): waits; W = 95000 fires e0.
//	e2 3000/3000: 3000 < 95000, late; 95000 > 3000 - 5000: the watermark
//	  is ahead of the clock: lost to the bad clock.
//	e3 96000 at 110000: not late (96000 >= 95000): waits.
//	e4 120000/120000: waits; W = 115000 fires e3 (96000), then e1.
//	e5 100000 at 121000: 100000 < 115000, late; 115000 <= 121000 - 5000:
//	  lost as late.
//	end: the maximum watermark fires e4.
//
// Emitted 4, false drops 2 (1 bad clock, 1 late), 2 dropped late.
func TestFlinkRowTimeBadClock(t *testing.T) {
	sc := load(t, strings.NewReplacer("VERSION", "2.3", "event_time ORDER", "event_time ASC").Replace(rowTimeScenario))
	spec := [][5]int64{{0, 0, 1, 1000, 1000}, {1, 0, 1, 100000, 2000}, {2, 0, 1, 3000, 3000}, {3, 0, 1, 96000, 110000}, {4, 0, 1, 120000, 120000}, {5, 0, 1, 100000, 121000}}
	res, err := Run(context.Background(), sc, Options{
		Workers: 1,
		hooks: testHooks{NewSource: func(*scenario.Scenario) (Source, error) {
			return &listSource{rows: timedRows(sc.Start.UnixMicro(), spec)}, nil
		},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	q := res.Summary.Queries[0]
	if q.EmittedRows != 4 || q.FalseDrops != 2 || q.FalseDropsByCause.BadClock != 1 || q.FalseDropsByCause.Late != 1 || q.DroppedByWatermark != 2 || q.EngineCounters["numLateRecordsDropped"] != 2 {
		t.Errorf("emitted %d, false drops %d %+v, dropped late %d, counters %v; want 4, 2 (1 bad clock, 1 late), 2",
			q.EmittedRows, q.FalseDrops, q.FalseDropsByCause, q.DroppedByWatermark, q.EngineCounters)
	}
}
