package sparkmodel

import (
	"testing"

	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// TestBatchDurationsOverTrafficWindow: the summary's batch-duration
// percentiles cover the batches that start in the traffic window, up to
// the first trigger boundary at or after its end, not the drain's. With a
// cost of 1 ms a row and no overhead, a 10 s trigger and traffic over
// [0, 100 s], the eleven batches at 0, 10, ..., 100 s take 1,000 rows
// (1 s) each; the eleven drain batches at 110 ... 210 s take 10 rows
// (10 ms). Over the window every percentile is 1,000 ms; counting the
// drain, p50 would be 10 ms.
func TestBatchDurationsOverTrafficWindow(t *testing.T) {
	zero, row := 0.0, 1e6
	cfg := Config{Partitions: 1, Provider: HDFS, Executors: 1, CoresPerExecutor: 1,
		Cost: &Cost{BatchOverheadMs: &zero, RowNs: &row, NewKeyNs: &zero, ScanKeyNs: &zero, RemoveKeyNs: &zero, PartitionCommitMs: &zero}}
	const s = int64(1e6)
	tr := NewTracker(cfg, []Shape{uuidShape}, 0, 10*s, 0, 100*s)
	tr.Open(1, true)
	for i := int64(0); i <= 21; i++ {
		rows := int64(1000)
		if i > 10 {
			rows = 10
		}
		st := &microbatch.PartitionStats{InputRows: []int64{rows}, Updated: []int64{0}, Removed: []int64{0}, Total: []int64{0}}
		tr.Batch(Batch{Start: i * 10 * s, Version: i, Stats: []*microbatch.PartitionStats{st}})
	}
	d := tr.Summary().BatchDurationMs
	if d == nil || d.P50 != 1000 || d.P99 != 1000 || d.Max != 1000 {
		t.Errorf("batch durations %+v; want p50, p99 and max 1,000 ms: the traffic window's eleven batches, not the drain's", d)
	}
}
