package sparkmodel

import (
	"math"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// uuidShape is the entry of a dedup operator keyed on a UUID event_id:
// the key UnsafeRow is an 8-byte null bitset, one 8-byte field slot and
// the 36-byte string rounded up to 40, so 56 bytes; the value 16.
var uuidShape = Shape{KeyBytes: 56, ValueBytes: 16}

func TestShapeOf(t *testing.T) {
	got := ShapeOf([]int{generators.ColEventID}, generators.UUIDIDs)
	if got != uuidShape {
		t.Errorf("ShapeOf(event_id, uuid) = %+v, want %+v", got, uuidShape)
	}
	// event_id as a long and event_time: bitset 8 + 2 slots of 8.
	if got := ShapeOf([]int{generators.ColEventID, generators.ColEventTime}, generators.IntIDs); got.KeyBytes != 24 {
		t.Errorf("ShapeOf(event_id, event_time, int) key = %d, want 24", got.KeyBytes)
	}
}

// TestHDFSStoreByHand follows one HDFS-backed store over five batches and
// checks its peak heap, computed by hand from the model of HDFSStore (a
// key/value pair costs 56 + 16 + 112 = 184 bytes of rows, each map entry
// 40 bytes of node and table):
//
//	batch 0 (version 0): 100 new keys. No version is loaded; the new map
//	  holds 100 entries and 100 pairs: 100×184 + 100×40 = 22,400.
//	batch 1 (version 1): 50 new keys. loadedMaps holds version 1 (100
//	  entries); the new map 150 entries; pairs 100 + 50:
//	  150×184 + (100 + 150)×40 = 27,600 + 10,000 = 37,600.
//	batch 2 (version 2): 30 new keys, 40 evicted, 140 left. Versions 1
//	  (100) and 2 (150) are loaded; the new map peaks at 150 + 30 = 180
//	  entries before eviction; pairs: version 1's 100, the 50 batch 1
//	  added, the 30 new: 180×184 + (100 + 150 + 180)×40 = 33,120 + 17,200
//	  = 50,320.
//	batch 3 (version 3): 10 new keys, 150 left. Versions 2 (150) and 3
//	  (140) are loaded; the new map 140 + 10 = 150. Pairs: version 2's
//	  150, the 30 batch 2 added (the 40 it evicted are version 2's), the
//	  10 new: 190×184 + (150 + 140 + 150)×40 = 34,960 + 17,600 = 52,560.
//	restart, batch 4 (version 4): nothing new. loadedMaps is empty, so the
//	  batch loads version 4 (150) from the checkpoint and copies it:
//	  150×184 + (150 + 150)×40 = 27,600 + 12,000 = 39,600.
//
// metrics' state-bytes model counts the live state once, 224 bytes a key:
// 150 keys are 33,600, below every peak here.
func TestHDFSStoreByHand(t *testing.T) {
	var s HDFSStore
	steps := []struct {
		name                     string
		restart                  bool
		version, upd, rem, total int64
		want                     int64
	}{
		{"batch 0", false, 0, 100, 0, 100, 22_400},
		{"batch 1", false, 1, 50, 0, 150, 37_600},
		{"batch 2", false, 2, 30, 40, 140, 50_320},
		{"batch 3", false, 3, 10, 0, 150, 52_560},
		{"batch 4 after a restart", true, 4, 0, 0, 150, 39_600},
	}
	for _, st := range steps {
		if st.restart {
			s.Restart()
		}
		if got := s.Batch(uuidShape, st.version, st.upd, st.rem, st.total); got != st.want {
			t.Errorf("%s: peak heap %d bytes, want %d", st.name, got, st.want)
		}
	}
}

// TestRocksDBByHand checks one RocksDB instance's memory and disk for a
// batch that stores 1,000 keys and evicts 200, leaving 100,000, worked
// by hand from RocksDBEntryOf and RocksDBBatch with Spark 3.5's defaults:
//
//	key on disk   56 + 1 (Spark's version byte) + 8 (sequence, type) = 65
//	value         16 + 1 = 17
//	data entry    65 + 17 + 3.25 (varints, restart array) = 85.25
//	index share   (65 + 12) × 85.25 / 4096 = 1.60260009765625
//	filter        10 bits = 1.25
//	SST per key   85.25 + 1.60260009765625 + 1.25 = 88.10260009765625
//	keys read     100,000 - 1,000 + 200 = 99,200
//	block cache   min(8 MiB = 8,388,608, 99,200 × 85.25 = 8,456,800) = 8,388,608
//	readers       99,200 × (1.60260009765625 + 1.25) = 282,977.9296875
//	memtable      1,000 × (65 + 17 + 13) + 200 × (65 + 13) = 110,600 bytes,
//	              in 1 MiB arena blocks (64 MiB / 8, at most 1 MiB): 1,048,576
//	memory        ceil(8,388,608 + 282,977.93 + 1,048,576) = 9,720,162
//	disk          ceil((99,200 + 1,000) × 88.10260009765625) = 8,827,881
func TestRocksDBByHand(t *testing.T) {
	conf := DefaultRocksDBConf()
	e := RocksDBEntryOf(uuidShape, conf)
	mem, disk := RocksDBBatch(e, conf, 1000, 200, 100_000)
	if mem != 9_720_162 || disk != 8_827_881 {
		t.Errorf("memory %d, disk %d; want 9,720,162 and 8,827,881", mem, disk)
	}
	// A store smaller than the cache holds all of its data blocks, and a
	// batch that writes nothing holds no memtable block: 1,000 keys read,
	// 1,000 × 85.25 + 1,000 × 2.85260009765625 = 88,102.6 -> 88,103.
	mem, _ = RocksDBBatch(e, conf, 0, 0, 1000)
	if mem != 88_103 {
		t.Errorf("memory of a small store %d, want 88,103", mem)
	}
}

// TestTrackerMemoryPerExecutor: 200 partitions of a RocksDB job on 4
// executors of 1 core put 50 store instances on each (partition p on
// executor p mod 4). With 100,000 keys read by every store and a batch
// that stores 1,000 and evicts 200 in each, every instance costs what
// TestRocksDBByHand worked out, 9,720,162 bytes while its task runs, of
// which 1,048,576 are the memtable that only a running task holds (Spark's
// commit flushes it). One core runs one task at a time, so an executor
// holds 50 × (9,720,162 - 1,048,576) = 433,579,300 bytes of block cache
// and table readers and one memtable, 1,048,576: 434,627,876 bytes. Its
// disk is 50 × 8,827,881 = 441,394,050 bytes.
func TestTrackerMemoryPerExecutor(t *testing.T) {
	cfg := Config{Partitions: 200, Provider: RocksDB, Executors: 4, CoresPerExecutor: 1}
	tr := NewTracker(cfg, []Shape{uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(200, true)
	st := uniformStats(200, 0, 1000, 200, 100_000, true)
	r := tr.Batch(Batch{Start: 10e6, Version: 5, Stats: []*microbatch.PartitionStats{st}})
	if r.Memory != 434_627_876 || r.Disk != 441_394_050 {
		t.Errorf("executor memory %d, disk %d; want 434,627,876 and 441,394,050", r.Memory, r.Disk)
	}
	// With 4 cores, 4 memtables at once: 433,579,300 + 4 × 1,048,576.
	cfg.CoresPerExecutor = 4
	tr = NewTracker(cfg, []Shape{uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(200, true)
	if r := tr.Batch(Batch{Start: 10e6, Version: 5, Stats: []*microbatch.PartitionStats{st}}); r.Memory != 437_773_604 {
		t.Errorf("4 cores: executor memory %d, want 437,773,604", r.Memory)
	}
	// One partition on its own executor: one instance's worth.
	cfg.Executors = 200
	tr = NewTracker(cfg, []Shape{uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(200, true)
	if r := tr.Batch(Batch{Start: 10e6, Version: 5, Stats: []*microbatch.PartitionStats{st}}); r.Memory != 9_720_162 {
		t.Errorf("one instance per executor: %d bytes, want 9,720,162", r.Memory)
	}
}

// TestInFlightIsTheLargest: of an executor's stores only
// coresPerExecutor tasks run at once, and the model charges the in-flight
// memory of those that hold the most, per operator (a chain's operators
// run in stages one after the other). HDFS, 4 partitions on 1 executor of
// 2 cores, version 0 (no retained version: a store's peak is its new
// map's entries × 40 plus its rows × 184): partitions storing 10, 30, 20
// and 40 keys. Retained: (10 + 30 + 20 + 40) × 184 = 18,400; in flight:
// the two largest maps, (40 + 30) × 40 = 2,800; 21,200 bytes. A second
// operator whose stores each store 5 keys adds 4 × 5 × 184 = 3,680
// retained; its in-flight (2 × 5 × 40 = 400) is below the first's, so the
// executor holds 24,880 bytes.
func TestInFlightIsTheLargest(t *testing.T) {
	cfg := Config{Partitions: 4, Provider: HDFS, Executors: 1, CoresPerExecutor: 2}
	tr := NewTracker(cfg, []Shape{uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(4, true)
	op0 := &microbatch.PartitionStats{InputRows: make([]int64, 4), Updated: []int64{10, 30, 20, 40}, Removed: make([]int64, 4), Total: []int64{10, 30, 20, 40}}
	if r := tr.Batch(Batch{Start: 10e6, Stats: []*microbatch.PartitionStats{op0}}); r.Memory != 21_200 {
		t.Errorf("one operator: %d bytes, want 21,200", r.Memory)
	}
	tr = NewTracker(cfg, []Shape{uuidShape, uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(4, true)
	op1 := uniformStats(4, 0, 5, 0, 5, false)
	if r := tr.Batch(Batch{Start: 10e6, Stats: []*microbatch.PartitionStats{op0, op1}}); r.Memory != 24_880 {
		t.Errorf("two operators: %d bytes, want 24,880", r.Memory)
	}
}

// TestPartitionsOnExecutorsModulo: partition p lives on executor p mod
// executors. 4 HDFS partitions on 2 executors, version 0, storing 100, 0,
// 100 and 0 keys: executor 0 holds partitions 0 and 2, 200 × 184 retained
// and 2 × 100 × 40 in flight (2 cores), 44,800 bytes; executor 1 nothing.
// Contiguous blocks (0-1 on executor 0, 2-3 on executor 1) would give
// each executor 22,400.
func TestPartitionsOnExecutorsModulo(t *testing.T) {
	cfg := Config{Partitions: 4, Provider: HDFS, Executors: 2, CoresPerExecutor: 2}
	tr := NewTracker(cfg, []Shape{uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(4, true)
	st := &microbatch.PartitionStats{InputRows: make([]int64, 4), Updated: []int64{100, 0, 100, 0}, Removed: make([]int64, 4), Total: []int64{100, 0, 100, 0}}
	if r := tr.Batch(Batch{Start: 10e6, Stats: []*microbatch.PartitionStats{st}}); r.Memory != 44_800 {
		t.Errorf("largest executor %d bytes, want 44,800 (partitions 0 and 2 together)", r.Memory)
	}
}

// TestBatchEndingOnTheBoundaryKeepsUp: a batch that starts on a trigger
// boundary and lasts exactly the trigger interval ends on the next
// boundary, where the next trigger fires as scheduled: it did not overrun
// (Spark warns only when the batch took longer than the interval,
// batchElapsedTimeMs > intervalMs). One microsecond more overruns.
func TestBatchEndingOnTheBoundaryKeepsUp(t *testing.T) {
	zero := 0.0
	for _, c := range []struct {
		overheadMs float64
		overran    bool
	}{{10_000, false}, {10_000.001, true}, {9_999.999, false}} {
		oh := c.overheadMs
		cfg := Config{Partitions: 1, Provider: HDFS, Executors: 1, CoresPerExecutor: 1,
			Cost: &Cost{BatchOverheadMs: &oh, RowNs: &zero, NewKeyNs: &zero, ScanKeyNs: &zero, RemoveKeyNs: &zero, PartitionCommitMs: &zero}}
		tr := NewTracker(cfg, []Shape{uuidShape}, 0, 10e6, 0, 3600e6)
		tr.Open(1, true)
		r := tr.Batch(Batch{Start: 10e6, Stats: []*microbatch.PartitionStats{uniformStats(1, 0, 0, 0, 0, false)}})
		if r.Overran != c.overran || r.End != 10e6+int64(math.Round(oh*1e3)) {
			t.Errorf("overhead %v ms: end %d, overran %v; want overran %v", oh, r.End, r.Overran, c.overran)
		}
		if next := tr.NextTrigger(10e6, r.End); next != max(20e6, r.End) {
			t.Errorf("overhead %v ms: next trigger %d", oh, next)
		}
	}
}

// TestRocksDBMemtableCap: a batch writing more than the memtables can hold
// (2 × 64 MiB) to one instance is capped at 128 MiB: 1.5 million puts of
// 95 bytes are 142,500,000 bytes, 136 arena blocks of 1 MiB, above the
// 134,217,728 of two full write buffers.
func TestRocksDBMemtableCap(t *testing.T) {
	conf := DefaultRocksDBConf()
	e := RocksDBEntryOf(uuidShape, conf)
	if got := RocksDBMemtable(e, conf, 1_500_000, 0); got != 128<<20 {
		t.Errorf("memtable %d bytes, want 134,217,728", got)
	}
	// Just under: 1,400,000 puts are 133,000,000 bytes, 127 blocks.
	if got := RocksDBMemtable(e, conf, 1_400_000, 0); got != 127<<20 {
		t.Errorf("memtable %d bytes, want 127 MiB", got)
	}
	// The instance's memory holds the capped memtable: a store that read
	// nothing has no cache or readers.
	if m, _ := RocksDBBatch(e, conf, 1_500_000, 0, 1_500_000); m != 128<<20 {
		t.Errorf("instance memory %d, want 134,217,728", m)
	}
}

// uniformStats returns stats of n partitions that each read in rows,
// stored upd keys, evicted rem and hold total.
func uniformStats(n int, in, upd, rem, total int64, scans bool) *microbatch.PartitionStats {
	st := &microbatch.PartitionStats{Scans: scans}
	for range n {
		st.InputRows = append(st.InputRows, in)
		st.Updated = append(st.Updated, upd)
		st.Removed = append(st.Removed, rem)
		st.Total = append(st.Total, total)
	}
	return st
}

// TestMakespanByHand: tasks of 5, 3, 3, 1 and 4 (partition order) on two
// slots. Each goes to the slot that frees first, the lower on a tie:
// 5 -> slot 0 (free at 5); 3 -> slot 1 (3); 3 -> slot 1 (6); 1 -> slot 0
// (6); 4 -> slot 0, tied with slot 1 at 6 (10). The stage ends at 10, not
// at the 8 of a perfect split (the sum 16 over 2 slots). On three slots:
// 5 -> slot 0 (5); 3 -> slot 1 (3); 3 -> slot 2 (3); 1 -> slot 1, tied
// with slot 2 at 3 (4); 4 -> slot 2 (7): 7.
func TestMakespanByHand(t *testing.T) {
	tasks := []float64{5, 3, 3, 1, 4}
	for _, c := range []struct {
		slots int64
		want  float64
	}{{1, 16}, {2, 10}, {3, 7}, {5, 5}, {100, 5}} {
		if got := NewScheduler(c.slots).Makespan(tasks); got != c.want {
			t.Errorf("%d slots: makespan %g, want %g", c.slots, got, c.want)
		}
	}
}

// TestTaskNs: one term of each kind, in nanoseconds.
func TestTaskNs(t *testing.T) {
	c := Costs{RowNs: 1, NewKeyNs: 10, ScanKeyNs: 100, RemoveKeyNs: 1000, PartitionCommitMs: 2}
	// 1×1 + 10×2 + 100×3 + 1000×4 + 2 ms (2,000,000 ns) = 2,004,321.
	if got := c.TaskNs(1, 2, 3, 4); got != 2_004_321 {
		t.Errorf("TaskNs = %g, want 2,004,321", got)
	}
}

func TestHistogram(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 {
		t.Error("an empty histogram has a median")
	}
	// 1, 2, 4, 12 and 15 seconds: the median (3rd) is 4 s, p99 (5th) 15 s.
	for _, v := range []int64{15e6, 1e6, 12e6, 4e6, 2e6} {
		h.Add(v)
	}
	if q := h.Quantile(0.5); q != 4e6 {
		t.Errorf("median %d, want 4,000,000", q)
	}
	if q := h.Quantile(0.99); q != 15e6 {
		t.Errorf("p99 %d, want 15,000,000", q)
	}
	// Four significant digits: 2,199,551 counts as 2,199,000; below
	// 10,000 values are exact.
	var g Histogram
	g.Add(2_199_551)
	g.Add(9_999)
	if g.Quantile(1) != 2_199_000 || g.Quantile(0.5) != 9_999 || g.Max != 2_199_551 {
		t.Errorf("quantiles %d, %d and max %d; want 2,199,000, 9,999 and 2,199,551", g.Quantile(1), g.Quantile(0.5), g.Max)
	}
}

// TestNextTrigger: the lattice is origin + k × trigger; a batch that ends
// before the next boundary waits for it, one that overruns it starts the
// next at once.
func TestNextTrigger(t *testing.T) {
	tr := NewTracker(Config{Partitions: 1, Provider: HDFS, Executors: 1, CoresPerExecutor: 1}, nil, 1000, 10, 0, 100)
	for _, c := range []struct{ start, end, want int64 }{
		{1010, 1010, 1020}, // no batch, or an instantaneous one
		{1010, 1019, 1020}, // ends before the boundary
		{1010, 1020, 1020}, // ends on it
		{1010, 1027, 1027}, // overran: at once
		{1027, 1029, 1030}, // from an unaligned start, the next boundary
	} {
		if got := tr.NextTrigger(c.start, c.end); got != c.want {
			t.Errorf("NextTrigger(%d, %d) = %d, want %d", c.start, c.end, got, c.want)
		}
	}
}

// TestDefaultCosts: omitted terms take the provider's defaults, given
// terms override them, and no block means no cost.
func TestDefaultCosts(t *testing.T) {
	row := 7.0
	c := Config{Provider: RocksDB, Cost: &Cost{RowNs: &row}}
	got, ok := c.Costs()
	want := Costs{BatchOverheadMs: 150, RowNs: 7, NewKeyNs: 3590, ScanKeyNs: 337, RemoveKeyNs: 4243, PartitionCommitMs: 2}
	if !ok || got != want {
		t.Errorf("rocksdb costs %+v, want %+v", got, want)
	}
	c.Provider = HDFS
	if got, _ := c.Costs(); got.NewKeyNs != 721 || got.ScanKeyNs != 60 || got.RemoveKeyNs != 650 || got.RowNs != 7 {
		t.Errorf("hdfs costs %+v, want calibrate's defaults with rowNs 7", got)
	}
	c.FillDefaults()
	if c.Cost.ScanKeyNs == nil || *c.Cost.ScanKeyNs != 60 || *c.Cost.RowNs != 7 {
		t.Errorf("FillDefaults left %+v", c.Cost)
	}
	if _, ok := (&Config{}).Costs(); ok {
		t.Error("a block without cost has costs")
	}
}

// TestTwoOperatorsTwoStages times a batch of a query with two dedup
// operators, one stage each, run one after the other, by hand. Costs:
// 100 ms a batch, 1 ms a row, 1 ms a scanned key, 1 ms a partition's
// commit, nothing else; 4 partitions on 2 executors of 1 core.
//
//	operator 0 evicts (Scans): rows [3 1 0 2], keys after [1 0 0 0],
//	  removed [0 0 0 1], so scanned [1 0 0 1]. Tasks: 3+1+1 = 5,
//	  1+0+1 = 2, 0+0+1 = 1, 2+1+1 = 4 ms. On 2 slots: 5 -> slot 0 (5);
//	  2 -> slot 1 (2); 1 -> slot 1 (3); 4 -> slot 1 (7): 7 ms.
//	operator 1 does not evict: its 50 keys a partition are not scanned.
//	  Tasks 1+1 = 2 ms each, two waves: 4 ms.
//
// The batch: 100 + 7 + 4 = 111 ms.
func TestTwoOperatorsTwoStages(t *testing.T) {
	one := 1e6
	zero := 0.0
	hundred := 100.0
	commit := 1.0
	cfg := Config{Partitions: 4, Provider: HDFS, Executors: 2, CoresPerExecutor: 1,
		Cost: &Cost{BatchOverheadMs: &hundred, RowNs: &one, NewKeyNs: &zero, ScanKeyNs: &one, RemoveKeyNs: &zero, PartitionCommitMs: &commit}}
	tr := NewTracker(cfg, []Shape{uuidShape, uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(4, true)
	op0 := &microbatch.PartitionStats{Scans: true, InputRows: []int64{3, 1, 0, 2}, Updated: make([]int64, 4), Removed: []int64{0, 0, 0, 1}, Total: []int64{1, 0, 0, 0}}
	op1 := &microbatch.PartitionStats{InputRows: []int64{1, 1, 1, 1}, Updated: make([]int64, 4), Removed: make([]int64, 4), Total: []int64{50, 50, 50, 50}}
	r := tr.Batch(Batch{Start: 10e6, Version: 3, Stats: []*microbatch.PartitionStats{op0, op1}})
	if r.Duration != 111_000 || r.End != 10e6+111_000 || r.Overran {
		t.Errorf("duration %d µs, end %d, overran %v; want 111,000 µs, %d, false", r.Duration, r.End, r.Overran, int64(10e6+111_000))
	}
}

// TestFallingBehindRuns: the run of overrunning batches must reach the
// last batch that starts in the traffic window, each batch starting at
// the previous one's end; an idle gap or a batch that keeps up ends it.
func TestFallingBehindRuns(t *testing.T) {
	tr := NewTracker(Config{Partitions: 1, Provider: HDFS, Executors: 1, CoresPerExecutor: 1}, nil, 0, 10, 0, 100)
	tr.Open(1, true)
	// start, end, overran: 10-25 (over), 25-37 (over), then an idle gap,
	// 50-65 (over), 65-78 (over): the run that reaches the window's end
	// starts at 50.
	for _, b := range []struct{ start, end int64 }{{10, 25}, {25, 37}, {50, 65}, {65, 78}} {
		tr.fallingBehind(b.start, BatchResult{End: b.end, Overran: b.end > tr.nextBoundary(b.start)})
	}
	if s := tr.Summary(); s.FallingBehindSinceSeconds == nil || *s.FallingBehindSinceSeconds != 50e-6 {
		t.Errorf("falling behind since %v, want 50 µs", s.FallingBehindSinceSeconds)
	}
	// A batch after the window does not count; one in it that keeps up
	// ends the run.
	tr.fallingBehind(101, BatchResult{End: 102})
	if s := tr.Summary(); s.FallingBehindSinceSeconds == nil {
		t.Error("a batch after the window ended the run")
	}
	tr.fallingBehind(80, BatchResult{End: 81})
	if s := tr.Summary(); s.FallingBehindSinceSeconds != nil {
		t.Errorf("falling behind since %g after a batch that kept up", *s.FallingBehindSinceSeconds)
	}
}

// TestDocsWorkedExample pins the worked example of docs/spark-model.md:
// 10 million keys of dropDuplicatesWithinWatermark(["event_id"]) over 200
// partitions, 50,000 a store, a batch storing 500 and evicting 500 in
// each, in steady state (versions k-1 and k loaded, both 50,000 keys).
//
//	HDFS, one store: pairs 50,000 + 500 (last batch's) + 500 (this
//	  batch's) = 51,000 × 184 = 9,384,000; entries 50,000 + 50,000 +
//	  (50,000 + 500) = 150,500 × 40 = 6,020,000; heap 15,404,000.
//	RocksDB, one instance: cache min(8 MiB, 50,000 × 85.25 = 4,262,500)
//	  = 4,262,500; readers 50,000 × 2.85260009765625 = 142,630.0049;
//	  memtable 500 × 95 + 500 × 78 = 86,500 bytes in one 1 MiB arena
//	  block, 1,048,576; memory ceil(5,453,706.0049) = 5,453,707; disk
//	  ceil(50,500 × 88.10260009765625 = 4,449,181.3) = 4,449,182.
//
// On 4 executors of 4 cores (50 stores each), only the 4 running tasks
// hold their in-flight part: HDFS's new map, (50,000 + 500) × 40 =
// 2,020,000 a store; RocksDB's memtable, 1,048,576 an instance.
//
//	HDFS     50 × (15,404,000 - 2,020,000) + 4 × 2,020,000 = 677,280,000
//	RocksDB  50 × (5,453,707 - 1,048,576) + 4 × 1,048,576 = 224,450,854
//	         (disk 50 × 4,449,182 = 222,459,100)
//
// Summing every store's peak would give 770,200,000 and 272,685,350.
func TestDocsWorkedExample(t *testing.T) {
	s := HDFSStore{Cached: 2, PrevPrevTotal: 50_000, PrevTotal: 50_000, PrevUpdated: 500}
	got := s.Batch(uuidShape, 10, 500, 500, 50_000)
	if fl := HDFSInFlight(500, 50_000); got != 15_404_000 || fl != 2_020_000 || 50*(got-fl)+4*fl != 677_280_000 {
		t.Errorf("hdfs store %d bytes, %d in flight; want 15,404,000 and 2,020,000", got, fl)
	}
	conf := DefaultRocksDBConf()
	m, d := RocksDBBatch(RocksDBEntryOf(uuidShape, conf), conf, 500, 500, 50_000)
	if m != 5_453_707 || d != 4_449_182 || 50*d != 222_459_100 {
		t.Errorf("rocksdb instance: memory %d, disk %d; want 5,453,707 and 4,449,182", m, d)
	}
	// Through the tracker: 200 partitions on 4 executors of 4 cores.
	cfg := Config{Partitions: 200, Provider: RocksDB, Executors: 4, CoresPerExecutor: 4}
	tr := NewTracker(cfg, []Shape{uuidShape}, 0, 10e6, 0, 3600e6)
	tr.Open(200, true)
	r := tr.Batch(Batch{Start: 10e6, Version: 10, Stats: []*microbatch.PartitionStats{uniformStats(200, 0, 500, 500, 50_000, true)}})
	if r.Memory != 224_450_854 || r.Disk != 222_459_100 {
		t.Errorf("rocksdb executor: memory %d, disk %d; want 224,450,854 and 222,459,100", r.Memory, r.Disk)
	}
}
