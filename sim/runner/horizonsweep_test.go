package runner

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// mixedHead is the traffic of the mixed sweeps: retries with a lognormal
// gap around the swept horizons, so every horizon misses a different
// number of copies.
const mixedHead = `
name: mixed
seed: 23
duration: 4m
trigger: 5s
workload:
  rate: 60/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.3
    delay: {dist: lognormal, median: 30s, p99: 3m}
queries:
`

// flinkFirstSQL is Flink's keep-first proctime dedup on event_id.
const flinkFirstSQL = `SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1`

// mixedSweep has a query of each engine (Flink with and without a TTL,
// Beam in both time domains), a Spark query without a watermark, and a
// sweep of three values.
const mixedSweep = mixedHead + `
  - name: spark-within
    query: withWatermark("event_time", "5 minutes").dropDuplicatesWithinWatermark(["event_id"])
  - name: spark-unbounded
    query: dropDuplicates(["event_id"])
  - name: flink-ttl
    engine: flink
    query: ` + flinkFirstSQL + `
    options: {table.exec.state.ttl: 1 h, version: "2.0"}
  - name: flink-no-ttl
    engine: flink
    query: ` + flinkFirstSQL + `
  - name: kstreams
    engine: kafka-streams
    window: 1 hour
  - name: beam-proc
    engine: beam
  - name: beam-event
    engine: beam
    timeDomain: event
    duration: 1 hour
sweep:
  delay: [20s, 1m, 150s]
`

// TestSweepSetsEveryEnginesHorizon checks the jobs of a sweep over
// queries of every engine: each query with a horizon runs once per swept
// value, named NAME@VALUE, with the value as its delay and as its
// horizon (Spark's withWatermark delay, Kafka Streams' window, Beam's
// duration, shown in the query text; Flink's TTL is checked by
// TestSweptJobsEqualHandSetQueries); the Spark query without a watermark
// runs once.
func TestSweepSetsEveryEnginesHorizon(t *testing.T) {
	s := load(t, mixedSweep)
	if n := s.Jobs(); n != 1+6*3 {
		t.Errorf("Scenario.Jobs() = %d, want 19", n)
	}
	jobs, err := Jobs(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, j := range jobs {
		if j.Index != i {
			t.Errorf("job %d has index %d", i, j.Index)
		}
		d := "nil"
		if j.Delay != nil {
			d = fmt.Sprint(*j.Delay)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s", j.FileName, j.Name, d, j.Engine))
	}
	want := []string{
		"spark-within@20s spark-within 20 ", "spark-within@1m spark-within 60 ", "spark-within@2m30s spark-within 150 ",
		"spark-unbounded spark-unbounded nil ",
		"flink-ttl@20s flink-ttl 20 flink", "flink-ttl@1m flink-ttl 60 flink", "flink-ttl@2m30s flink-ttl 150 flink",
		"flink-no-ttl@20s flink-no-ttl 20 flink", "flink-no-ttl@1m flink-no-ttl 60 flink", "flink-no-ttl@2m30s flink-no-ttl 150 flink",
		"kstreams@20s kstreams 20 kafka-streams", "kstreams@1m kstreams 60 kafka-streams", "kstreams@2m30s kstreams 150 kafka-streams",
		"beam-proc@20s beam-proc 20 beam", "beam-proc@1m beam-proc 60 beam", "beam-proc@2m30s beam-proc 150 beam",
		"beam-event@20s beam-event 20 beam", "beam-event@1m beam-event 60 beam", "beam-event@2m30s beam-event 150 beam",
	}
	if !slices.Equal(got, want) {
		t.Errorf("jobs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	texts := map[string]string{
		"spark-within@1m": `withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])`,
		"flink-ttl@1m":    flinkFirstSQL,
		"kstreams@2m30s":  `{"engine":"kafka-streams","window":"2m30s","time":"stream"}`,
		"beam-proc@20s":   `{"engine":"beam","timeDomain":"processing","duration":"20s"}`,
		"beam-event@1m":   `{"engine":"beam","timeDomain":"event","duration":"1m"}`,
	}
	for _, j := range jobs {
		if w, ok := texts[j.FileName]; ok && j.Query != w {
			t.Errorf("%s: query %s, want %s", j.FileName, j.Query, w)
		}
	}
}

// handSet returns the scenario of one query with its horizon set by hand
// to the swept value v, written the way a user writes it, and no sweep.
func handSet(name string, v string) string {
	flinkTTL := map[string]string{"20s": "20 s", "1m": "1 min", "2m30s": "150 s"}[v]
	q := map[string]string{
		"flink-ttl":    "engine: flink\n    query: " + flinkFirstSQL + "\n    options: {table.exec.state.ttl: " + flinkTTL + `, version: "2.0"}`,
		"flink-no-ttl": "engine: flink\n    query: " + flinkFirstSQL + "\n    options: {table.exec.state.ttl: " + flinkTTL + "}",
		"kstreams":     "engine: kafka-streams\n    window: " + v,
		"beam-proc":    "engine: beam\n    duration: " + v,
		"beam-event":   "engine: beam\n    timeDomain: event\n    duration: " + v,
	}[name]
	return mixedHead + "  - name: " + name + "\n    " + q + "\n"
}

// TestSweptJobsEqualHandSetQueries checks that each sweep job of a query
// of another engine than Spark counts exactly what a run of that query
// alone, with its horizon set by hand to the swept value, counts: the
// same summary (but the delay, which only the sweep job has), the same
// timeseries rows (but the delay column) and the same progress file,
// byte for byte. A sweep that left the option as written, or set it to
// another value, differs (the lognormal retry gap makes every horizon
// miss a different number of copies: checked below).
func TestSweptJobsEqualHandSetQueries(t *testing.T) {
	sweepDir := filepath.Join(t.TempDir(), "sweep")
	sw := run(t, load(t, mixedSweep), 2)
	if err := Write(sweepDir, sw); err != nil {
		t.Fatal(err)
	}
	missed := map[string]map[int64]bool{}
	for _, q := range sw.Summary.Queries {
		if q.Engine == "" {
			continue
		}
		if q.Delay == nil {
			t.Fatalf("%s: sweep job without a delay", q.Name)
		}
		v := map[float64]string{20: "20s", 60: "1m", 150: "2m30s"}[*q.Delay]
		file := q.Name + "@" + v
		t.Run(file, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "one")
			one := run(t, load(t, handSet(q.Name, v)), 1)
			if err := Write(dir, one); err != nil {
				t.Fatal(err)
			}
			if len(one.Summary.Queries) != 1 {
				t.Fatalf("%d queries in the hand-set run", len(one.Summary.Queries))
			}
			h := one.Summary.Queries[0]
			s := q
			s.Delay, s.EventsPerSecond, s.WallSeconds, h.EventsPerSecond, h.WallSeconds = nil, 0, 0, 0, 0
			if js(s) != js(h) {
				t.Errorf("summary of the sweep job:\n%s\nof the hand-set query:\n%s", js(s), js(h))
			}
			if h.TrueDuplicates == 0 || h.PeakStateRows == 0 {
				t.Errorf("hand-set run with no duplicates or no state: %+v", h)
			}
			a, errA := os.ReadFile(filepath.Join(sweepDir, "progress", file+".jsonl"))
			b, errB := os.ReadFile(filepath.Join(dir, "progress", q.Name+".jsonl"))
			if errA != nil || errB != nil || len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("progress of %s differs from the hand-set query's (%v, %v)", file, errA, errB)
			}
			rowsA := timeseriesOf(t, sweepDir, q.Name, fmt.Sprint(*q.Delay))
			rowsB := timeseriesOf(t, dir, q.Name, "")
			if len(rowsA) == 0 || !slices.Equal(rowsA, rowsB) {
				t.Errorf("timeseries of %s: %d rows, the hand-set query's %d, or they differ", file, len(rowsA), len(rowsB))
			}
			if missed[q.Name] == nil {
				missed[q.Name] = map[int64]bool{}
			}
			missed[q.Name][q.MissedDuplicates] = true
		})
	}
	if len(missed) != 5 {
		t.Errorf("%d non-Spark queries swept, want 5", len(missed))
	}
	for name, m := range missed {
		if len(m) != 3 {
			t.Errorf("%s: %d distinct missed-duplicate counts over 3 horizons, want 3 (the sweep must be able to tell a wrong horizon)", name, len(m))
		}
	}
}

// timeseriesOf returns the rows of dir's timeseries.csv for query with
// the delay column delay, without the query and delay columns.
func timeseriesOf(t *testing.T, dir, query, delay string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "timeseries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], metrics.TimeseriesHeader) {
		t.Fatalf("timeseries header %v", recs[0])
	}
	var out []string
	for _, r := range recs[1:] {
		if r[0] == query && r[1] == delay {
			out = append(out, strings.Join(r[2:], ","))
		}
	}
	return out
}

// TestSweepRefusesAHorizonAnEngineRefuses checks that Jobs refuses a
// swept value an engine refuses (a scenario that skipped validation):
// the error names the query and the key the value would set.
func TestSweepRefusesAHorizonAnEngineRefuses(t *testing.T) {
	s := load(t, mixedSweep)
	s.Sweep = &scenario.Sweep{Delay: append(s.Sweep.Delay[:1:1], 0)}
	_, err := Jobs(s)
	if err == nil || !strings.Contains(err.Error(), "queries[2] with options.table.exec.state.ttl 0s") {
		t.Errorf("Jobs with a swept 0: %v", err)
	}
}
