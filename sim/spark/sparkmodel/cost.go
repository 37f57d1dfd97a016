package sparkmodel

import (
	"container/heap"
	"strconv"
)

// Term is one term of the cost model (see Costs).
type Term int

// The terms, in the order of the model and of Costs' fields.
const (
	BatchOverhead Term = iota
	Row
	NewKey
	ScanKey
	RemoveKey
	PartitionCommit
	// NumTerms is the number of terms.
	NumTerms
)

// termKeys names the terms as the scenario's spark.cost keys do.
var termKeys = [NumTerms]string{"batchOverheadMs", "rowNs", "newKeyNs", "scanKeyNs", "removeKeyNs", "partitionCommitMs"}

// String returns the term's key in a scenario's spark.cost block.
func (t Term) String() string {
	if t < 0 || t >= NumTerms {
		return "Term(" + strconv.Itoa(int(t)) + ")"
	}
	return termKeys[t]
}

// Costs are the coefficients of a batch's duration, per batch or per task
// of one slot, as a scenario's spark.cost block holds them once resolved:
//
//	duration = BatchOverheadMs
//	         + Σ over the dedup operators (one stage each, run one after
//	           the other) of the makespan of the operator's partition
//	           tasks over executors × coresPerExecutor slots
//
//	task(p)  = RowNs × rows that reached the operator in partition p
//	         + NewKeyNs × keys stored in p's store
//	         + ScanKeyNs × keys in p's store before eviction, when the
//	           operator can evict (Spark's eviction visits every key)
//	         + RemoveKeyNs × keys evicted from p's store
//	         + PartitionCommitMs
//
// sim/spark/calibrate fits the same terms from a real job's progress log,
// where it can only see sums over the partitions: its model divides those
// sums by the slots, which is this makespan when the tasks are even.
type Costs struct {
	// BatchOverheadMs is the fixed cost of a batch on the driver:
	// planning, offset and commit logs, scheduling.
	BatchOverheadMs float64
	// RowNs is the cost of one input row in one task, per state
	// operator.
	RowNs float64
	// NewKeyNs is the cost of storing one new key.
	NewKeyNs float64
	// ScanKeyNs is the cost of visiting one key of the store when the
	// operator evicts.
	ScanKeyNs float64
	// RemoveKeyNs is the cost of evicting one key.
	RemoveKeyNs float64
	// PartitionCommitMs is the cost of committing one partition's state
	// store.
	PartitionCommitMs float64
}

// DefaultCosts returns the coefficients a cost term left out takes, for
// the provider. They are estimates until a real job calibrates them;
// docs/spark-model.md gives each one's source:
//
//   - HDFS: rough costs of a small dedup query, of the right order but not
//     of any one cluster, whose per-key terms are of the order of Spark's
//     StateStoreBasicOperationsBenchmark for the in-memory (HDFS-backed)
//     store: put 743 ns, scan 51 ns, evict 648 ns a row.
//   - RocksDB: the same batch, row and commit terms, with the per-key
//     terms of the benchmark's RocksDB rows (trackTotalNumberOfRows: true,
//     Spark's default): put 3590 ns, scan 337 ns (evicting nothing from
//     10,000 rows), remove 4243 ns (evicting all 10,000 rows, 4579 ns a
//     row, less the scan).
func DefaultCosts(provider string) Costs {
	c := Costs{BatchOverheadMs: 150, RowNs: 1500, NewKeyNs: 721, ScanKeyNs: 60, RemoveKeyNs: 650, PartitionCommitMs: 2}
	if provider == RocksDB {
		c.NewKeyNs, c.ScanKeyNs, c.RemoveKeyNs = 3590, 337, 4243
	}
	return c
}

// Get returns the coefficient of term t.
func (c Costs) Get(t Term) float64 { return *c.fields()[t] }

// Set sets the coefficient of term t.
func (c *Costs) Set(t Term, v float64) { *c.fields()[t] = v }

// fields returns c's fields in Term order.
func (c *Costs) fields() [NumTerms]*float64 {
	return [NumTerms]*float64{&c.BatchOverheadMs, &c.RowNs, &c.NewKeyNs, &c.ScanKeyNs, &c.RemoveKeyNs, &c.PartitionCommitMs}
}

// TaskNs returns the duration of one partition task in nanoseconds: in
// rows read, updated keys stored, scanned keys visited by the eviction
// scan (0 when the operator does not scan), removed keys evicted, and the
// commit.
func (c Costs) TaskNs(in, updated, scanned, removed int64) float64 {
	return c.RowNs*float64(in) + c.NewKeyNs*float64(updated) + c.ScanKeyNs*float64(scanned) +
		c.RemoveKeyNs*float64(removed) + c.PartitionCommitMs*1e6
}

// Scheduler computes a stage's makespan: its tasks are launched in
// partition order, each on the slot that frees first (the lowest slot
// among those free at the same time), as Spark's scheduler hands a
// stage's pending tasks to free cores; the stage ends when its last task
// does. Locality waits and stragglers are not modelled. The zero
// Scheduler is not usable; NewScheduler makes one.
type Scheduler struct {
	slots int64
	free  slotHeap
}

// NewScheduler returns a scheduler over slots task slots (at least 1).
func NewScheduler(slots int64) *Scheduler {
	return &Scheduler{slots: max(slots, 1)}
}

// Makespan returns the time from the stage's start to its last task's
// end, in the unit of tasks: tasks[p] is partition p's task duration.
// With at least as many slots as tasks it is the longest task; on one
// slot, their sum. It allocates only while its heap grows to the number
// of tasks it has seen.
func (s *Scheduler) Makespan(tasks []float64) float64 {
	if int64(len(tasks)) <= s.slots {
		m := 0.0
		for _, d := range tasks {
			m = max(m, d)
		}
		return m
	}
	s.free = s.free[:0]
	for i := int64(0); i < s.slots; i++ {
		s.free = append(s.free, slot{at: 0, id: i})
	}
	heap.Init(&s.free)
	end := 0.0
	for _, d := range tasks {
		first := &s.free[0]
		first.at += d
		end = max(end, first.at)
		heap.Fix(&s.free, 0)
	}
	return end
}

// slot is a task slot and the time it is free from.
type slot struct {
	at float64
	id int64
}

// slotHeap orders slots by the time they free, then by id.
type slotHeap []slot

func (h slotHeap) Len() int { return len(h) }
func (h slotHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].id < h[j].id
}
func (h slotHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *slotHeap) Push(x any)   { *h = append(*h, x.(slot)) }
func (h *slotHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
