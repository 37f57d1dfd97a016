package runner

// The lessons of the experiments with a spark: block (docs/spark-model.md),
// asserted on the files users run, shrunk where that keeps the lesson.

import (
	"math"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// sparkOf returns a query's spark fields, failing when it has none.
func sparkOf(t *testing.T, q metrics.QuerySummary) *metrics.SparkSummary {
	t.Helper()
	if q.SparkSummary == nil {
		t.Fatalf("%s: no spark fields in the summary", q.Name)
	}
	return q.SparkSummary
}

// TestLessonDeathSpiral: within-watermark state grows until its horizon,
// and the eviction scan with it; with one slot the batch crosses the
// 1 s trigger where the closed form says, t* = (trigger - overhead -
// commits - rows) / (scanKeyNs × rate), and never comes back under it.
// The rate is a tenth of the file's and scanKeyNs ten times its, which
// keeps the scan's growth per second and so t*. A 20-minute delay holds
// less than half the keys and keeps up; so does the 45-minute delay on 4 cores
// with 4 partitions, but not on 4 cores with 1 partition.
func TestLessonDeathSpiral(t *testing.T) {
	shrunk := func(t *testing.T) *scenario.Scenario {
		s := loadExperiment(t, "death-spiral.yaml")
		r := generators.Rate(float64(*s.Workload.Rate) / 10)
		s.Workload.Rate = &r
		scan := *s.Spark.Cost.ScanKeyNs * 10
		s.Spark.Cost.ScanKeyNs = &scan
		return s
	}
	s := shrunk(t)
	c := s.Spark.Cost
	rate := float64(*s.Workload.Rate)
	// The closed form, with one slot running the partitions' tasks one
	// after the other: a batch of 1 s of rows (each a new key) and k
	// keys takes overhead + partitions × commit + rows + k × scan.
	closedForm := func(partitions, slots float64) float64 {
		fixed := *c.BatchOverheadMs*1e-3 + math.Ceil(partitions/slots)**c.PartitionCommitMs*1e-3 + rate*(*c.RowNs+*c.NewKeyNs)*1e-9/min(partitions, slots)
		return (s.Trigger.Std().Seconds() - fixed) / (*c.ScanKeyNs * 1e-9 * rate / min(partitions, slots))
	}
	q := byName(t, runLesson(t, s), "within-45m", "within-20m")
	long, short := sparkOf(t, q["within-45m"]), sparkOf(t, q["within-20m"])
	want := closedForm(4, 1)
	if long.FallingBehindSinceSeconds == nil {
		t.Fatalf("within-45m keeps up; the closed form says it falls behind at %.0f s", want)
	}
	// Arrivals are random: the keys at t* move by a few seconds of rows.
	if got := *long.FallingBehindSinceSeconds; math.Abs(got-want) > 10 {
		t.Errorf("within-45m falls behind at %g s; the closed form says %.0f s (±10 s)", got, want)
	}
	if short.FallingBehindSinceSeconds != nil {
		t.Errorf("within-20m falls behind at %g s; its 40-minute horizon holds too few keys to", *short.FallingBehindSinceSeconds)
	}
	if d := short.BatchDurationMs; d == nil || d.Max >= 1000 {
		t.Errorf("within-20m's batches %+v; want every one under the 1 s trigger", d)
	}

	// More partitions, with the cores to run them.
	for _, v := range []struct {
		partitions int64
		behind     bool
	}{{4, false}, {1, true}} {
		s := shrunk(t)
		s.Queries = s.Queries[:1]
		s.Spark.CoresPerExecutor = 4
		s.Spark.Partitions = v.partitions
		sp := sparkOf(t, runLesson(t, s).Summary.Queries[0])
		switch {
		case !v.behind && sp.FallingBehindSinceSeconds != nil:
			t.Errorf("4 cores, %d partitions: falls behind at %g s; want it to keep up", v.partitions, *sp.FallingBehindSinceSeconds)
		case v.behind && sp.FallingBehindSinceSeconds == nil:
			t.Errorf("4 cores, %d partition: keeps up; one partition is one task, on one core, so it should fall behind", v.partitions)
		case v.behind && math.Abs(*sp.FallingBehindSinceSeconds-closedForm(1, 4)) > 10:
			t.Errorf("4 cores, 1 partition: falls behind at %g s, the closed form says %.0f s", *sp.FallingBehindSinceSeconds, closedForm(1, 4))
		}
	}
}

// TestLessonExecutorMemory: the same job on the two providers, 200
// partitions on 4 executors: 50 stores per executor. HDFS holds its keys
// on the heap, about 300 bytes a key per executor with the versions it
// retains, and no local disk; RocksDB holds at least a 1 MiB memtable
// arena per instance while a batch writes (50 MiB per executor) and SST
// files on disk, and less memory than HDFS at this state. Shrunk to 15
// minutes of traffic (the 10-minute delay's state is near its peak).
func TestLessonExecutorMemory(t *testing.T) {
	peak := map[string]metrics.QuerySummary{}
	for _, p := range []string{"hdfs", "rocksdb"} {
		s := loadExperiment(t, "executor-memory-"+p+".yaml")
		shrink(s, 15*time.Minute)
		if s.Spark.Partitions != 200 || s.Spark.Executors != 4 || s.Spark.Provider != p {
			t.Fatalf("%s: %+v; the lesson is about 200 partitions on 4 executors", p, s.Spark)
		}
		peak[p] = runLesson(t, s).Summary.Queries[0]
	}
	h, r := peak["hdfs"], peak["rocksdb"]
	hs, rs := sparkOf(t, h), sparkOf(t, r)
	if h.PeakStateRows != r.PeakStateRows {
		t.Fatalf("peak state %d rows on hdfs, %d on rocksdb; the provider must not change a counter", h.PeakStateRows, r.PeakStateRows)
	}
	perExecutor := float64(hs.Partitions.PeakRowsMax) * 50 // an upper bound of an executor's keys
	if b := float64(hs.ExecutorPeakMemoryBytes) / perExecutor; b < 200 || b > 400 {
		t.Errorf("hdfs: %d bytes of heap for at most %.0f keys an executor, %.0f a key; want 200 to 400", hs.ExecutorPeakMemoryBytes, perExecutor, b)
	}
	if hs.ExecutorPeakDiskBytes != 0 {
		t.Errorf("hdfs: %d bytes of local disk; its files are on the checkpoint location", hs.ExecutorPeakDiskBytes)
	}
	if rs.ExecutorPeakMemoryBytes < 4<<20 {
		t.Errorf("rocksdb: %d bytes of native memory; the 4 running tasks hold at least a 1 MiB memtable arena each", rs.ExecutorPeakMemoryBytes)
	}
	if rs.ExecutorPeakDiskBytes <= 0 {
		t.Errorf("rocksdb: no local disk; its SST files are on the executor")
	}
	if rs.ExecutorPeakMemoryBytes >= hs.ExecutorPeakMemoryBytes {
		t.Errorf("rocksdb %d bytes, hdfs %d: want rocksdb below hdfs at 12,000 keys a store", rs.ExecutorPeakMemoryBytes, hs.ExecutorPeakMemoryBytes)
	}
}

// TestLessonPartitionSkew: event_id spreads within 15% of the mean over
// 200 partitions; customer_id, 500 values, cannot: its fullest partition
// holds at least twice the mean, the mean being 500 / 200 keys. Shrunk to
// 5 minutes of traffic.
func TestLessonPartitionSkew(t *testing.T) {
	s := loadExperiment(t, "partition-skew.yaml")
	shrink(s, 5*time.Minute)
	q := byName(t, runLesson(t, s), "event-id", "customer-id")
	ev, cu := sparkOf(t, q["event-id"]).Partitions, sparkOf(t, q["customer-id"]).Partitions
	if sk := float64(ev.PeakRowsMax) / ev.PeakRowsMean; sk > 1.15 {
		t.Errorf("event-id: skew %.2f (%d / %g); want an even split, under 1.15", sk, ev.PeakRowsMax, ev.PeakRowsMean)
	}
	if want := float64(s.Workload.Customers) / float64(cu.Count); cu.PeakRowsMean != want {
		t.Errorf("customer-id: a mean of %g keys a partition; want one key per customer, %g", cu.PeakRowsMean, want)
	}
	if sk := float64(cu.PeakRowsMax) / cu.PeakRowsMean; sk < 2 {
		t.Errorf("customer-id: skew %.2f (%d / %g); want at least 2", sk, cu.PeakRowsMax, cu.PeakRowsMean)
	}
}

// TestLessonBacklogAfterDowntime: the query is down from 40 to 70
// minutes. Without a row limit the first batch after takes the whole
// backlog, runs with the watermark of before the downtime and moves it
// some 30 minutes at once; its state peaks at more than twice the capped
// run's, and it drops fewer rows as late. With maxRowsPerBatch the
// backlog takes full batches, oldest first, each moving the watermark
// less than 2 minutes, until it is drained. Shrunk to a quarter of the
// rate and of the limit, which keeps the number of backlog batches.
func TestLessonBacklogAfterDowntime(t *testing.T) {
	type out struct {
		sum  metrics.QuerySummary
		recs []metrics.BatchRecord
	}
	runs := map[string]out{}
	var s *scenario.Scenario
	for _, name := range []string{"backlog-after-downtime", "backlog-after-downtime-capped"} {
		s = loadExperiment(t, name+".yaml")
		r := generators.Rate(float64(*s.Workload.Rate) / 4)
		s.Workload.Rate = &r
		s.Spark.MaxRowsPerBatch /= 4
		res := runLesson(t, s)
		runs[name] = out{res.Summary.Queries[0], records(res, "within-10m")}
	}
	down := s.Spark.Downtime[0]
	from, until := down.At.Std().Milliseconds(), (down.At + down.For).Std().Milliseconds()
	limit := s.Spark.MaxRowsPerBatch
	// first returns the index of the first batch at or after the
	// downtime's end, checking that none ran in it.
	first := func(name string) int {
		for i, b := range runs[name].recs {
			switch p := at(s, b); {
			case p > from && p < until:
				t.Fatalf("%s: a batch at %d ms, in the downtime", name, p)
			case p >= until:
				if p != until {
					t.Errorf("%s: the first batch after the downtime at %d ms, want at its end, %d ms", name, p, until)
				}
				return i
			}
		}
		t.Fatalf("%s: no batch after the downtime", name)
		return 0
	}
	minute := int64(60_000)

	un := runs["backlog-after-downtime"]
	i := first("backlog-after-downtime")
	big := un.recs[i]
	if perMinute := float64(big.InputRows) / 30; perMinute < 0.9*60*float64(*s.Workload.Rate) {
		t.Errorf("uncapped: the first batch after the downtime holds %d rows; want the 30 minutes that waited", big.InputRows)
	}
	if jump := un.recs[i+1].Watermark - big.Watermark; jump < 25*minute {
		t.Errorf("uncapped: the watermark moved %d ms in the backlog's batch; want about 30 minutes at once", jump)
	}

	ca := runs["backlog-after-downtime-capped"]
	j := first("backlog-after-downtime-capped")
	n := 0
	for k := j; k < len(ca.recs) && ca.recs[k].InputRows == limit; k++ {
		if step := ca.recs[k+1].Watermark - ca.recs[k].Watermark; step > 2*minute {
			t.Errorf("capped: batch %d moved the watermark %d ms; want less than 2 minutes a batch", ca.recs[k].BatchID, step)
		}
		n++
	}
	// 30 minutes of rows, less what the full batches take net of new
	// arrivals: the file's numbers give 38 batches.
	if n < 30 || n > 45 {
		t.Errorf("capped: %d full batches after the downtime; want the backlog taken in about 38", n)
	}

	if un.sum.PeakStateRows < 2*ca.sum.PeakStateRows {
		t.Errorf("peak state %d rows uncapped, %d capped; want the backlog's batch to more than double it", un.sum.PeakStateRows, ca.sum.PeakStateRows)
	}
	if sparkOf(t, un.sum).ExecutorPeakMemoryBytes <= sparkOf(t, ca.sum).ExecutorPeakMemoryBytes {
		t.Errorf("executor memory %d uncapped, %d capped; want more uncapped", un.sum.ExecutorPeakMemoryBytes, ca.sum.ExecutorPeakMemoryBytes)
	}
	if un.sum.FalseDropsByCause.Late >= ca.sum.FalseDropsByCause.Late {
		t.Errorf("late drops %d uncapped, %d capped; want fewer uncapped (its one batch ran with the watermark of before the downtime)", un.sum.FalseDropsByCause.Late, ca.sum.FalseDropsByCause.Late)
	}
	for _, o := range []out{un, ca} {
		if l := sparkOf(t, o.sum).MaxProcessingLagSeconds; l == nil || *l < 30*60 {
			t.Errorf("max processing lag %v; want the 30 minutes the oldest row waited", l)
		}
	}
}
