package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The end-to-end benchmarks run runner.Run, the whole of `simulate run`
// but the results files and the report: generation, every query's
// micro-batches, ground-truth accounting, timeseries records and progress
// lines. b.N is the number of rows of the scenario's stream (the duration
// is chosen for it at the scenario's rate), so ns/op is per stream row and
// a fixed -benchtime Nx is a scenario of about N rows:
//
//	go test ./sim/runner -run '^$' -bench 'Run' -benchtime 10000000x -count 3
//
// A smoke run (b.N below smokeRows, e.g. -benchtime=1x) or -short runs a
// scenario of smokeRows rows.

// e2eRate is the scenario's rate of new events per second. With 5% of
// events resent 1.5 times on average, the stream has about 1.075 rows per
// event.
const e2eRate = 5000

// rowsPerEvent is the stream's rows per generated event, to size the
// scenario's duration for b.N rows.
const rowsPerEvent = 1.075

// smokeRows is the stream size of a smoke run or of -short.
const smokeRows = 50_000

// quickstartAt is the quickstart workload and its three queries (the three
// ways to deduplicate in Spark) at e2eRate events/s, for the given
// duration: experiments/quickstart.yaml scaled up 10x in rate.
const quickstartAt = `
name: e2e-quickstart
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
  - name: pair-keyed
    query: withWatermark("event_time", "10 minutes").dropDuplicates(["event_id", "event_time"])
  - name: within-watermark
    query: withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
`

// sweepAt is the same workload with one within-watermark query swept over
// 8 delays: 8 jobs, the parallel runner's unit of work.
const sweepAt = `
name: e2e-sweep
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
sweep:
  delay: [1m, 2m, 3m, 5m, 8m, 10m, 15m, 20m]
`

// e2eScenario returns the scenario text for about rows stream rows.
func e2eScenario(b testing.TB, text string, rows int) *scenario.Scenario {
	secs := max(10, int(float64(rows)/rowsPerEvent/e2eRate))
	s, err := scenario.Parse(fmt.Appendf(nil, text, secs, e2eRate), "e2e.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// e2eRows is the stream size a benchmark with b.N uses.
func e2eRows(b *testing.B) int {
	if testing.Short() || b.N < smokeRows {
		return smokeRows
	}
	return b.N
}

// cpuSplit returns the process's user and system CPU time so far.
func cpuSplit() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// measured is one timed loop: wall clock, CPU time and allocations.
type measured struct {
	wall, cpu time.Duration
	sys       time.Duration // the part of cpu spent in the kernel
	mallocs   uint64
}

// measure runs f once and measures it; the benchmark timer runs only
// around f when b is not nil.
func measure(b *testing.B, f func()) measured {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	if b != nil {
		b.StartTimer()
	}
	u0, s0 := cpuSplit()
	t0 := time.Now()
	f()
	wall := time.Since(t0)
	u1, s1 := cpuSplit()
	m := measured{wall: wall, cpu: u1 - u0 + s1 - s0, sys: s1 - s0}
	if b != nil {
		b.StopTimer()
	}
	runtime.ReadMemStats(&ms)
	m.mallocs = ms.Mallocs - mallocs
	return m
}

// streamKeys generates the scenario's stream once, as the runner's jobs
// do, and returns its event ids back to back (36 bytes each) in arrival
// order: the bare map loop's input.
func streamKeys(b *testing.B, s *scenario.Scenario, rows int) []byte {
	g, err := generators.New(s.Generator())
	if err != nil {
		b.Fatal(err)
	}
	// Sized for the stream up front: growing a slice of hundreds of MB
	// by appends cost more than the map loop itself.
	keys := make([]byte, 0, (rows+rows/8)*36)
	var r generators.Row
	for g.Next(&r) {
		keys = append(keys, r.EventID[:]...)
	}
	return keys
}

// mapLoop is the bare baseline of issue 6: one Go map of event ids, one
// lookup per row and, for a new id, one insert (which allocates the key's
// string), over the stream's rows in arrival order. It keeps every id, like
// the unbounded query; it returns the ids kept so that the loop is not
// optimized away.
func mapLoop(keys []byte) int {
	m := map[string]struct{}{}
	for i := 0; i+36 <= len(keys); i += 36 {
		k := keys[i : i+36]
		if _, ok := m[string(k)]; !ok {
			m[string(k)] = struct{}{}
		}
	}
	return len(m)
}

// BenchmarkRun runs the scenarios end to end and reports, per stream row:
//
//	ns/row, cpu-ns/row, allocs/row   runner.Run (generation, every query, metrics)
//	rows/s                           stream rows per wall-clock second
//	base-ns/row, base-cpu-ns/row     the bare map loop over the same rows
//	ratio, cpu-ratio                 ns/row over base-ns/row (wall, CPU)
//
// scenario=quickstart/cores=1 runs the quickstart's three queries with
// GOMAXPROCS 1 and Workers 1, the map loop likewise (target: ratio <= 4).
// scenario=sweep8 runs one query at 8 delays with GOMAXPROCS 2, serially
// (Workers 1) and in parallel (Workers 2), and reports speedup, the
// serial wall time over the parallel one (target: >= 1.7), and
// cores-used, the parallel run's CPU time over its wall time (below 2 when
// the machine's other load took the second core).
func BenchmarkRun(b *testing.B) {
	b.Run("scenario=quickstart/cores=1", func(b *testing.B) {
		b.StopTimer()
		b.ReportAllocs()
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		s := e2eScenario(b, quickstartAt, e2eRows(b))
		keys := streamKeys(b, s, e2eRows(b))
		rows := len(keys) / 36

		var res *runner.Results
		run := measure(b, func() {
			var err error
			res, err = runner.Run(context.Background(), s, runner.Options{Workers: 1})
			if err != nil {
				b.Fatal(err)
			}
		})
		for _, q := range res.Summary.Queries {
			if q.InputRows != int64(rows) {
				b.Fatalf("query %s read %d rows, the stream has %d", q.Name, q.InputRows, rows)
			}
		}
		records := 0
		for _, err := range res.Rows() {
			if err != nil {
				b.Fatal(err)
			}
			records++
		}
		res.Close()
		res = nil
		var kept int
		base := measure(nil, func() { kept = mapLoop(keys) })
		if kept == 0 {
			b.Fatal("the map loop kept nothing")
		}
		n := float64(rows)
		b.ReportMetric(float64(run.wall.Nanoseconds())/n, "ns/row")
		b.ReportMetric(float64(run.cpu.Nanoseconds())/n, "cpu-ns/row")
		b.ReportMetric(float64(run.mallocs)/n, "allocs/row")
		b.ReportMetric(n/run.wall.Seconds(), "rows/s")
		b.ReportMetric(float64(base.wall.Nanoseconds())/n, "base-ns/row")
		b.ReportMetric(float64(base.cpu.Nanoseconds())/n, "base-cpu-ns/row")
		b.ReportMetric(float64(run.wall)/float64(base.wall), "ratio")
		b.ReportMetric(float64(run.cpu)/float64(max(base.cpu, 1)), "cpu-ratio")
		b.ReportMetric(n, "rows")
		b.ReportMetric(float64(records), "batches")
	})
	b.Run("scenario=sweep8", func(b *testing.B) {
		b.StopTimer()
		b.ReportAllocs()
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
		s := e2eScenario(b, sweepAt, e2eRows(b))
		var serialSum, parallelSum []byte
		var streamRows int64
		runWith := func(bb *testing.B, workers int, sum *[]byte) measured {
			return measure(bb, func() {
				res, err := runner.Run(context.Background(), s, runner.Options{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				defer res.Close()
				streamRows = res.Summary.Queries[0].InputRows
				// Results must not depend on the workers (timings aside).
				for i := range res.Summary.Queries {
					res.Summary.Queries[i].WallSeconds = 0
					res.Summary.Queries[i].EventsPerSecond = 0
				}
				if *sum, err = json.Marshal(res.Summary.Queries); err != nil {
					b.Fatal(err)
				}
			})
		}
		serial := runWith(nil, 1, &serialSum)
		parallel := runWith(b, 2, &parallelSum)
		if string(serialSum) != string(parallelSum) {
			b.Fatal("the parallel sweep's results differ from the serial sweep's")
		}
		rows := float64(streamRows)
		b.ReportMetric(float64(parallel.wall.Nanoseconds())/rows, "ns/row")
		b.ReportMetric(float64(serial.wall.Nanoseconds())/rows, "serial-ns/row")
		b.ReportMetric(float64(serial.wall)/float64(parallel.wall), "speedup")
		b.ReportMetric(float64(parallel.cpu)/float64(parallel.wall), "cores-used")
		b.ReportMetric(float64(serial.cpu)/float64(serial.wall), "serial-cores-used")
		b.ReportMetric(float64(parallel.cpu.Nanoseconds())/rows, "cpu-ns/row")
		b.ReportMetric(float64(serial.cpu.Nanoseconds())/rows, "serial-cpu-ns/row")
		b.ReportMetric(rows, "rows")
	})
}
