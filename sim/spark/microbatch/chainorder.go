package microbatch

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines/spark/partition"
)

// In a chain of dedup operators each operator sits behind its own
// exchange on its own keys (StatefulOpClusteredDistribution), so operator
// k+1 does not read its rows in file order: it reads what operator k's
// tasks emitted, task by task. In local mode (how job.py runs Spark) a
// reduce task fetches its local shuffle blocks in map-index order
// (ShuffleBlockFetcherIterator over MapOutputTracker's map order), and map
// task p is operator k's partition p, which wrote its rows in the order it
// read them. So operator k+1 meets operator k's output as a stable sort of
// it by operator k's partition, pmod(Murmur3Hash(operator k's key columns,
// 42), N) with N = spark.sql.shuffle.partitions. Counters of a later
// dropDuplicates do not depend on the order; a later
// dropDuplicatesWithinWatermark keeps the first copy it meets, whose
// event time sets the key's expiry.
//
// Worked example (the audit's trace, N = 200):
// withWatermark("t", "10 seconds").dropDuplicates(["id", "t"])
// .dropDuplicatesWithinWatermark(["id"]) fed a@11 then a@10 in one batch.
// The first operator keeps both ((a, 10 s) and (a, 11 s) are different
// keys), in partitions 104 and 141 of 200; the second reads a@10 first
// (partition 104 < 141), keeps it (expires at 20 s) and drops a@11 as a
// duplicate. In file order it would keep a@11 (expires at 21 s).
//
// On a cluster remote blocks are fetched in random order; this models
// local mode only. The first operator reads file order (one task per file).

// DefaultShufflePartitions is Spark's default spark.sql.shuffle.partitions
// (SQLConf.SHUFFLE_PARTITIONS), which orders a chain's rows between dedup
// operators in a scenario without a spark: block.
const DefaultShufflePartitions = 200

// SetShufflePartitions sets n, the spark.sql.shuffle.partitions that order
// a chain's rows between dedup operators (see above): each operator but
// the last hands its emitted rows to the next grouped by its partition
// among n. n = 1 (the default of NewQuery) keeps the input order, as a
// single-operator query always does. A partitioned query
// (NewPartitionedQuery) starts with its partition count. n must be from 1
// to MaxPartitions. Rows of a chain with n > 1 must be generated rows or
// implement KeyHasher; other rows fail the batch.
func (q *Query) SetShufflePartitions(n int) error {
	if n < 1 || n > MaxPartitions {
		return fmt.Errorf("shuffle partitions %d: want 1 to %d", n, MaxPartitions)
	}
	q.shuffle = n
	return nil
}

// ShufflePartitions returns the partition count that orders a chain's rows
// between dedup operators (SetShufflePartitions).
func (q *Query) ShufflePartitions() int { return max(q.shuffle, 1) }

// regroup reorders kept, the rows operator d emitted in its input order,
// as the next dedup operator reads them: a stable sort by d's partition
// among the query's shuffle partitions. It allocates nothing once its
// buffers have grown.
func (q *Query) regroup(d *dedupOp, rows Rows, kept []int32) error {
	n := q.shuffle
	if n <= 1 || len(kept) < 2 || int(d.idx) == len(q.ops)-1 {
		return nil
	}
	if cap(q.regroupPart) < len(kept) {
		q.regroupPart = make([]int32, len(kept))
		q.regroupOut = make([]int32, len(kept))
	}
	parts, out := q.regroupPart[:len(kept)], q.regroupOut[:len(kept)]
	if d.parts != nil && d.parts.n == n {
		for k, i := range kept {
			parts[k] = d.parts.rowPart[i]
		}
	} else {
		h, ok := hasherOf(rows)
		if !ok {
			return fmt.Errorf("batch %d: operator %d (%s): rows of type %T cannot be placed in its %d shuffle partitions for the next operator (no Spark column types)", q.st.NextBatchID, d.idx, d.prog.Name, rows, n)
		}
		for k, i := range kept {
			parts[k] = int32(partition.Of(h.hash(int(i), d.node.KeyColumns), n))
		}
	}
	if cap(q.regroupStart) < n+1 {
		q.regroupStart = make([]int32, n+1)
	}
	start := q.regroupStart[:n+1]
	clear(start)
	for _, p := range parts {
		start[p+1]++
	}
	for p := range n {
		start[p+1] += start[p]
	}
	for k, i := range kept {
		p := parts[k]
		out[start[p]] = i
		start[p]++
	}
	copy(kept, out)
	return nil
}
