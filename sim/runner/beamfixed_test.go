package runner

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

const beamFixedScenario = `name: beam-fixed
seed: 3
duration: 3m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: fixed
    engine: beam
    duration: 10 minutes
    window: {fixed: 1 minute}
  - name: fixed-late
    engine: beam
    duration: 10 minutes
    window: {fixed: 1 minute}
    allowedLateness: 30 seconds
`

// beamFixedRows are the rows of TestBeamFixedWindowsInARun, in arrival
// order: {event, copy, copies, arrival, event time} in seconds after
// start (a whole minute, so the windows start at whole minutes).
var beamFixedRows = [][5]int64{
	{0, 0, 2, 10, 10},   // r1
	{1, 0, 1, 50, 50},   // r2
	{2, 0, 2, 65, 65},   // r3
	{0, 1, 2, 70, 10},   // r4: e0's copy, its event time
	{3, 0, 1, 80, 55},   // r5: a first copy 25 s late
	{2, 1, 2, 130, 125}, // r6: e2's copy restamped into the next window
	{4, 0, 1, 140, 900}, // r7: a bad clock, 760 s ahead
	{5, 0, 1, 150, 145}, // r8
}

// TestBeamFixedWindowsInARun runs Beam's Deduplicate in fixed windows of
// 1 minute (processing time, d = 10 minutes: no timer fires within the
// run, so the windows decide), with allowed lateness 0 and 30 s, on
// beamFixedRows, and checks every counter against a derivation by hand
// (seconds after start). The input watermark is the largest event time
// of the rows before (at a sample, of every row so far); window
// [s, s + 60) is gone, its keys cleared and its elements late, once the
// watermark passes s + 59.999 + the lateness.
//
// Lateness 0:
//
//	r1 e0 w0 emit   r2 e1 w0 emit   r3 (wm 50) e2 w60 emit
//	r4 (wm 65 > 59.999: w0 collected, e0 e1 cleared) late: a copy
//	r5 (wm 65) e3 w0 late: e3's only copy, a false drop (late)
//	r6 (wm 65) e2 w120 emit: a missed duplicate across the boundary;
//	   sample 130: wm 125 collects w60
//	r7 e4 w900 emit; sample 140: wm 900 collects w120
//	r8 (wm 900 > its arrival 150) e5 w120 late: a false drop (bad clock)
//
// Samples 10 50 70 80 130 140 150: state 1 2 1 1 1 1 1; 5 emitted, 1
// missed, 3 late, 2 false drops (1 late, 1 bad clock), 4 keys cleared.
//
// Lateness 30 s (window [s, s + 60) lives until the watermark passes
// s + 89.999):
//
//	r1, r2, r3 as above; r4 (wm 65) e0 w0 seen: a duplicate
//	r5 (wm 65) e3 w0 emit; r6 e2 w120 emit (missed);
//	   sample 130: wm 125 collects w0 (e0 e1 e3)
//	r7 e4 w900 emit; sample 140: wm 900 collects w60 and w120
//	r8 late (bad clock)
//
// State 1 2 3 4 2 1 1; 6 emitted, 1 missed, 1 duplicate, 1 late, 1
// false drop (bad clock), 5 keys cleared.
func TestBeamFixedWindowsInARun(t *testing.T) {
	sc := load(t, beamFixedScenario)
	start := sc.Start.UnixMicro()
	var rows []generators.Row
	for _, r := range beamFixedRows {
		rows = append(rows, generators.Row{EventNum: r[0], EventTime: start + r[4]*1e6, IngestTime: start + r[4]*1e6, Arrival: start + r[3]*1e6, Attempt: r[1],
			Truth: generators.Truth{Event: uint64(r[0]), Copy: uint32(r[1]), Copies: uint32(r[2])}})
	}
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
		InputRows, LogicalEvents, TrueDuplicates, EmittedRows, MissedDuplicates, DroppedDuplicates, DroppedByWatermark, FalseDrops, Batches, SinkWrites, PeakStateRows, FinalStateRows int64
		Causes                                                                                                                                                                         metrics.FalseDropCauses
	}
	want := map[string]totals{
		"fixed":      {8, 6, 2, 5, 1, 0, 3, 2, 7, 5, 2, 1, metrics.FalseDropCauses{Late: 1, BadClock: 1}},
		"fixed-late": {8, 6, 2, 6, 1, 1, 1, 1, 7, 6, 4, 1, metrics.FalseDropCauses{BadClock: 1}},
	}
	wantCounters := map[string]map[string]int64{
		"fixed":      {"peakPhysicalStateRows": 2, "finalPhysicalStateRows": 1, "timersFired": 4, "droppedDueToLateness": 3},
		"fixed-late": {"peakPhysicalStateRows": 4, "finalPhysicalStateRows": 1, "timersFired": 5, "droppedDueToLateness": 1},
	}
	wantQuery := map[string]string{
		"fixed":      `{"engine":"beam","timeDomain":"processing","duration":"10m","window":{"fixed":"1m"}}`,
		"fixed-late": `{"engine":"beam","timeDomain":"processing","duration":"10m","window":{"fixed":"1m"},"allowedLateness":"30s"}`,
	}
	wantStates := map[string][]int64{"fixed": {1, 2, 1, 1, 1, 1, 1}, "fixed-late": {1, 2, 3, 4, 2, 1, 1}}
	for _, q := range res.Summary.Queries {
		got := totals{q.InputRows, q.LogicalEvents, q.TrueDuplicates, q.EmittedRows, q.MissedDuplicates, q.DroppedDuplicates, q.DroppedByWatermark, q.FalseDrops, q.Batches, q.SinkWrites, q.PeakStateRows, q.FinalStateRows, q.FalseDropsByCause}
		if got != want[q.Name] {
			t.Errorf("%s: summary\n got %+v\nwant %+v", q.Name, got, want[q.Name])
		}
		if !maps.Equal(q.EngineCounters, wantCounters[q.Name]) {
			t.Errorf("%s: engineCounters %v, want %v", q.Name, q.EngineCounters, wantCounters[q.Name])
		}
		if q.Query != wantQuery[q.Name] || q.Store != "direct-runner" {
			t.Errorf("%s: query %s, store %s; want %s, direct-runner", q.Name, q.Query, q.Store, wantQuery[q.Name])
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
}

// TestBeamWindowRefused checks that a Beam query's window and allowed
// lateness are refused in one line naming the query and the key when
// they are not what it takes, and a fixed window on a Kafka Streams query.
func TestBeamWindowRefused(t *testing.T) {
	for _, c := range []struct{ edit, repl, want string }{
		{"    window: {fixed: 1 minute}\n    allowedLateness", "    window: 1 minute\n    allowedLateness", "queries[1].window: must be {fixed: DURATION} for a beam query (fixed windows of that size; left out, the global window), got 1m"},
		{"    window: {fixed: 1 minute}\n    allowedLateness", "    window: {fixed: 0s}\n    allowedLateness", "queries[1].window: fixed: the window size must be at least 1 ms, got 0s"},
		{"    window: {fixed: 1 minute}\n    allowedLateness", "    window: {sliding: 1 minute}\n    allowedLateness", `queries[1].window.sliding: unknown key (line 14), must be one of fixed`},
		{"    window: {fixed: 1 minute}\n    allowedLateness", "    allowedLateness", "queries[1].allowedLateness: only fixed windows take an allowed lateness (the global window never ends), got 30s"},
		{"allowedLateness: 30 seconds", "allowedLateness: -1s", "queries[1].allowedLateness: must be at least 0, got -1s"},
		{"  - name: fixed\n    engine: beam\n    duration: 10 minutes\n", "  - name: fixed\n    engine: kafka-streams\n", "queries[0].window: must be a duration, the window store's retention and window size W such as 2 minutes, got {fixed: 1m}"},
	} {
		_, err := scenario.Parse([]byte(strings.Replace(beamFixedScenario, c.edit, c.repl, 1)), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%q -> %q: got %v, want one line containing %q", c.edit, c.repl, err, c.want)
		}
	}
}

// TestBeamFixedWindowsAgainstNaiveModel runs a seeded scenario with
// retries (restamped copies), arrival delays and future timestamps
// through Beam in fixed windows, event time, with allowed lateness, and
// compares it with a deliberately naive model written from docs/beam.md:
// the input watermark is the largest event time of the rows before (at a
// sample, of every row so far); a map of seen (id, window) keys to their
// timers (the watermark + d, capped at the window's end - 1 ms + L) is
// scanned at every advance; an element whose window's end - 1 ms + L is
// before the watermark is late, and an event all of whose copies are late
// is a false drop, of cause bad clock when the watermark that dropped its
// last copy was ahead of that copy's arrival. Totals, causes, every
// sample's state, the fired timers and the late drops must agree.
func TestBeamFixedWindowsAgainstNaiveModel(t *testing.T) {
	const dMs, wMs, lMs = 20_000, 60_000, 5_000
	sc := load(t, `name: beam-fixed-naive
seed: 23
duration: 10m
trigger: 10s
workload:
  rate: 20/s
  ids: int
  arrivalDelay: {dist: exponential, mean: 3s}
  retries:
    probability: 0.3
    copies: {dist: geometric, mean: 2}
    delay: {dist: lognormal, median: 20s, p99: 2m}
    timestamp: restamp
  futureTimestamps:
    probability: 0.0002
    skew: {dist: uniform, min: 1m, max: 2m}
queries:
  - name: beam-fixed
    engine: beam
    timeDomain: event
    duration: 20 seconds
    window: {fixed: 1 minute}
    allowedLateness: 5 seconds
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
	type key struct{ id, start int64 }
	type event struct{ copies, seen, emitted, late int }
	const minTS = -9223372036854775
	seen := map[key]int64{}
	events := map[uint64]*event{}
	wm, maxEvent := int64(minTS), int64(minTS)
	var emitted, missed, dups, late, fired, lost, lostLate, lostAhead int64
	var states []int64
	gcOf := func(start int64) int64 { return start + wMs - 1 + lMs }
	advance := func() {
		wm = max(wm, maxEvent)
		for k, at := range seen {
			if wm > at || wm > gcOf(k.start) {
				delete(seen, k)
				fired++
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
			advance()
			ev := events[r.Truth.Event]
			if ev == nil {
				ev = &event{copies: int(r.Truth.Copies)}
				events[r.Truth.Event] = ev
			}
			ev.seen++
			start := ts - ((ts%wMs)+wMs)%wMs
			ahead := false
			switch k := (key{r.EventNum, start}); {
			case gcOf(start) < wm:
				late++
				ev.late++
				ahead = wm > at
			case seen[k] != 0:
				dups++
			default:
				seen[k] = min(wm+dMs, gcOf(start))
				emitted++
				if ev.emitted > 0 {
					missed++
				}
				ev.emitted++
			}
			if ev.seen == ev.copies && ev.emitted == 0 {
				lost++
				switch {
				case ev.late == ev.copies && ahead:
					lostAhead++
				case ev.late == ev.copies:
					lostLate++
				}
			}
			maxEvent = max(maxEvent, ts)
			has = g.Next(&r)
		}
		if arrived {
			advance()
			states = append(states, int64(len(seen)))
		}
	}
	q := res.Summary.Queries[0]
	got := []int64{q.EmittedRows, q.MissedDuplicates, q.DroppedDuplicates, q.DroppedByWatermark, q.FalseDrops, q.FalseDropsByCause.Late, q.FalseDropsByCause.BadClock, q.EngineCounters["timersFired"], q.EngineCounters["droppedDueToLateness"]}
	want := []int64{emitted, missed, dups, late, lost, lostLate, lostAhead, fired, late}
	if !equalInts(got, want) {
		t.Errorf("emitted, missed, duplicates, late, false drops (late, bad clock), timers fired, droppedDueToLateness:\n got %v\nwant %v (naive model)", got, want)
	}
	if missed == 0 || late == 0 || lostLate == 0 || lostAhead == 0 || dups == 0 {
		t.Errorf("the scenario shows too little: %d missed, %d late, %d lost late, %d lost to the bad clock, %d duplicates", missed, late, lostLate, lostAhead, dups)
	}
	t.Logf("%d emitted, %d missed, %d duplicates, %d late, %d lost (%d late, %d bad clock), %d timers fired", emitted, missed, dups, late, lost, lostLate, lostAhead, fired)
	var gotStates []int64
	for _, rec := range recs {
		gotStates = append(gotStates, rec.StateRows)
	}
	if !equalInts(gotStates, states) {
		t.Errorf("state at the samples differs from the naive model's (%d and %d samples)", len(gotStates), len(states))
	}
}

// TestRowJobTimeseriesSumsToTheSummary: every row job's timeseries rows
// add up to its summary's counters, late drops included (a Beam
// fixed-window query drops late elements: its droppedByWatermark was in
// the summary only, which merge's check of a shard's counters caught).
func TestRowJobTimeseriesSumsToTheSummary(t *testing.T) {
	s := load(t, `name: sums
seed: 5
duration: 4m
trigger: 10s
workload:
  rate: 60/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries: {probability: 0.1, delay: {dist: lognormal, median: 20s, p99: 3m}, timestamp: restamp}
faults:
  - {at: 2m, kind: bad-clock, skew: 5m}
queries:
  - name: beam-fixed
    engine: beam
    timeDomain: event
    duration: 1 minute
    window: {fixed: 1 minute}
  - name: kstreams-record
    engine: kafka-streams
    window: 1 minute
    time: record
`)
	res := run(t, s, 1)
	sums := map[string]*[4]int64{}
	for rec, err := range res.Rows() {
		if err != nil {
			t.Fatal(err)
		}
		if sums[rec.Query] == nil {
			sums[rec.Query] = &[4]int64{}
		}
		c := sums[rec.Query]
		c[0] += rec.InputRows
		c[1] += rec.EmittedRows
		c[2] += rec.DroppedByWatermark
		c[3] += rec.DroppedDuplicates
	}
	late := int64(0)
	for _, q := range res.Summary.Queries {
		c := sums[q.Name]
		want := [4]int64{q.InputRows, q.EmittedRows, q.DroppedByWatermark, q.DroppedDuplicates}
		if c == nil || *c != want {
			t.Errorf("%s: timeseries input/emitted/late/duplicates %v, summary %v", q.Name, c, want)
		}
		late += q.DroppedByWatermark
	}
	if late == 0 {
		t.Fatal("no late drop in the run: the test shows nothing")
	}
}
