package runner

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// logQueries are the queries both runs of TestLogGivesScenarioCounters
// make: Spark's three dedups, and a query of each other engine.
const logQueries = `
queries:
  - name: spark-unbounded
    query: dropDuplicates(["event_id"])
  - name: spark-pair-keyed
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])
  - name: spark-within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: spark-customer
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["customer_id", "attempt"])
  - name: flink-keep-first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1
    options: {table.exec.state.ttl: 1 min}
  - name: kstreams-stream
    engine: kafka-streams
    window: 2 minutes
  - name: beam-event
    engine: beam
    timeDomain: event
    duration: 1 minute
`

// logScenario is a generated scenario with retries (re-stamped), bad
// clocks and a bad-clock fault.
func logScenario(ids string) string {
	return `
name: gen
seed: 11
duration: 4m
trigger: 10s
workload:
  rate: 40/s
  ids: ` + ids + `
  customers: 50
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.2
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 20s, p99: 2m}
    timestamp: restamp
  futureTimestamps: {probability: 0.002, skew: {dist: constant, value: 10m}}
faults:
  - {at: 1m, kind: bad-clock, skew: 30m}
` + logQueries
}

// writeLog writes the rows of sc's generator as a log in dir: two CSV
// files, the second gzipped, the times as epoch microseconds (event
// time) and RFC 3339 (ingest_time, arrival).
func writeLog(t *testing.T, sc *scenario.Scenario, dir string) int {
	t.Helper()
	g, err := generators.New(sc.Generator())
	if err != nil {
		t.Fatal(err)
	}
	var rows []generators.Row
	var r generators.Row
	for g.Next(&r) {
		rows = append(rows, r)
	}
	rfc := func(us int64) string { return time.UnixMicro(us).UTC().Format(time.RFC3339Nano) }
	half := len(rows) / 2
	for part, span := range [][]generators.Row{rows[:half], rows[half:]} {
		var b bytes.Buffer
		b.WriteString("event_id,customer_id,event_time,ingest_time,attempt,payload,arrival\n")
		for _, r := range span {
			id := string(r.EventID[:])
			if g.IDs() == generators.IntIDs {
				id = fmt.Sprint(r.EventNum)
			}
			fmt.Fprintf(&b, "%s,%d,%d,%s,%d,%d,%s\n", id, r.CustomerID, r.EventTime, rfc(r.IngestTime), r.Attempt, r.Payload, rfc(r.Arrival))
		}
		data := b.Bytes()
		name := fmt.Sprintf("part-%d.csv", part)
		if part == 1 {
			var z bytes.Buffer
			w := gzip.NewWriter(&z)
			w.Write(data)
			w.Close()
			data, name = z.Bytes(), name+".gz"
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return len(rows)
}

// logOf is the log scenario of the rows writeLog wrote to dir.
func logOf(dir string) string {
	return `
name: log
duration: 4m
trigger: 10s
workload:
  events: {file: ` + dir + `, id: event_id, eventTime: event_time, arrivalTime: arrival, timeUnit: auto}
` + logQueries
}

// TestLogGivesScenarioCounters is issue 30's first Done-when: a
// scenario's own rows, written as a log and run as workload.events,
// give the scenario's counters exactly, summary and timeseries, for
// Spark, Flink, Kafka Streams and Beam queries.
func TestLogGivesScenarioCounters(t *testing.T) {
	for _, ids := range []string{"uuid", "int"} {
		t.Run("ids="+ids, func(t *testing.T) {
			gen := load(t, logScenario(ids))
			dir := t.TempDir()
			n := writeLog(t, gen, dir)
			lg := load(t, logOf(dir))
			if !lg.Start.Equal(gen.Start) {
				t.Fatalf("the log's grid starts at %s, the scenario's at %s", lg.Start, gen.Start)
			}
			if lg.Workload.IDs != gen.Workload.IDs {
				t.Fatalf("the log's ids are %s, the scenario's %s", lg.Workload.IDs, gen.Workload.IDs)
			}
			a, b := run(t, gen, 2), run(t, lg, 2)
			checkIdentities(t, b)
			for i := range a.Summary.Queries {
				qa, qb := a.Summary.Queries[i], b.Summary.Queries[i]
				if qa.InputRows != int64(n) {
					t.Fatalf("%s: %d input rows, the log has %d", qa.Name, qa.InputRows, n)
				}
				qa.EventsPerSecond, qa.WallSeconds, qb.EventsPerSecond, qb.WallSeconds = 0, 0, 0, 0
				if ja, jb := js(qa), js(qb); ja != jb {
					t.Errorf("query %s: summaries differ:\ngenerated %s\nlog       %s", qa.Name, ja, jb)
				}
			}
			ta, tb := timeseries(t, a), timeseries(t, b)
			if len(ta) == 0 || !bytes.Equal(ta, tb) {
				la, lb := strings.Split(string(ta), "\n"), strings.Split(string(tb), "\n")
				for i := range min(len(la), len(lb)) {
					if la[i] != lb[i] {
						t.Fatalf("timeseries differ at line %d:\ngenerated %s\nlog       %s", i+1, la[i], lb[i])
					}
				}
				t.Fatalf("timeseries differ: %d and %d lines", len(la), len(lb))
			}
			for _, q := range a.Summary.Queries {
				if !bytes.Equal(progress(t, a, q.Name), progress(t, b, q.Name)) {
					t.Errorf("%s: progress lines differ", q.Name)
				}
			}
		})
	}
}

// stopLogAfter cancels the run after n rows of a log.
type stopLogAfter struct {
	*generators.LogSource
	n      int
	cancel func()
}

func (s *stopLogAfter) Next(r *generators.Row) bool {
	if s.n--; s.n == 0 {
		s.cancel()
	}
	return s.LogSource.Next(r)
}

// TestLogResumes: a resumable run of a log killed twice resumes to the
// uninterrupted run's results (the log source's position is the rows
// read, reread on resume).
func TestLogResumes(t *testing.T) {
	gen := load(t, logScenario("uuid"))
	dir := t.TempDir()
	writeLog(t, gen, dir)
	spark := strings.Split(logOf(dir), "  - name: flink-keep-first")[0]
	sc := load(t, spark+"faults:\n  - {at: 100s, kind: restart}\n")
	want := run(t, sc, 2)
	ck := filepath.Join(t.TempDir(), "ck")
	for _, stop := range []int{3000, 8000} {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := Run(ctx, sc, Options{
			Workers:       2,
			CheckpointDir: ck,
			SnapshotEvery: time.Nanosecond,
			hooks: testHooks{NewSource: func(s *scenario.Scenario) (Source, error) {
				g, err := generators.NewLogSource(s.Workload.Events)
				return &stopLogAfter{LogSource: g, n: stop, cancel: cancel}, err
			},
			},
		})
		cancel()
		if err == nil {
			t.Fatalf("run interrupted after %d rows did not fail", stop)
		}
	}
	got, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: ck, SnapshotEvery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := summaryJSON(t, want), summaryJSON(t, got); a != b {
		t.Fatalf("resumed summary differs:\n%s\n%s", a, b)
	}
	if !bytes.Equal(timeseries(t, want), timeseries(t, got)) {
		t.Fatal("resumed timeseries differs")
	}
}

var (
	writeLogOf = flag.String("write-log-of", "", "TestWriteLogOf: the scenario whose rows to write as a log")
	writeLogTo = flag.String("write-log", "", "TestWriteLogOf: the CSV file to write")
)

// TestWriteLogOf writes a scenario's rows as a CSV log, for the
// benchmarks of BENCHMARKS.md ("Event logs"): with -write-log-of
// SCENARIO -write-log FILE, the columns event_id, customer_id,
// event_time, ingest_time, attempt, payload, arrival (times in epoch
// microseconds). Without the flags it writes nothing and passes.
func TestWriteLogOf(t *testing.T) {
	if *writeLogOf == "" || *writeLogTo == "" {
		return
	}
	sc, err := scenario.Load(*writeLogOf)
	if err != nil {
		t.Fatal(err)
	}
	n := writeLogCSV(t, sc, *writeLogTo)
	t.Logf("%d rows written to %s", n, *writeLogTo)
}

// writeLogCSV writes the rows of sc's generator as a CSV log at path:
// event_id, customer_id, event_time, ingest_time, attempt, payload,
// arrival (times in epoch microseconds). It returns the rows written.
func writeLogCSV(t testing.TB, sc *scenario.Scenario, path string) int {
	t.Helper()
	g, err := generators.New(sc.Generator())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("event_id,customer_id,event_time,ingest_time,attempt,payload,arrival\n")
	var r generators.Row
	var buf []byte
	n := 0
	for g.Next(&r) {
		buf = buf[:0]
		if g.IDs() == generators.IntIDs {
			buf = strconv.AppendInt(buf, r.EventNum, 10)
		} else {
			buf = append(buf, r.EventID[:]...)
		}
		for _, v := range []int64{r.CustomerID, r.EventTime, r.IngestTime, r.Attempt, r.Payload, r.Arrival} {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, v, 10)
		}
		buf = append(buf, '\n')
		w.Write(buf)
		n++
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}
