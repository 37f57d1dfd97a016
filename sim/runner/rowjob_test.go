package runner

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// listSource yields the given rows, in order.
type listSource struct {
	rows []generators.Row
	i    int
}

func (s *listSource) Next(r *generators.Row) bool {
	if s.i >= len(s.rows) {
		return false
	}
	*r = s.rows[s.i]
	s.i++
	return true
}

// retryRows returns copies of events (int ids) arriving at the given
// offsets in milliseconds after start, in arrival order: arrivals[e] are
// event e's copies, the first the original.
func retryRows(start int64, arrivals [][]int64) []generators.Row {
	type copyAt struct {
		event, copy int
		at          int64
	}
	var all []copyAt
	for e, as := range arrivals {
		for c, a := range as {
			all = append(all, copyAt{e, c, a})
		}
	}
	// Insertion sort by arrival: a handful of rows.
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].at < all[j-1].at; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	rows := make([]generators.Row, len(all))
	for i, c := range all {
		at := start + c.at*1000
		first := start + arrivals[c.event][0]*1000
		rows[i] = generators.Row{EventNum: int64(c.event), EventTime: first, IngestTime: first, Arrival: at, Attempt: int64(c.copy),
			Truth: generators.Truth{Event: uint64(c.event), Copy: uint32(c.copy), Copies: uint32(len(arrivals[c.event]))}}
	}
	return rows
}

const flinkScenario = `name: flink-ttl
seed: 3
duration: 2m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: flink-first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1
    options: {table.exec.state.ttl: 60 s}
`

// TestFlinkKeepFirstTTLInARun runs Flink's proctime keep-first with a
// 60 s state TTL on retry traffic with known gaps. The TTL clock is each
// row's arrival; a duplicate only reads the key's flag, which TTL counts
// from the write by the first emitted copy (OnCreateAndWrite), and a flag
// written at w is expired at now once w + 60 s <= now. By hand (times in
// seconds after start):
//
//	event 0: 1 emitted (flag 1); 30 dropped; 61 emitted, 1+60 <= 61
//	         (missed duplicate, flag 61); 90 dropped, 61+60 > 90
//	event 1: 5 emitted (flag 5); 64.999 dropped, 5+60 > 64.999 (the read
//	         does not refresh the flag); 130 emitted, 5+60 <= 130 (missed)
//	event 2: 20 emitted
//	event 3: 40 emitted; 41 dropped
//
// 10 rows, 4 events, 6 true duplicates, 6 emitted, 2 missed, 4 dropped, 0
// false drops; changelog: 6 +I (a copy after its flag expired is +I
// again), no +U or -U. Samples at the triggers with arrivals, live flags
// (written w with w + 60 > t):
//
//	t=10: {0@1, 1@5}: 2          t=70: {0@61, 2@20, 3@40}: 3
//	t=20: +2@20: 3               t=90: {0@61, 3@40}: 2
//	t=30: 3                      t=130: {1@130}: 1
//	t=40: +3@40: 4   t=50: 4
func TestFlinkKeepFirstTTLInARun(t *testing.T) {
	sc := load(t, flinkScenario)
	rows := retryRows(sc.Start.UnixMicro(), [][]int64{
		{1000, 30000, 61000, 90000},
		{5000, 64999, 130000},
		{20000},
		{40000, 41000},
	})
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
	q := res.Summary.Queries[0]
	type totals struct {
		InputRows, LogicalEvents, TrueDuplicates, EmittedRows, MissedDuplicates, FalseDrops, DroppedDuplicates, Batches, SinkWrites, PeakStateRows, FinalStateRows int64
	}
	want := totals{InputRows: 10, LogicalEvents: 4, TrueDuplicates: 6, EmittedRows: 6, MissedDuplicates: 2, DroppedDuplicates: 4, Batches: 8, SinkWrites: 6, PeakStateRows: 4, FinalStateRows: 1}
	got := totals{InputRows: q.InputRows, LogicalEvents: q.LogicalEvents, TrueDuplicates: q.TrueDuplicates, EmittedRows: q.EmittedRows,
		MissedDuplicates: q.MissedDuplicates, FalseDrops: q.FalseDrops, DroppedDuplicates: q.DroppedDuplicates, Batches: q.Batches, SinkWrites: q.SinkWrites,
		PeakStateRows: q.PeakStateRows, FinalStateRows: q.FinalStateRows}
	if got != want {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
	if q.Engine != "flink" || q.Store != "heap" {
		t.Errorf("engine %q, store %q, want flink on heap", q.Engine, q.Store)
	}
	if c := q.EngineCounters; c["insertsEmitted"] != 6 || c["updatesEmitted"] != 0 || c["retractionsEmitted"] != 0 {
		t.Errorf("changelog counters %v, want 6 inserts, no updates or retractions", c)
	}
	// The heap backend's modelled bytes reach the summary (through the
	// registry's operator): at least a modelled entry per row held.
	if len(q.BytesPerEntry) != 1 || q.BytesPerEntry[0] <= 0 || q.FinalStateBytes < q.FinalStateRows*q.BytesPerEntry[0] || q.PeakStateBytes < q.FinalStateBytes {
		t.Errorf("state bytes: per entry %v, final %d for %d rows, peak %d", q.BytesPerEntry, q.FinalStateBytes, q.FinalStateRows, q.PeakStateBytes)
	}
	var times, states []int64
	recs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		times = append(times, (r.ProcessingTime-sc.Start.UnixMilli())/1000)
		states = append(states, r.StateRows)
	}
	wantTimes, wantStates := []int64{10, 20, 30, 40, 50, 70, 90, 130}, []int64{2, 3, 3, 4, 4, 3, 2, 1}
	if !equalInts(times, wantTimes) || !equalInts(states, wantStates) {
		t.Errorf("samples at %v with state %v, want at %v with %v", times, states, wantTimes, wantStates)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFlinkQueriesRefusedInScenarios checks that what a scenario cannot
// run yet is one line naming the query's key.
func TestFlinkQueriesRefusedInScenarios(t *testing.T) {
	for _, c := range []struct{ name, edit, want string }{
		{"rowtime", "ORDER BY proc_time ASC", "queries[0].query: must be a Flink dedup a scenario can run: ORDER BY event_time needs option watermark"},
		{"mini-batch", "{table.exec.state.ttl: 60 s}", "queries[0].query: must be a Flink dedup a scenario can run: option table.exec.mini-batch.allow-latency must be above 0 when table.exec.mini-batch.enabled is true"},
		{"bad option", "{table.exec.state.ttl: 60 s}", `queries[0].query: must be a Flink dedup a scenario can run: option "table.exec.state.tll" is not one dedupsim reads`},
		{"top-n", "WHERE rn = 1", "queries[0].query: must be a Flink dedup a scenario can run: a Top-N rank, not a dedup"},
		{"engine", "engine: flink", "queries[0].engine: must be spark, flink, kafka-streams or beam, got storm"},
	} {
		repl := map[string]string{
			"rowtime":    "ORDER BY event_time ASC",
			"bad option": "{table.exec.state.tll: 60 s}",
			"mini-batch": "{table.exec.mini-batch.enabled: true, table.exec.mini-batch.size: 100}",
			"top-n":      "WHERE rn <= 2",
			"engine":     "engine: storm",
		}[c.name]
		_, err := scenario.Parse([]byte(strings.Replace(flinkScenario, c.edit, repl, 1)), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: got %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

// TestFlinkQueryRefusesACheckpoint checks that a resumable run of a
// Flink query fails before it writes its checkpoint folder.
func TestFlinkQueryRefusesACheckpoint(t *testing.T) {
	dir := t.TempDir() + "/ck"
	_, err := Run(context.Background(), load(t, flinkScenario), Options{Workers: 1, CheckpointDir: dir})
	if err == nil || !strings.Contains(err.Error(), "a flink query cannot yet run in a resumable run") {
		t.Fatalf("got %v, want the resumable run refused", err)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("%s was written: %v", dir, statErr)
	}
}

// TestFlinkKeepFirstAgainstANaiveModel runs a seeded scenario with
// retries through a Flink keep-first proctime query with a TTL and
// compares it with a deliberately naive model of the same rule: a map of
// event id to the arrival that wrote its flag; a row is emitted when its
// key has no flag or the flag's write plus the TTL is at or before the
// row's arrival, and only an emitted row writes the flag. Totals and the
// live flags at every sample must agree.
func TestFlinkKeepFirstAgainstANaiveModel(t *testing.T) {
	const ttlMs = 45_000
	sc := load(t, `name: flink-naive
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
queries:
  - name: flink-first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time) AS rn FROM events) WHERE rn = 1
    options: {table.exec.state.ttl: 45 s}
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

	g, err := generators.New(sc.Generator())
	if err != nil {
		t.Fatal(err)
	}
	flags := map[int64]int64{}
	emittedEvent := map[uint64]bool{}
	var emitted, missed, dropped int64
	var samples, states []int64
	live := func(now int64) int64 {
		n := int64(0)
		for _, w := range flags {
			if w+ttlMs > now {
				n++
			}
		}
		return n
	}
	var r generators.Row
	has := g.Next(&r)
	trig := sc.Trigger.Micros()
	for tr := sc.Start.UnixMicro() + trig; has; tr += trig {
		arrived := false
		for has && r.Arrival <= tr {
			arrived = true
			at := r.Arrival / 1000
			if w, ok := flags[r.EventNum]; !ok || w+ttlMs <= at {
				flags[r.EventNum] = at
				emitted++
				if emittedEvent[r.Truth.Event] {
					missed++
				}
				emittedEvent[r.Truth.Event] = true
			} else {
				dropped++
			}
			has = g.Next(&r)
		}
		if arrived {
			samples = append(samples, tr/1000)
			states = append(states, live(tr/1000))
		}
	}
	q := res.Summary.Queries[0]
	if q.EmittedRows != emitted || q.MissedDuplicates != missed || q.DroppedDuplicates != dropped || q.FalseDrops != 0 {
		t.Errorf("run: emitted %d, missed %d, dropped %d, false drops %d; naive model: emitted %d, missed %d, dropped %d, none",
			q.EmittedRows, q.MissedDuplicates, q.DroppedDuplicates, q.FalseDrops, emitted, missed, dropped)
	}
	if missed == 0 || dropped == 0 {
		t.Fatalf("the scenario shows nothing: %d missed, %d dropped", missed, dropped)
	}
	if len(recs) != len(samples) {
		t.Fatalf("%d samples, naive model %d", len(recs), len(samples))
	}
	for i, rec := range recs {
		if rec.ProcessingTime != samples[i] || rec.StateRows != states[i] {
			t.Fatalf("sample %d: at %d state %d, naive model at %d state %d", i, rec.ProcessingTime, rec.StateRows, samples[i], states[i])
		}
	}
	t.Logf("%d rows: %d emitted, %d missed, %d dropped, %d samples", q.InputRows, emitted, missed, dropped, len(samples))
}

// TestFlinkKeepLastCountsUpdatesAsDuplicates runs proctime keep-last
// without TTL on the rows of TestFlinkKeepFirstTTLInARun: every copy
// differs from the kept row (its attempt), so each emits +U after the
// first copy's +I. The sink appends, so each +U of an event already
// emitted is a missed duplicate: 10 rows emitted, 6 missed, none
// dropped; state keeps every key (4, never expiring). Changelog: 4 +I,
// 6 +U, no -U (the append sink needs none: generateUpdateBefore false).
func TestFlinkKeepLastCountsUpdatesAsDuplicates(t *testing.T) {
	doc := strings.Replace(flinkScenario, "ORDER BY proc_time ASC", "ORDER BY proc_time DESC", 1)
	doc = strings.Replace(doc, "    options: {table.exec.state.ttl: 60 s}\n", "", 1)
	sc := load(t, doc)
	rows := retryRows(sc.Start.UnixMicro(), [][]int64{
		{1000, 30000, 61000, 90000},
		{5000, 64999, 130000},
		{20000},
		{40000, 41000},
	})
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
	q := res.Summary.Queries[0]
	if q.EmittedRows != 10 || q.MissedDuplicates != 6 || q.DroppedDuplicates != 0 || q.FalseDrops != 0 || q.FinalStateRows != 4 || q.SinkWrites != 10 {
		t.Errorf("emitted %d, missed %d, dropped %d, false drops %d, final state %d, sink writes %d; want 10, 6, 0, 0, 4, 10",
			q.EmittedRows, q.MissedDuplicates, q.DroppedDuplicates, q.FalseDrops, q.FinalStateRows, q.SinkWrites)
	}
	if c := q.EngineCounters; c["insertsEmitted"] != 4 || c["updatesEmitted"] != 6 || c["retractionsEmitted"] != 0 {
		t.Errorf("changelog counters %v, want 4 inserts, 6 updates, no retractions", c)
	}
}
