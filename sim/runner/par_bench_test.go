package runner_test

import (
	"context"
	"encoding/json"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The benchmarks of one generated stream per run and of
// partition-parallel queries. Like BenchmarkRun, b.N is the stream's rows
// and every metric is per stream row; each benchmark measures what it
// compares in the same run, so the ratios hold on a busy machine:
//
//	go test ./sim/runner -run '^$' -bench 'Floor|Cores' -benchtime 2000000x -count 3
//
// A smoke run (b.N below smokeRows, e.g. -benchtime=1x) or -short runs a
// scenario of smokeRows rows; `go test ./...` runs them so (TestBenchmarksSmoke).

// pairKey is the pair-keyed query's key: event id and event time.
type pairKey struct {
	id [36]byte
	t  int64
}

// floorLoop is the cheapest conceivable run of the quickstart's three
// queries: generate each row once, cut the rows into the trigger's
// batches, and for each batch and each query one lookup and, for a new
// key, one insert per row into a bare Go map (the within-watermark and
// unbounded queries keyed by the event id, the pair-keyed one by id and
// event time). It evicts nothing, so its maps hold every key; it returns
// the keys held.
func floorLoop(b testing.TB, s *scenario.Scenario) (rows, kept int) {
	g, err := generators.New(s.Generator())
	if err != nil {
		b.Fatal(err)
	}
	pair := map[pairKey]struct{}{}
	within := map[[36]byte]struct{}{}
	unbounded := map[[36]byte]struct{}{}
	batch := make([]generators.Row, 0, 1<<16)
	trigger := s.Trigger.Micros()
	at := s.Start.UnixMicro() + trigger
	var r generators.Row
	more := g.Next(&r)
	for more {
		batch = batch[:0]
		for ; more && r.Arrival <= at; more = g.Next(&r) {
			batch = append(batch, r)
		}
		at += trigger
		for i := range batch {
			k := pairKey{batch[i].EventID, batch[i].EventTime}
			if _, ok := pair[k]; !ok {
				pair[k] = struct{}{}
			}
		}
		for _, m := range []map[[36]byte]struct{}{within, unbounded} {
			for i := range batch {
				if _, ok := m[batch[i].EventID]; !ok {
					m[batch[i].EventID] = struct{}{}
				}
			}
		}
		rows += len(batch)
	}
	return rows, len(pair) + len(within) + len(unbounded)
}

// runSummary runs s and returns its query summaries without wall-clock
// fields, as JSON, and the stream's rows.
func runSummary(b testing.TB, s *scenario.Scenario, workers int) (string, int64) {
	res, err := runner.Run(context.Background(), s, runner.Options{Workers: workers})
	if err != nil {
		b.Fatal(err)
	}
	defer res.Close()
	for i := range res.Summary.Queries {
		res.Summary.Queries[i].WallSeconds = 0
		res.Summary.Queries[i].EventsPerSecond = 0
	}
	data, err := json.Marshal(res.Summary.Queries)
	if err != nil {
		b.Fatal(err)
	}
	return string(data), res.Summary.Queries[0].InputRows
}

// BenchmarkFloor measures, on one core, the floor (floorLoop) and the
// quickstart's three queries end to end through runner.Run (generation
// once per run, every query's micro-batches, ground truth, timeseries and
// progress), and reports per stream row:
//
//	floor-ns/row, floor-allocs/row   the floor
//	ns/row, allocs/row               runner.Run
//	ratio                            runner.Run over the floor (target <= 2)
//
// and, on two cores (GOMAXPROCS 2, Workers 2), 2core-ns/row and
// 2core-ratio, runner.Run on two cores over the one-core floor.
func BenchmarkFloor(b *testing.B) {
	b.StopTimer()
	b.ReportAllocs()
	benchFloor(b, b, e2eRows(b), b.ReportMetric)
}

// benchFloor is BenchmarkFloor's body over a stream of about rows rows;
// the benchmark timer, if b is not nil, runs around the one-core run.
func benchFloor(t testing.TB, b *testing.B, rows0 int, report func(float64, string)) {
	s := e2eScenario(t, quickstartAt, rows0)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var rows, kept int
	floor := measure(nil, func() { rows, kept = floorLoop(t, s) })
	if kept == 0 {
		t.Fatal("the floor kept nothing")
	}
	var one, two string
	var in int64
	run := measure(b, func() { one, in = runSummary(t, s, 1) })
	if in != int64(rows) {
		t.Fatalf("the run read %d rows, the floor %d", in, rows)
	}
	runtime.GOMAXPROCS(2)
	run2 := measure(nil, func() { two, _ = runSummary(t, s, 2) })
	if one != two {
		t.Fatal("the run on two cores differs from the run on one")
	}
	n := float64(rows)
	report(float64(floor.wall.Nanoseconds())/n, "floor-ns/row")
	report(float64(floor.mallocs)/n, "floor-allocs/row")
	report(float64(run.wall.Nanoseconds())/n, "ns/row")
	report(float64(run.mallocs)/n, "allocs/row")
	report(float64(run.wall)/float64(floor.wall), "ratio")
	report(float64(run2.wall.Nanoseconds())/n, "2core-ns/row")
	report(float64(run2.wall)/float64(floor.wall), "2core-ratio")
	report(n, "rows")
}

// partitioned8 is the quickstart's within-watermark query alone, its
// state over 8 shuffle partitions.
const partitioned8 = `
name: e2e-partitioned
seed: 42
duration: %ds
trigger: 10s
workload:
  rate: %d/s
  ids: uuid
  customers: 10000
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.05
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 30s, p99: 5m}
    timestamp: restamp
queries:
  - name: within-watermark
    query: withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])
spark:
  partitions: 8
`

// BenchmarkCores runs a scenario with GOMAXPROCS 1 and Workers 1, then
// with GOMAXPROCS 2 and Workers 2, checks that the results are the same,
// and reports per stream row ns/row (two cores), 1core-ns/row, and
// speedup, the one-core wall time over the two-core one, and cores-used,
// the two-core run's CPU time over its wall time (below 2 when the
// machine's other load took the second core), and the CPU time per row of
// each run, with the kernel's share of it (page faults of fresh memory,
// futex waits), which tell more cores apart from more work per row:
//
//	scenario=partitions8   one query over 8 partitions (target >= 1.6)
//	scenario=quickstart    the quickstart's three queries (target >= 1.7)
func BenchmarkCores(b *testing.B) {
	for _, c := range coreScenarios {
		b.Run("scenario="+c.name, func(b *testing.B) {
			b.StopTimer()
			b.ReportAllocs()
			benchCores(b, b, c.text, e2eRows(b), b.ReportMetric)
		})
	}
}

var coreScenarios = []struct{ name, text string }{{"partitions8", partitioned8}, {"quickstart", quickstartAt}}

// benchCores is one scenario of BenchmarkCores over about rows rows; the
// benchmark timer, if b is not nil, runs around the two-core run.
func benchCores(t testing.TB, b *testing.B, text string, rows0 int, report func(float64, string)) {
	s := e2eScenario(t, text, rows0)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var one, two string
	var rows int64
	if b != nil {
		// A first run, untimed, grows the heap: otherwise the one-core
		// run, measured first, would pay the page faults of fresh memory
		// that the two-core run then reuses, inflating the speedup.
		runSummary(t, s, 1)
	}
	m1 := measure(nil, func() { one, rows = runSummary(t, s, 1) })
	runtime.GOMAXPROCS(2)
	m2 := measure(b, func() { two, _ = runSummary(t, s, 2) })
	if one != two {
		t.Fatal("the run on two cores differs from the run on one")
	}
	n := float64(rows)
	report(float64(m2.wall.Nanoseconds())/n, "ns/row")
	report(float64(m1.wall.Nanoseconds())/n, "1core-ns/row")
	report(float64(m1.wall)/float64(m2.wall), "speedup")
	report(float64(m2.cpu)/float64(m2.wall), "cores-used")
	report(float64(m1.cpu.Nanoseconds())/n, "1core-cpu-ns/row")
	report(float64(m2.cpu.Nanoseconds())/n, "cpu-ns/row")
	report(share(m1.sys, m1.cpu), "1core-sys-share")
	report(share(m2.sys, m2.cpu), "sys-share")
	report(n, "rows")
}

// share returns part/whole, or a tiny positive number when part is 0 (a
// share of 0 is a measurement, but the smoke test wants every metric
// positive).
func share(part, whole time.Duration) float64 {
	if whole <= 0 || part <= 0 {
		return 1e-9
	}
	return float64(part) / float64(whole)
}

// TestBenchmarksSmoke runs the benchmarks above in their short form
// (smokeRows rows), so that `go test ./...` keeps them working: every
// metric is reported, positive and finite.
func TestBenchmarksSmoke(t *testing.T) {
	check := func(what string) func(float64, string) {
		return func(v float64, unit string) {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("%s: %s = %v", what, unit, v)
			}
		}
	}
	benchFloor(t, nil, smokeRows, check("floor"))
	for _, c := range coreScenarios {
		benchCores(t, nil, c.text, smokeRows, check(c.name))
	}
}
