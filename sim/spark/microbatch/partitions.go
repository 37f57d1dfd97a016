package microbatch

import (
	"errors"
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/spark"
	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// Spark splits each stateful operator's state over
// spark.sql.shuffle.partitions state stores: the exchange before the
// operator places a row in partition pmod(Murmur3Hash(key columns, 42), n)
// (HashPartitioning; StatefulOpClusteredDistribution makes each dedup
// operator shuffle by its own keys, in its key order), and task p of the
// operator reads partition p's rows and updates store p
// (StateStoreRDD). A partitioned query does the same: each dedup operator
// has one store per partition, each row's key goes to its partition's
// store, and eviction runs store by store. A key always lands in the same
// partition, so every decision, and every counter summed over the
// partitions, is the one of a query with a single store per operator;
// what the partitions add is where each key lives and what each task did
// (PartitionStats), which the Spark cost and memory model reads.
//
// Worked example (3 partitions, keys hashed as Spark does): a batch of
// a@10, b@12, a@11 with a in partition 2 and b in partition 0 gives task 0
// one row (b, stored), task 1 none, task 2 two rows (a stored, then a
// dropped as a duplicate); numRowsUpdated is 2 and numRowsTotal 2, as with
// one store.

// PartitionStoreFactory opens the state store of shuffle partition part
// of dedup operator op (0-based, in chain order) for the given node.
type PartitionStoreFactory func(op, part int, node chain.Node) (engines.Store, error)

// MaxPartitions bounds the partitions of a partitioned query: each is a
// store of its own per dedup operator, opened for the whole run.
const MaxPartitions = 10_000

// PartitionStats are what each task of one dedup operator did in the last
// batch, per shuffle partition, as Spark's tasks would report them.
type PartitionStats struct {
	// InputRows counts the rows that reached the operator in each
	// partition, late rows included (the late filter runs inside the
	// operator, after the exchange).
	InputRows []int64
	// Updated counts the keys each partition's store added
	// (numRowsUpdated of that task).
	Updated []int64
	// Removed counts the keys each store evicted (numRowsRemoved).
	Removed []int64
	// Total is each store's keys after the batch (numRowsTotal).
	Total []int64
	// Scans is true when the operator's eviction visits every key of each
	// store, as Spark's does on every batch when the operator can evict:
	// dropDuplicatesWithinWatermark always, dropDuplicates only with the
	// watermarked event time among its keys. The keys a store's scan
	// visits are its keys before eviction, Total + Removed.
	Scans bool
}

func (s *PartitionStats) reset() {
	clear(s.InputRows)
	clear(s.Updated)
	clear(s.Removed)
}

// opPartitions are one dedup operator's per-partition stores, operators
// and buffers.
type opPartitions struct {
	n     int
	ops   []spark.Operator
	store *partitionedStore
	stats PartitionStats
	// rowPart is each batch row's partition, by row number.
	rowPart []int32
	// The operator's input regrouped by partition: keys back to back
	// with end offsets relative to their partition's first key, event
	// times, and the position in the operator's input of each; first[p]
	// is the first entry of partition p, firstByte[p] its first byte.
	keys      []byte
	ends      []int32
	ets       []int64
	pos       []int32
	added     []bool
	first     []int32
	firstByte []int32
	// out is the batch's decisions in candidate order, and evictAt the
	// eviction's watermark, for the per-partition steps process and
	// evict (run by the query's pool).
	out            []bool
	evictAt        int64
	process, evict *partWork
}

// NewPartitionedQuery is NewQuery with each dedup operator's state split
// over partitions stores, opened by stores, as Spark splits it over
// spark.sql.shuffle.partitions (see PartitionStats). partitions must be
// from 1 to MaxPartitions. Rows must be generated rows or implement
// KeyHasher; other rows fail the batch. The partitions also order a
// chain's rows between its dedup operators (SetShufflePartitions).
func NewPartitionedQuery(plan chain.Plan, partitions int, stores PartitionStoreFactory, state State) (*Query, error) {
	if partitions < 1 || partitions > MaxPartitions {
		return nil, fmt.Errorf("partitions %d: want 1 to %d", partitions, MaxPartitions)
	}
	var parts []*opPartitions
	factory := func(op int, n chain.Node) (engines.Store, error) {
		p := &opPartitions{n: partitions}
		p.store = &partitionedStore{parts: make([]engines.Store, 0, partitions)}
		for part := range partitions {
			s, err := stores(op, part, n)
			if err != nil {
				p.store.Close()
				return nil, fmt.Errorf("partition %d: %w", part, err)
			}
			p.store.parts = append(p.store.parts, s)
			p.ops = append(p.ops, newOperator(s, n))
		}
		p.stats = PartitionStats{
			InputRows: make([]int64, partitions), Updated: make([]int64, partitions),
			Removed: make([]int64, partitions), Total: make([]int64, partitions),
			Scans: n.Evicts() && n.WatermarkReaches,
		}
		p.process = newPartWork(partitions, p.processOne)
		p.evict = newPartWork(partitions, p.evictOne)
		p.first = make([]int32, partitions+1)
		p.firstByte = make([]int32, partitions+1)
		parts = append(parts, p)
		return p.store, nil
	}
	q, err := NewQuery(plan, factory, state)
	if err != nil {
		return nil, err
	}
	for k, d := range q.ops {
		d.parts = parts[k]
		for part, op := range d.parts.ops {
			d.parts.stats.Total[part] = int64(op.Len())
		}
	}
	q.partitions = partitions
	q.shuffle = partitions
	return q, nil
}

// Partitions returns the number of shuffle partitions of a partitioned
// query, 0 for a query with one store per operator.
func (q *Query) Partitions() int { return q.partitions }

// PartitionStats returns what each task of dedup operator op (chain
// order) did in the last batch; nil for a query that is not partitioned.
// The stats are reused by the next batch.
func (q *Query) PartitionStats(op int) *PartitionStats {
	if q.partitions == 0 {
		return nil
	}
	return &q.ops[op].parts.stats
}

// route places each alive row of the batch in its partition by its keys
// for operator d, and counts each partition's input rows.
func (q *Query) route(d *dedupOp, rows Rows, alive []int32) error {
	p := d.parts
	p.stats.reset()
	if len(alive) == 0 {
		return nil
	}
	h, ok := hasherOf(rows)
	if !ok {
		return fmt.Errorf("batch %d: operator %d (%s): rows of type %T cannot be placed in partitions (no Spark column types)", q.st.NextBatchID, d.idx, d.prog.Name, rows)
	}
	if n := rows.Len(); cap(p.rowPart) < n {
		p.rowPart = make([]int32, n)
	}
	p.rowPart = p.rowPart[:rows.Len()]
	for _, i := range alive {
		part := partition.Of(h.hash(int(i), d.node.KeyColumns), p.n)
		p.rowPart[i] = int32(part)
		p.stats.InputRows[part]++
	}
	return nil
}

// processPartitions is Operator.ProcessBatch over the operator's
// partitions: the candidates (q.cand, with their keys in q.key, q.ends and
// q.ets) are grouped by partition, keeping their order within each, each
// partition's operator decides its group, and the decisions go back to
// added in candidate order. Keys of different partitions never meet, so
// the decisions are those of one store.
func (q *Query) processPartitions(d *dedupOp, added []bool) error {
	p := d.parts
	n := len(q.cand)
	// Count each partition's keys and bytes, then lay the groups out.
	clear(p.first)
	clear(p.firstByte)
	start := int32(0)
	for k, i := range q.cand {
		part := p.rowPart[i]
		p.first[part+1]++
		p.firstByte[part+1] += q.ends[k] - start
		start = q.ends[k]
	}
	for part := range p.n {
		p.first[part+1] += p.first[part]
		p.firstByte[part+1] += p.firstByte[part]
	}
	p.keys = grow(p.keys, len(q.key))
	p.ends = grow(p.ends, n)
	p.ets = grow(p.ets, n)
	p.pos = grow(p.pos, n)
	p.added = grow(p.added, n)
	// next[part] is where partition part's next entry and byte go; the
	// stats' Removed slice is free until eviction and serves as it.
	nextEntry, nextByte := p.stats.Removed, p.stats.Updated
	for part := range p.n {
		nextEntry[part] = int64(p.first[part])
		nextByte[part] = int64(p.firstByte[part])
	}
	start = 0
	for k, i := range q.cand {
		part := p.rowPart[i]
		e, b := nextEntry[part], nextByte[part]
		key := q.key[start:q.ends[k]]
		start = q.ends[k]
		copy(p.keys[b:], key)
		b += int64(len(key))
		p.ends[e] = int32(b) - p.firstByte[part]
		p.ets[e] = q.ets[k]
		p.pos[e] = int32(k)
		nextEntry[part], nextByte[part] = e+1, b
	}
	clear(p.stats.Removed)
	clear(p.stats.Updated)
	p.out = added
	err := q.pool.run(p.process)
	p.out = nil
	return err
}

// processOne decides partition part's group of the batch's candidates.
func (p *opPartitions) processOne(part int) error {
	lo, hi := p.first[part], p.first[part+1]
	if lo == hi {
		return nil
	}
	keys := p.keys[p.firstByte[part]:p.firstByte[part+1]]
	if err := p.ops[part].ProcessBatch(keys, p.ends[lo:hi], p.ets[lo:hi], p.added[lo:hi]); err != nil {
		return fmt.Errorf("partition %d: %w", part, err)
	}
	updated := int64(0)
	for e := lo; e < hi; e++ {
		p.out[p.pos[e]] = p.added[e]
		if p.added[e] {
			updated++
		}
	}
	p.stats.Updated[part] = updated
	return nil
}

// evictPartitions evicts each partition's store with the watermark and
// returns the keys removed in all.
func (q *Query) evictPartitions(d *dedupOp, watermark int64) (int, error) {
	p := d.parts
	p.evictAt = watermark
	clear(p.stats.Removed)
	err := q.pool.run(p.evict)
	total := 0
	for _, n := range p.stats.Removed {
		total += int(n)
	}
	return total, err
}

// evictOne evicts partition part's store.
func (p *opPartitions) evictOne(part int) error {
	removed, err := p.ops[part].Evict(p.evictAt)
	if err != nil {
		return fmt.Errorf("partition %d: %w", part, err)
	}
	p.stats.Removed[part] = int64(removed)
	return nil
}

// countTotals records each partition's keys after the batch.
func (d *dedupOp) countTotals() {
	if p := d.parts; p != nil {
		for part, op := range p.ops {
			p.stats.Total[part] = int64(op.Len())
		}
	}
}

// grow returns buf with length n, reusing its memory.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// partitionedStore is the state of one dedup operator over its
// partitions, as one engines.Store: what the query's commit, close, job
// snapshots and state counts see. Keys are written through the
// partitions' own operators (processPartitions), never through Add.
type partitionedStore struct {
	parts []engines.Store
}

var errPartitionedAdd = errors.New("a partitioned state store is written through its partitions, not Add")

// Add is not used: a key's partition comes from its columns, which the
// store does not see.
func (s *partitionedStore) Add([]byte, int64) (bool, error) { return false, errPartitionedAdd }

// Evict evicts every partition and returns the keys removed in all.
func (s *partitionedStore) Evict(watermark int64) (int, error) {
	total := 0
	for part, st := range s.parts {
		n, err := st.Evict(watermark)
		if err != nil {
			return total, fmt.Errorf("partition %d: %w", part, err)
		}
		total += n
	}
	return total, nil
}

// Len returns the keys of every partition.
func (s *partitionedStore) Len() int {
	n := 0
	for _, st := range s.parts {
		n += st.Len()
	}
	return n
}

// Commit commits every partition's store as the state of batchID, in
// partition order.
func (s *partitionedStore) Commit(batchID int64) error {
	for part, st := range s.parts {
		if err := st.Commit(batchID); err != nil {
			return fmt.Errorf("partition %d: %w", part, err)
		}
	}
	return nil
}

// Close closes every partition's store and returns the first error.
func (s *partitionedStore) Close() error {
	var first error
	for part, st := range s.parts {
		if err := st.Close(); err != nil && first == nil {
			first = fmt.Errorf("partition %d: %w", part, err)
		}
	}
	return first
}

// Snapshot prepares every partition's store that needs it for a reopen
// at version (engines.Snapshotter).
func (s *partitionedStore) Snapshot(version int64) error {
	for part, st := range s.parts {
		if sn, ok := st.(engines.Snapshotter); ok {
			if err := sn.Snapshot(version); err != nil {
				return fmt.Errorf("partition %d: %w", part, err)
			}
		}
	}
	return nil
}

// Parts returns the partitions' stores, in partition order.
func (s *partitionedStore) Parts() []engines.Store { return s.parts }

var (
	_ engines.Store       = (*partitionedStore)(nil)
	_ engines.Snapshotter = (*partitionedStore)(nil)
)
