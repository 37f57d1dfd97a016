package runner

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// benchLogScenario is the scenario of BENCHMARKS.md's "Event logs" at
// rate events a second for two minutes: uuid ids, exponential delays,
// 10% of events resent with re-stamped event times, one Spark query.
func benchLogScenario(rate int) string {
	return fmt.Sprintf(`
name: gen
seed: 5
duration: 2m
trigger: 10s
workload:
  rate: %d/s
  ids: uuid
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.1
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 20s, p99: 2m}
    timestamp: restamp
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
`, rate)
}

// cpuNow is the process's user and system CPU time.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLogRun measures a run of a log against the generated run of
// the same scenario, in the same process and minutes: the scenario's
// rows are written as a CSV log (epoch microseconds, uuid ids) before
// the timer; then, per iteration, the generated run, and the log's
// load (its first pass) and run. ns/row and cpu-ns/row are the log's,
// gen-ns/row and gen-cpu-ns/row the generated run's, ratio and
// cpu-ratio the log's over the generated (the log's rows a second are
// 1/ratio of the generated run's).
func BenchmarkLogRun(b *testing.B) {
	for _, rate := range []int{4000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			gen, err := scenario.Parse([]byte(benchLogScenario(rate)), "gen.yaml")
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			path := filepath.Join(dir, "log.csv")
			rows := writeLogCSV(b, gen, path)
			logYAML := `
name: log
duration: 2m
trigger: 10s
workload:
  events: {file: ` + path + `, id: event_id, eventTime: event_time, arrivalTime: arrival, timeUnit: us}
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
`
			var genWall, genCPU, logWall, logCPU time.Duration
			b.ResetTimer()
			for range b.N {
				t0, c0 := time.Now(), cpuNow()
				r, err := runOpts(b, gen, Options{Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				t1, c1 := time.Now(), cpuNow()
				lg, err := scenario.Parse([]byte(logYAML), "log.yaml")
				if err != nil {
					b.Fatal(err)
				}
				l, err := runOpts(b, lg, Options{Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				t2, c2 := time.Now(), cpuNow()
				genWall, genCPU = genWall+t1.Sub(t0), genCPU+c1-c0
				logWall, logCPU = logWall+t2.Sub(t1), logCPU+c2-c1
				if a, b2 := r.Summary.Queries[0].InputRows, l.Summary.Queries[0].InputRows; a != b2 || a != int64(rows) {
					b.Fatalf("input rows: generated %d, log %d, written %d", a, b2, rows)
				}
			}
			n := float64(rows) * float64(b.N)
			b.ReportMetric(float64(logWall.Nanoseconds())/n, "ns/row")
			b.ReportMetric(float64(logCPU.Nanoseconds())/n, "cpu-ns/row")
			b.ReportMetric(float64(genWall.Nanoseconds())/n, "gen-ns/row")
			b.ReportMetric(float64(genCPU.Nanoseconds())/n, "gen-cpu-ns/row")
			b.ReportMetric(float64(logWall)/float64(genWall), "ratio")
			b.ReportMetric(float64(logCPU)/float64(genCPU), "cpu-ratio")
		})
	}
}
