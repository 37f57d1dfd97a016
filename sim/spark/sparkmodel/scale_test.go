package sparkmodel

import (
	"testing"

	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// TestCountScaleByHand: with CountScale 3 the memory model reads every
// key count three times as large. HDFS, 4 partitions on 1 executor of 2
// cores, version 0 (a store's peak is its new map's entries × 40 plus its
// rows × 184, TestInFlightIsTheLargest): partitions storing 10, 30, 20 and
// 40 keys, read as 30, 90, 60 and 120. Retained: 300 × 184 = 55,200; in
// flight: the two largest maps, (120 + 90) × 40 = 8,400; 63,600 bytes.
func TestCountScaleByHand(t *testing.T) {
	cfg := Config{Partitions: 4, Provider: HDFS, Executors: 1, CoresPerExecutor: 2, CountScale: 3}
	tr := NewTracker(cfg, []Shape{uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(4, true)
	st := &microbatch.PartitionStats{InputRows: []int64{10, 30, 20, 40}, Updated: []int64{10, 30, 20, 40}, Removed: make([]int64, 4), Total: []int64{10, 30, 20, 40}}
	if r := tr.Batch(Batch{Start: 10e6, Version: 0, Stats: []*microbatch.PartitionStats{st}}); r.Memory != 63_600 {
		t.Errorf("executor memory %d, want 63,600", r.Memory)
	}
	if p := (&Config{Partitions: 1, Provider: HDFS, Executors: 1, CoresPerExecutor: 1, CountScale: -1}).Check(); len(p) != 1 || p[0].Path != "countScale" {
		t.Errorf("CountScale -1: %v", p)
	}
}

// TestMemoryOverhead: Spark's default spark.executor.memoryOverhead is
// max(384 MiB, 10% of spark.executor.memory): 384 MiB up to 3.75 GiB,
// then a tenth (8 GiB: 858,993,459 bytes). HeapFor rounds the state up to
// whole GiB, at least 1 GiB.
func TestMemoryOverhead(t *testing.T) {
	for _, c := range []struct{ mem, want int64 }{{1 << 30, 384 << 20}, {3840 << 20, 384 << 20}, {8 << 30, 858_993_459}} {
		if got := MemoryOverhead(c.mem); got != c.want {
			t.Errorf("MemoryOverhead(%d) = %d, want %d", c.mem, got, c.want)
		}
	}
	for _, c := range []struct{ state, want int64 }{{0, 1 << 30}, {47 << 20, 1 << 30}, {1<<30 + 1, 2 << 30}, {94 << 30, 94 << 30}} {
		if got := HeapFor(c.state); got != c.want {
			t.Errorf("HeapFor(%d) = %d, want %d", c.state, got, c.want)
		}
	}
}
