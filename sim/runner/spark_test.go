package runner

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// withoutSpark returns a query summary without its spark fields and its
// wall-clock fields, as JSON.
func withoutSpark(q metrics.QuerySummary) string {
	q.SparkSummary = nil
	q.EventsPerSecond, q.WallSeconds = 0, 0
	return js(q)
}

// sparkFaulty is `small` with a restart and a lost checkpoint.
const sparkFaulty = small + "faults:\n  - {at: 100s, kind: restart}\n  - {at: 170s, kind: lose-checkpoint}\n"

// TestPartitionsChangeNoCounter runs the same scenario without a spark:
// block and with its state split over 1, 7 and 200 partitions (no cost
// block: batches form as without one), with its faults (a restart and a
// lost checkpoint) on the memory store and on Pebble, and without them
// for 200 partitions (whose checkpoint files make the faulty run slow):
// every summary field but the spark ones, every timeseries row and every
// progress line are the same. The spark fields say how the state was
// split: the mean of the peak per partition is the peak state over the
// partition count.
func TestPartitionsChangeNoCounter(t *testing.T) {
	wants := map[bool]*Results{true: run(t, load(t, sparkFaulty), 2), false: run(t, load(t, small), 2)}
	for _, c := range []struct {
		partitions int
		store      string
		faults     bool
	}{{1, "memory", true}, {7, "memory", true}, {7, "pebble", true}, {200, "memory", false}} {
		t.Run(fmt.Sprintf("partitions=%d/store=%s/faults=%v", c.partitions, c.store, c.faults), func(t *testing.T) {
			doc := small
			if c.faults {
				doc = sparkFaulty
			}
			want := wants[c.faults]
			sc := load(t, doc+fmt.Sprintf("spark:\n  partitions: %d\n", c.partitions))
			got, err := runOpts(t, sc, Options{Workers: 2, Store: c.store})
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range got.Summary.Queries {
				w := want.Summary.Queries[i]
				w.Store = q.Store
				if a, b := withoutSpark(w), withoutSpark(q); a != b {
					t.Errorf("query %s differs:\n%s\n%s", q.Name, a, b)
				}
				if q.SparkSummary == nil {
					t.Fatalf("query %s: no spark fields", q.Name)
				}
				p := q.Partitions
				if p.Count != c.partitions {
					t.Errorf("query %s: %d partitions, want %d", q.Name, p.Count, c.partitions)
				}
				// The lost checkpoint empties the state, so the peak
				// may come before or after it; the peak of the mean is
				// the peak state over the partitions either way.
				if wantMean := float64(w.PeakStateRows) / float64(c.partitions); p.PeakRowsMean != wantMean {
					t.Errorf("query %s: peak mean rows per partition %g, want %d / %d = %g", q.Name, p.PeakRowsMean, w.PeakStateRows, c.partitions, wantMean)
				}
				if p.PeakRowsMax < int64(math.Ceil(p.PeakRowsMean)) || (c.partitions == 1 && p.PeakRowsMax != w.PeakStateRows) {
					t.Errorf("query %s: peak rows of the fullest partition %d, mean %g", q.Name, p.PeakRowsMax, p.PeakRowsMean)
				}
				if q.BatchDurationMs != nil {
					t.Errorf("query %s: batch durations without a cost block", q.Name)
				}
			}
			if !bytes.Equal(timeseries(t, want), timeseries(t, got)) {
				t.Error("timeseries differs")
			}
			for _, j := range want.Jobs {
				if !bytes.Equal(progress(t, want, j.FileName), progress(t, got, j.FileName)) {
					t.Errorf("progress of %s differs", j.FileName)
				}
			}
			rows, err := got.SparkRows()
			if err != nil {
				t.Fatal(err)
			}
			recs, err := got.Records()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(recs) {
				t.Fatalf("%d spark.csv rows, %d timeseries rows", len(rows), len(recs))
			}
			for i, r := range rows {
				// Without a cost block a batch takes no time: it ends
				// at its trigger, which is the timeseries' processing
				// time.
				if pt := metrics.FormatMillis(recs[i].ProcessingTime); r.Start != pt || r.End != pt || r.DurationMs != nil || r.InputRows != recs[i].InputRows {
					t.Fatalf("spark.csv row %d: %+v, timeseries %+v", i, r, recs[i])
				}
			}
		})
	}
}

// TestNoSparkBlockWritesNoSparkFile: without a spark: block there is no
// spark.csv and no spark field.
func TestNoSparkBlockWritesNoSparkFile(t *testing.T) {
	res := run(t, load(t, small), 2)
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, res); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "spark.csv")); err == nil {
		t.Error("spark.csv written without a spark: block")
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"batchDurationMs", "partitions", "executorPeakMemoryBytes", `"spark"`} {
		if bytes.Contains(data, []byte(f)) {
			t.Errorf("summary.json holds %s without a spark: block", f)
		}
	}
}

// TestFallsBehindWhenTheClosedFormSays: one partition on one core, and
// only the eviction scan costs (scanKeyNs = 100 µs, every other term 0).
// dropDuplicatesWithinWatermark with a delay (1 hour) longer than the run
// (30 minutes) evicts nothing, so its store holds every key: keys(t) =
// rate × t, about 100/s × t. A batch at t visits all of them, so it takes
// scanKeyNs × rate × t, and overruns the 10 s trigger from
//
//	t* = trigger / (scanKeyNs × rate) = 10 s / (100 µs × 100/s) = 1000 s
//
// on, every batch after it longer still: the query falls behind at t*
// and never catches up. Arrivals are a Poisson process, so the crossing
// moves by a few seconds of arrivals; the test allows one trigger.
func TestFallsBehindWhenTheClosedFormSays(t *testing.T) {
	sc := load(t, `name: behind
seed: 3
duration: 30m
trigger: 10s
workload: {rate: 100/s, ids: int}
queries:
  - name: within
    query: withWatermark("event_time", "1 hour").dropDuplicatesWithinWatermark(["event_id"])
spark:
  partitions: 1
  cost: {batchOverheadMs: 0, rowNs: 0, newKeyNs: 0, scanKeyNs: 100000, removeKeyNs: 0, partitionCommitMs: 0}
`)
	res := run(t, sc, 1)
	q := res.Summary.Queries[0]
	const trigger, scanNs, rate = 10.0, 100_000.0, 100.0
	want := trigger * 1e9 / (scanNs * rate)
	if q.FallingBehindSinceSeconds == nil {
		t.Fatalf("the query keeps up; the closed form says it falls behind at %g s", want)
	}
	if got := *q.FallingBehindSinceSeconds; math.Abs(got-want) > trigger {
		t.Errorf("falls behind at %g s, the closed form says %g s (±%g s)", got, want, trigger)
	}
	// The last batch in the window holds the run's 180,000 keys or so:
	// 18 s, the longest.
	if d := q.BatchDurationMs; d == nil || d.Max < 17_000 || d.Max > 19_000 {
		t.Errorf("batch durations %+v, want a max of about 18,000 ms", d)
	}
}

// sparkTrace runs a hand-written trace (rows: arrival and event id) with
// the given scenario and returns the results.
func sparkTrace(t *testing.T, doc string, rows []generators.Row) *Results {
	t.Helper()
	sc := load(t, doc)
	res, err := runOpts(t, sc, Options{
		Workers: 1,
		hooks: testHooks{NewSource: func(*scenario.Scenario) (Source, error) {
			return &handRows{rows: append([]generators.Row(nil), rows...)}, nil
		},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestBatchBoundariesUnderOverrun follows Spark's ProcessingTimeExecutor
// on a trace worked by hand: trigger 10 s, one partition on one core,
// and a cost of 1 s per row, nothing else (so a batch of n rows takes n
// seconds). dropDuplicates(["event_id"]) has no watermark, so no no-data
// batch runs. Rows (seconds after the start): 15 arrive at 5 s, 12 at
// 12 s, 4 at 33 s, 2 at 41 s, 1 at 75 s.
//
//	batch 0: starts at 10 (a boundary) with the 15 rows that arrived by
//	         then; takes 15 s, ends at 25, past the boundary 20: overran.
//	batch 1: starts at once, at 25, with the 12 rows of 12 s; takes 12 s,
//	         ends at 37, past the boundary 30: overran.
//	batch 2: starts at 37 with the 4 rows of 33 s; ends at 41, past 40:
//	         overran.
//	batch 3: starts at 41 with the 2 rows of 41 s (arrived by then); ends
//	         at 43, before the boundary 50: the next trigger waits for it.
//	50, 60, 70: no rows, no batch.
//	batch 4: starts at 80 with the row of 75 s; ends at 81.
//
// Lags (end minus the oldest row's arrival): 20, 25, 8, 2, 6 s, at most
// 25. Durations 15, 12, 4, 2, 1 s: median 4 s, p99 and max 15 s. With a
// traffic window of 40 s, the last batch that starts within it is batch
// 2, which overran, as did batches 1 and 0 before it, each starting at
// the previous one's end: the query falls behind from 10 s. With a window
// of 60 s, the last is batch 3, which did not overrun: it keeps up.
func TestBatchBoundariesUnderOverrun(t *testing.T) {
	doc := `name: trace
start: 2026-01-01T00:00:00Z
duration: %s
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: q
    query: dropDuplicates(["event_id"])
spark:
  partitions: 1
  cost: {batchOverheadMs: 0, rowNs: 1e9, newKeyNs: 0, scanKeyNs: 0, removeKeyNs: 0, partitionCommitMs: 0}
`
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var rows []generators.Row
	id := int64(0)
	for _, g := range []struct{ n, at int64 }{{15, 5}, {12, 12}, {4, 33}, {2, 41}, {1, 75}} {
		for range g.n {
			at := start + g.at*1e6
			rows = append(rows, generators.Row{EventNum: id, EventTime: at, IngestTime: at, Arrival: at, Truth: generators.Truth{Event: uint64(id), Copies: 1}})
			id++
		}
	}
	sec := func(s float64) string { return metrics.FormatMillis(start/1000 + int64(s*1000)) }
	want := []struct {
		start, end float64
		rows       int64
		lag        float64
	}{{10, 25, 15, 20}, {25, 37, 12, 25}, {37, 41, 4, 8}, {41, 43, 2, 2}, {80, 81, 1, 6}}

	res := sparkTrace(t, fmt.Sprintf(doc, "40s"), rows)
	got, err := res.SparkRows()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.BatchID != int64(i) || g.Start != sec(w.start) || g.End != sec(w.end) || g.InputRows != w.rows ||
			g.DurationMs == nil || *g.DurationMs != (w.end-w.start)*1000 || g.ProcessingLagSeconds == nil || *g.ProcessingLagSeconds != w.lag {
			t.Errorf("batch %d: %+v; want start %s, end %s, %d rows, lag %g s", i, g, sec(w.start), sec(w.end), w.rows, w.lag)
		}
	}
	q := res.Summary.Queries[0]
	// Over the traffic window: the batches that start by its last
	// trigger, 40 s (those at 10, 25 and 37 s: 15, 12 and 4 s long; the
	// one at 41 s starts after it), nearest rank.
	if d := q.BatchDurationMs; d == nil || *d != (metrics.DurationPercentiles{P50: 12000, P99: 15000, Max: 15000}) {
		t.Errorf("batch durations %+v, want p50 12000, p99 15000, max 15000 ms", d)
	}
	if l := q.MaxProcessingLagSeconds; l == nil || *l != 25 {
		t.Errorf("max processing lag %v, want 25 s", l)
	}
	if f := q.FallingBehindSinceSeconds; f == nil || *f != 10 {
		t.Errorf("window 40 s: falling behind since %v, want 10 s", f)
	}
	// The timeseries' processing time is each batch's start.
	recs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if metrics.FormatMillis(r.ProcessingTime) != sec(want[i].start) {
			t.Errorf("timeseries row %d at %s, want %s", i, metrics.FormatMillis(r.ProcessingTime), sec(want[i].start))
		}
	}

	res = sparkTrace(t, fmt.Sprintf(doc, "60s"), rows)
	if f := res.Summary.Queries[0].FallingBehindSinceSeconds; f != nil {
		t.Errorf("window 60 s: falling behind since %g s, want it keeping up (batch 3 did not overrun)", *f)
	}
}

// TestMaxRowsPerBatchTakesTheBacklogOldestFirst: after a stall, 500 rows
// arrive from 95 s to 99.99 s (one every 10 ms; row i at 95 + i/100 s)
// with event times i × 0.2 s after the start, and
// withWatermark(10 s).dropDuplicatesWithinWatermark runs with
// maxRowsPerBatch 120, no cost. At 100 s every row has arrived; each
// batch takes the 120 oldest left:
//
//	batch 0 at 100 s: rows 0-119 (event times 0 to 23.8 s), watermark 0;
//	         the watermark becomes 23.8 - 10 = 13.8 s
//	batch 1 at 110 s: rows 120-239 (24 to 47.8 s), watermark 13.8 s
//	batch 2 at 120 s: rows 240-359, watermark 37.8 s
//	batch 3 at 130 s: rows 360-479, watermark 61.8 s
//	batch 4 at 140 s: rows 480-499 (96 to 99.8 s), watermark 85.8 s
//	batch 5 at 150 s: a no-data batch, watermark 89.8 s
//
// The watermark advances batch by batch. Lags: a batch takes no time,
// so its lag is its trigger minus its oldest row's arrival, 100 + 10k -
// (95 + 1.2k) = 5 + 8.8k s. Without the limit, one batch at 100 s takes
// all 500 rows and the watermark jumps to 89.8 s at once.
func TestMaxRowsPerBatchTakesTheBacklogOldestFirst(t *testing.T) {
	doc := `name: backlog
start: 2026-01-01T00:00:00Z
duration: 2m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: q
    query: withWatermark("event_time", "10 seconds").dropDuplicatesWithinWatermark(["event_id"])
spark:
  partitions: 4
  maxRowsPerBatch: %d
`
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var rows []generators.Row
	for i := range int64(500) {
		rows = append(rows, generators.Row{EventNum: i, EventTime: start + i*200_000, IngestTime: start + 95e6 + i*10_000,
			Arrival: start + 95e6 + i*10_000, Truth: generators.Truth{Event: uint64(i), Copies: 1}})
	}
	ms := func(s float64) int64 { return start/1000 + int64(math.Round(s*1000)) }
	res := sparkTrace(t, fmt.Sprintf(doc, 120), rows)
	recs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		at     float64
		rows   int64
		wm     float64
		noData bool
	}{{100, 120, -1, false}, {110, 120, 13.8, false}, {120, 120, 37.8, false}, {130, 120, 61.8, false}, {140, 20, 85.8, false}, {150, 0, 89.8, true}}
	if len(recs) != len(want) {
		t.Fatalf("%d batches, want %d", len(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		wm := int64(0) // the epoch
		if w.wm >= 0 {
			wm = ms(w.wm)
		}
		if r.ProcessingTime != ms(w.at) || r.InputRows != w.rows || r.Watermark != wm {
			t.Errorf("batch %d: at %d, %d rows, watermark %d; want at %d, %d rows, watermark %d",
				i, r.ProcessingTime, r.InputRows, r.Watermark, ms(w.at), w.rows, wm)
		}
	}
	if n := res.Summary.Queries[0].NoDataBatches; n != 1 {
		t.Errorf("%d no-data batches, want 1 (the last)", n)
	}
	spark, err := res.SparkRows()
	if err != nil {
		t.Fatal(err)
	}
	for k := range 5 {
		want := 5 + 8.8*float64(k)
		if l := spark[k].ProcessingLagSeconds; l == nil || math.Abs(*l-want) > 1e-9 {
			t.Errorf("batch %d: lag %v, want %g s", k, l, want)
		}
	}
	if l := spark[5].ProcessingLagSeconds; l != nil {
		t.Errorf("the no-data batch has a lag, %g", *l)
	}

	// Without the limit the backlog is one batch.
	res = sparkTrace(t, fmt.Sprintf(doc, 0), rows)
	recs, err = res.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 || recs[0].InputRows != 500 || recs[1].Watermark != ms(89.8) {
		t.Errorf("without a limit: %+v; want one batch of 500 rows, then the watermark at 89.8 s", recs)
	}
}

// TestSparkResumeMatchesUninterrupted kills a run with a spark: block
// (partitions, a cost, faults) at several points and resumes it: the
// results, spark.csv included, are the uninterrupted run's.
func TestSparkResumeMatchesUninterrupted(t *testing.T) {
	doc := sparkFaulty + "spark:\n  partitions: 5\n  executors: 2\n  maxRowsPerBatch: 3000\n  cost: {batchOverheadMs: 1000, scanKeyNs: 1000000}\n"
	sc := load(t, doc)
	want := run(t, sc, 2)
	if q := want.Summary.Queries[0]; q.BatchDurationMs == nil || q.BatchDurationMs.Max <= 10_000 {
		t.Fatalf("the scenario should overrun its trigger at times: %+v", q.BatchDurationMs)
	}
	for _, store := range []string{"memory", "pebble"} {
		t.Run("store="+store, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ck")
			for _, stop := range []int{9000, 30000, 52000} {
				interrupted(t, sc, dir, store, int64(stop/3000), stop)
			}
			got, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: dir, Store: store})
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range got.Summary.Queries {
				w := want.Summary.Queries[i]
				w.Store = q.Store
				w.EventsPerSecond, w.WallSeconds, q.EventsPerSecond, q.WallSeconds = 0, 0, 0, 0
				if a, b := js(w), js(q); a != b {
					t.Errorf("query %s: resumed summary differs:\n%s\n%s", q.Name, a, b)
				}
			}
			if !bytes.Equal(timeseries(t, want), timeseries(t, got)) {
				t.Error("resumed timeseries differs")
			}
			if !bytes.Equal(sparkCSV(t, want), sparkCSV(t, got)) {
				t.Error("resumed spark.csv differs")
			}
		})
	}
}

// sparkCSV returns the results' spark.csv.
func sparkCSV(t *testing.T, r *Results) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.writeSpark(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestResumeKeepsTheCheckpointsPartitions: a run killed with 7
// partitions and resumed with spark.partitions 5 keeps each query
// checkpoint's 7, as Spark keeps spark.sql.shuffle.partitions from a
// query's first run, and says so once per query; the counters are those
// of the uninterrupted run. The lost checkpoint (at 170 s) starts a new
// checkpoint with 5.
func TestResumeKeepsTheCheckpointsPartitions(t *testing.T) {
	doc := sparkFaulty + "spark:\n  partitions: %d\n"
	seven := load(t, fmt.Sprintf(doc, 7))
	want := run(t, seven, 2)
	dir := filepath.Join(t.TempDir(), "ck")
	interrupted(t, seven, dir, "memory", 4, 30000)
	var mu sync.Mutex
	var notices []string
	five := load(t, fmt.Sprintf(doc, 5))
	got, err := runOpts(t, five, Options{Workers: 1, CheckpointDir: dir, Notify: func(m string) {
		mu.Lock()
		defer mu.Unlock()
		notices = append(notices, m)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range got.Summary.Queries {
		w := want.Summary.Queries[i]
		if a, b := withoutSpark(w), withoutSpark(q); a != b {
			t.Errorf("query %s differs:\n%s\n%s", q.Name, a, b)
		}
	}
	// The first job had a snapshot at the kill: its checkpoint keeps 7.
	first := got.Jobs[0].FileName
	wantNotice := fmt.Sprintf("query %s: its checkpoint keeps 7 shuffle partitions, not the 5 of spark.partitions", first)
	n := 0
	for _, m := range notices {
		if strings.HasPrefix(m, wantNotice) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("notices %q; want one starting %q", notices, wantNotice)
	}
	ents, err := os.ReadDir(filepath.Join(dir, first, "query.0", "state", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 7 {
		t.Errorf("query.0 holds %d partition folders, want 7", len(ents))
	}
	ents, err = os.ReadDir(filepath.Join(dir, first, "query.1", "state", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 5 {
		t.Errorf("query.1, after the lost checkpoint, holds %d partition folders, want 5", len(ents))
	}
}

// TestBatchLimitStopsARunawayBatch: on the modelled cluster, a batch that
// reaches scenario.MaxRowsPerBatch rows while more are due fails the job
// with one line; below the limit, or with nothing more due, or without a
// spark: block, nothing is said.
func TestBatchLimitStopsARunawayBatch(t *testing.T) {
	s := &sparkRun{cfg: &sparkmodel.Config{}}
	err := s.batchLimit(scenario.MaxRowsPerBatch, true, 1_767_225_600_000_000)
	if err == nil || !strings.HasPrefix(err.Error(), "spark: the batch at 2026-01-01T00:00:00.000Z would hold more than 5000000 rows") || strings.Contains(err.Error(), "\n") || !errors.Is(err, ErrBatchLimit) {
		t.Errorf("error %v: want one line, and ErrBatchLimit", err)
	}
	for _, c := range []struct {
		s    *sparkRun
		rows int
		more bool
	}{{s, scenario.MaxRowsPerBatch - 1, true}, {s, scenario.MaxRowsPerBatch, false}, {nil, scenario.MaxRowsPerBatch, true}} {
		if err := c.s.batchLimit(c.rows, c.more, 0); err != nil {
			t.Errorf("%d rows, more %v: %v", c.rows, c.more, err)
		}
	}
}

// TestSparkIdentities checks the identities docs/results-format.md states
// between spark.csv, timeseries.csv and the summary's spark fields, on a
// run with faults, a cost that makes batches overrun, a row limit and the
// rocksdb provider.
func TestSparkIdentities(t *testing.T) {
	sc := load(t, sparkFaulty+"spark:\n  partitions: 6\n  provider: rocksdb\n  executors: 3\n  maxRowsPerBatch: 2500\n  cost: {scanKeyNs: 3000000}\n")
	// The batch durations' percentiles cover the traffic window.
	last := sc.Start.UnixMicro() + sc.LastTrafficTrigger().Microseconds()
	res := run(t, sc, 2)
	rows, err := res.SparkRows()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(recs) {
		t.Fatalf("%d spark.csv rows, %d timeseries rows", len(rows), len(recs))
	}
	type peaks struct {
		maxRows          int64
		mean, dur        float64
		mem, disk        int64
		overran, batches int
	}
	got := map[string]*peaks{}
	for i, r := range rows {
		ts := recs[i]
		if r.Query != ts.Query || r.BatchID != ts.BatchID || r.InputRows != ts.InputRows || r.Start != metrics.FormatMillis(ts.ProcessingTime) {
			t.Fatalf("row %d: spark.csv %+v, timeseries %+v", i, r, ts)
		}
		if r.MeanPartitionRows*6 != float64(ts.StateRows) || r.MaxPartitionRows < int64(math.Ceil(r.MeanPartitionRows)) {
			t.Fatalf("row %d: mean %g and max %d rows per partition, %d state rows", i, r.MeanPartitionRows, r.MaxPartitionRows, ts.StateRows)
		}
		p := got[r.Query]
		if p == nil {
			p = &peaks{}
			got[r.Query] = p
		}
		p.maxRows, p.mean = max(p.maxRows, r.MaxPartitionRows), max(p.mean, r.MeanPartitionRows)
		p.mem, p.disk = max(p.mem, r.ExecutorMemoryBytes), max(p.disk, r.ExecutorDiskBytes)
		if ts.ProcessingTime*1000 <= last { // ms against µs
			p.dur = max(p.dur, *r.DurationMs)
		}
		if *r.DurationMs > 10_000 {
			p.overran++
		}
		p.batches++
	}
	overran := 0
	for _, q := range res.Summary.Queries {
		p := got[q.Name]
		if p == nil || int64(p.batches) != q.Batches {
			t.Fatalf("query %s: %+v rows for %d batches", q.Name, p, q.Batches)
		}
		if q.Partitions.PeakRowsMax != p.maxRows || q.Partitions.PeakRowsMean != p.mean || q.BatchDurationMs.Max != p.dur ||
			q.ExecutorPeakMemoryBytes != p.mem || q.ExecutorPeakDiskBytes != p.disk || p.disk == 0 {
			t.Errorf("query %s: summary %+v %+v, spark.csv peaks %+v", q.Name, q.Partitions, *q.BatchDurationMs, *p)
		}
		overran += p.overran
		t.Logf("query %s: max duration %g ms, %d overran", q.Name, p.dur, p.overran)
	}
	if overran == 0 {
		t.Error("no batch overran its trigger; the test wants some")
	}
}
