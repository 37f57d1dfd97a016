// Package microbatch is Spark's micro-batch execution, modelled exactly: batches,
// the event-time watermark, the late-row filter, eviction, no-data batches,
// batch ids, checkpoints and restarts. The dedup operators themselves live
// in engines; the query chain parser and planner in sim/spark/chain.
//
// What "exactly" covers: for every executed batch, its id, whether it is a
// no-data batch, its input row count, the watermark it ran with, the rows
// it emitted (which and in what order), and for each dedup operator the
// counters of Spark's StateOperatorProgress: numRowsTotal, numRowsUpdated,
// numRowsRemoved, numRowsDroppedByWatermark and the custom metric
// numDroppedDuplicateRows. Byte sizes, timings and partition-level metrics
// are estimated elsewhere (metrics, the spark: cost model), not modelled.
//
// The watermark rules, as Spark 3.5 applies them:
//
//   - Each withWatermark node tracks the largest event time (in whole
//     milliseconds, truncated) of the rows that reach it in a batch. After
//     the batch, its watermark is that maximum minus its delay, if larger
//     than before; the query's watermark is the minimum over the nodes (a
//     node that has seen no rows counts as 0) and never moves back.
//   - A batch runs with two watermarks: eviction uses the query's current
//     watermark (computed after the previous batch); the late-row filter
//     uses the watermark the previous batch ran with (0 for batch 0), read
//     from the offset log. A row is late when its event time is at or
//     below the late-row watermark (event time <= watermark x 1000
//     microseconds). So the late filter lags the eviction watermark
//     whenever a data batch follows a data batch that moved the watermark,
//     with no no-data batch between them: no-data batches disabled, data
//     arriving at the very next trigger, or a restart in between.
//   - After a batch, if no-data batches are enabled and the watermark now
//     exceeds the one the batch evicted with, for an operator the
//     watermark reaches, Spark runs a no-data batch (at the next trigger)
//     to evict. It asks the last batch's execution (MicroBatchExecution
//     .lastExecution) whether another batch is needed; after a restart
//     there is none until a batch runs, so a restarted query runs no no-data
//     batch until data arrives (State.Restarted).
//
// Worked example (delay 10 s, no-data batches off): batch 0 holds a@10 and
// b@30 and runs with watermark 0; the watermark becomes 20 s. Batch 1 runs
// with eviction watermark 20 s but late-row watermark 0: c@15 is not late
// and is emitted, then evicted in the same batch because 15 <= 20. The
// same happens with no-data batches on if the query restarts between the
// two batches, or if c arrives at the trigger right after batch 0.
package microbatch

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/spark"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// Rows is one micro-batch's input as the executor reads it. Generated rows
// and replayed trace rows both implement it.
type Rows interface {
	// Len returns the number of rows.
	Len() int
	// EventTime returns row i's value of timestamp column col, in
	// microseconds since the epoch.
	EventTime(i, col int) int64
	// AppendKey appends an exact, injective encoding of row i's values of
	// cols to dst: two rows get equal keys only if the values are equal.
	AppendKey(dst []byte, i int, cols []int) []byte
}

// OperatorProgress is one dedup operator's counters for one batch, named as
// in Spark's StateOperatorProgress.
type OperatorProgress struct {
	// Name is "dedupe" or "dedupeWithinWatermark".
	Name string
	// NumRowsTotal is the number of keys in state after the batch.
	NumRowsTotal int64
	// NumRowsUpdated is the number of keys the batch added.
	NumRowsUpdated int64
	// NumRowsRemoved is the number of keys the batch evicted.
	NumRowsRemoved int64
	// NumRowsDroppedByWatermark counts late rows dropped.
	NumRowsDroppedByWatermark int64
	// NumDroppedDuplicateRows counts rows dropped as duplicates.
	NumDroppedDuplicateRows int64
	// TWS is set for a transformWithState dedup, whose custom metrics are
	// transformWithState's: numValueStateVars (1), numValueStateWithTTLVars
	// (1 when TTL is set, else 0) and numValuesRemovedDueToTTLExpiry
	// (NumRowsRemoved), instead of numDroppedDuplicateRows. Timer is set
	// for the event-time flavour (a timer per key), whose custom metrics
	// are numValueStateVars (1), numRegisteredTimers (NumRowsUpdated: a
	// timer per state set), numDeletedTimers (NumRowsRemoved: each fired
	// timer clears a state and is deleted) and numExpiredTimers (0: the
	// JVM counts it, and a PySpark processor's timers fire in Python).
	TWS   bool
	TTL   bool
	Timer bool
}

// Progress describes one executed micro-batch.
type Progress struct {
	BatchID int64
	// NoData is true for a no-data batch (run only to evict).
	NoData       bool
	NumInputRows int
	// Watermark is the eviction watermark the batch ran with, in
	// milliseconds; meaningful when HasWatermark.
	Watermark    int64
	HasWatermark bool
	// LateWatermark is the watermark the late-row filter used (ms).
	LateWatermark int64
	// Operators holds one entry per dedup operator in chain order (the
	// first one nearest the source). Spark lists them the other way round.
	Operators     []OperatorProgress
	NumOutputRows int
}

// StoreFactory opens the state store of dedup operator op (0-based, in
// chain order) for the given node.
type StoreFactory func(op int, node chain.Node) (engines.Store, error)

// State is what a query keeps across batches and restarts: what Spark
// records in its offset and commit logs, and whether the running query has
// executed a batch since it started from them.
type State struct {
	// NextBatchID is the id of the next batch to run.
	NextBatchID int64
	// Watermark is the watermark the next batch will evict with (Spark's
	// commit-log nextBatchWatermarkMs).
	Watermark int64
	// LastBatchWatermark is the watermark the last executed batch ran with
	// (the offset log's batchWatermarkMs); the next batch's late filter.
	LastBatchWatermark int64
	// Restarted is set when the query was started from a checkpoint that
	// holds committed batches and has run no batch since (Recover sets
	// it, the next batch clears it). Spark's lastExecution is then empty:
	// constructNextBatch asks nothing about another batch, so no no-data
	// batch runs, however far the recovered watermark is ahead of the last
	// batch's, until data arrives and a batch runs.
	Restarted bool
}

// QueryFailure is an error Spark raises while the query runs, at a batch:
// the batches before it ran and committed their output, the failing one
// emitted nothing.
type QueryFailure struct {
	// BatchID is the batch Spark was planning when it failed.
	BatchID int64
	// Reason is Spark's error and why it fires there.
	Reason string
}

func (e *QueryFailure) Error() string {
	switch e.BatchID {
	case 0:
		return fmt.Sprintf("Spark fails the query at batch 0: %s", e.Reason)
	case 1:
		return fmt.Sprintf("Spark fails the query at batch 1, after batch 0 ran and committed its output: %s", e.Reason)
	}
	return fmt.Sprintf("Spark fails the query at batch %d, after batches 0-%d ran and committed their output: %s", e.BatchID, e.BatchID-1, e.Reason)
}

type dedupOp struct {
	idx  uint8 // position among the dedup operators, chain order
	node chain.Node
	op   spark.Operator
	prog OperatorProgress
	// parts are the operator's shuffle partitions; nil with one store.
	parts *opPartitions
}

type watermarkNode struct {
	node    chain.Node
	col     int
	delayMs int64
	// batchMaxMs and batchSeen are this batch's event-time statistics.
	batchMaxMs int64
	batchSeen  bool
	// wm is the node's own watermark; defined once the node has reported.
	wm      int64
	defined bool
}

// step is one node of the chain in execution order.
type step struct {
	dedup *dedupOp
	wm    *watermarkNode
}

// BatchMeta describes a batch for the checkpoint's offset log.
type BatchMeta struct {
	// TimestampMs is the batch's processing time (ms since the epoch).
	TimestampMs int64
	// Source is the source position the batch reads, opaque to the query.
	Source json.RawMessage
}

// Query runs micro-batches of one planned chain. It is not safe for
// concurrent use; run one query per goroutine.
type Query struct {
	plan  chain.Plan
	steps []step
	ops   []*dedupOp
	wms   []*watermarkNode
	st    State

	outcomes []engines.Outcome
	opOf     []uint8
	alive    []int32
	next     []int32
	// key, ends, ets and cand are one dedup step's input to
	// Operator.ProcessBatch: the keys of the rows that passed the late
	// filter, back to back, their end offsets, their event times and
	// their row numbers. added is its output. All reused across batches.
	key   []byte
	ends  []int32
	ets   []int64
	cand  []int32
	added []bool
	prog  Progress
	cp    *Checkpoint
	// partitions is the number of shuffle partitions (NewPartitionedQuery);
	// 0 with one store per operator.
	partitions int
	// pool runs the partitions' tasks (nil: this goroutine).
	pool *Pool
	// shuffle is the spark.sql.shuffle.partitions that orders a chain's
	// rows between dedup operators (SetShufflePartitions); 0 or 1 keeps
	// their order. regroupPart, regroupOut and regroupStart are regroup's
	// buffers.
	shuffle      int
	regroupPart  []int32
	regroupOut   []int32
	regroupStart []int32
	// owned, when ownedSet, are the rows of this batch the dedups see
	// (RunBatchOwned).
	owned    []int32
	ownedSet bool
}

// SetCheckpoint makes the query log every batch to cp (offsets before it
// runs, a commit after its state is committed), so that a restart can
// resume from it.
func (q *Query) SetCheckpoint(cp *Checkpoint) { q.cp = cp }

// NewQuery builds a query for plan with stores from stores, starting from
// state (the zero State for a new query).
func NewQuery(plan chain.Plan, stores StoreFactory, state State) (*Query, error) {
	q := &Query{plan: plan, st: state}
	for _, n := range plan.Nodes {
		switch n.Op.Kind {
		case chain.WithWatermark:
			w := &watermarkNode{node: n, col: n.EventTimeColumn, delayMs: n.DelayMs}
			q.wms = append(q.wms, w)
			q.steps = append(q.steps, step{wm: w})
		default:
			if len(q.ops) == 255 {
				q.Close()
				return nil, fmt.Errorf("query has more than 255 dedup operators")
			}
			s, err := stores(len(q.ops), n)
			if err != nil {
				q.Close()
				return nil, fmt.Errorf("operator %d (%s): open state store: %w", len(q.ops), n.Op.Kind, err)
			}
			op := newOperator(s, n)
			d := &dedupOp{idx: uint8(len(q.ops)), node: n, op: op}
			d.prog.Name = op.Name()
			if n.Op.Kind == chain.TransformWithStateDedup {
				d.prog.TWS, d.prog.TTL, d.prog.Timer = true, n.Op.TTLMs > 0, n.Op.TimerMs > 0
			}
			q.ops = append(q.ops, d)
			q.steps = append(q.steps, step{dedup: d})
		}
	}
	q.prog.Operators = make([]OperatorProgress, len(q.ops))
	return q, nil
}

// newOperator returns the dedup operator of node n over store s.
func newOperator(s engines.Store, n chain.Node) spark.Operator {
	if n.Op.Kind == chain.TransformWithStateDedup && n.Op.TimerMs > 0 {
		return spark.NewTWSTimerDedup(s, n.Op.TimerMs)
	}
	if n.Op.Kind == chain.TransformWithStateDedup {
		return spark.NewTWSDedup(s, n.Op.TTLMs)
	}
	if n.Op.Kind == chain.DropDuplicatesWithinWatermark {
		return spark.NewDedupeWithinWatermark(s, n.DelayMs)
	}
	return spark.NewDedupe(s, n.EventTimeInKeys && n.WatermarkReaches)
}

// Plan returns the query's plan.
func (q *Query) Plan() chain.Plan { return q.plan }

// State returns the query's cross-batch state.
func (q *Query) State() State { return q.st }

// Operators returns the query's dedup operators in chain order.
func (q *Query) Operators() []spark.Operator {
	out := make([]spark.Operator, len(q.ops))
	for i, d := range q.ops {
		out[i] = d.op
	}
	return out
}

// StateRows returns the keys held by all dedup operators together.
func (q *Query) StateRows() int64 {
	var n int64
	for _, d := range q.ops {
		n += int64(d.op.Len())
	}
	return n
}

// Outcomes returns, for the last batch, each input row's outcome. The
// slice is reused by the next batch.
func (q *Query) Outcomes() []engines.Outcome { return q.outcomes }

// OutcomeOperators returns, for the last batch, the index (chain order) of
// the operator that dropped each row; meaningless for emitted rows.
func (q *Query) OutcomeOperators() []uint8 { return q.opOf }

// NeedsNoDataBatch reports whether Spark would run a no-data batch now
// (when no-data batches are enabled): a batch ran since the query started
// (Spark's lastExecution exists, see State.Restarted) and an operator that
// the watermark reaches would evict with a newer watermark than that batch
// did. A query that Spark fails at this point (ShouldRunAnotherBatch)
// needs none.
func (q *Query) NeedsNoDataBatch() bool {
	need, err := q.ShouldRunAnotherBatch()
	return need && err == nil
}

// ShouldRunAnotherBatch is what Spark's constructNextBatch asks at every
// trigger when no-data batches are enabled (IncrementalExecution
// .shouldRunAnotherBatch on the last batch's execution): whether a no-data
// batch is needed, as NeedsNoDataBatch says, or the failure Spark raises
// while asking. Asking propagates the next batch's watermark through the
// plan, which for a chain with a second withWatermark raises "Redefining
// watermark is disallowed" once that watermark is not 0.
func (q *Query) ShouldRunAnotherBatch() (bool, error) {
	if q.st.Restarted {
		return false, nil // no lastExecution: nothing is asked
	}
	if r := q.plan.Redefinition; r != nil && engines.WatermarkSet(q.st.Watermark) {
		return false, q.redefined(q.st.Watermark)
	}
	for _, d := range q.ops {
		if d.prog.TWS && !d.prog.Timer {
			// TransformWithStateExecBase.shouldRunAnotherBatch: always in
			// processing time (SPARK-50180 is open), so a batch runs at
			// every trigger. In event time: when the watermark moved, as
			// for the other operators.
			return true, nil
		}
	}
	if q.st.Watermark <= q.st.LastBatchWatermark {
		return false, nil
	}
	for _, d := range q.ops {
		if d.node.WatermarkReaches {
			return true, nil
		}
	}
	return false, nil
}

// redefined is the failure of a chain with a second withWatermark when
// Spark propagates watermark wm (ms), not 0, for the next batch.
func (q *Query) redefined(wm int64) error {
	r := q.plan.Redefinition
	return &QueryFailure{BatchID: q.st.NextBatchID, Reason: fmt.Sprintf(
		"Redefining watermark is disallowed (AnalysisException): operator %d withWatermark follows operator %d's, "+
			"and batch %d is the first planned with a watermark other than 0 (%d ms)", r.Node+1, r.First+1, q.st.NextBatchID, wm)}
}

// OnlyIdleBatchesLeft reports whether every batch Spark would still run
// without new data changes nothing: the query is a transformWithState
// dedup (which asks for a batch at every processing-time trigger, for
// ever) with no TTL or no state left. A scenario run ends there once its
// stream is over; Spark would go on running empty batches.
func (q *Query) OnlyIdleBatchesLeft() bool {
	for _, d := range q.ops {
		if !d.prog.TWS || d.prog.Timer || d.prog.TTL && d.op.Len() > 0 {
			return false
		}
	}
	return len(q.ops) > 0
}

// RunBatch runs one data batch over rows (possibly empty: a batch whose
// source advanced with no rows). The returned Progress is reused by the
// next call.
func (q *Query) RunBatch(rows Rows, meta BatchMeta) (*Progress, error) {
	return q.run(rows, false, meta)
}

// RunBatchOwned runs one data batch of which a run split by key keeps
// only the rows owned (their row numbers, ascending): every withWatermark
// observes every row, so the watermark is the unsplit run's, and the
// dedups see the owned rows only, so they keep the state of the owned
// keys only. The progress counts every row as input (NumInputRows: the
// batch is the unsplit run's) and the owned rows only in every other
// counter; the outcomes of rows not owned are meaningless. A chain with a
// withWatermark after a dedup is an error: its watermark would depend on
// the verdicts of rows not owned.
func (q *Query) RunBatchOwned(rows Rows, owned []int32, meta BatchMeta) (*Progress, error) {
	q.owned, q.ownedSet = owned, true
	defer func() { q.owned, q.ownedSet = nil, false }()
	return q.run(rows, false, meta)
}

// RunNoDataBatch runs one no-data batch: no rows, eviction only.
func (q *Query) RunNoDataBatch(meta BatchMeta) (*Progress, error) {
	return q.run(emptyRows{}, true, meta)
}

// run runs one batch: it logs the batch's offsets, plans it (which may
// fail, see redefined), then runs the chain's steps in order over the
// rows that are still alive (a withWatermark records the batch's event
// times; a dedup filters late rows, decides the rest and evicts), and
// finally commits the stores, logs the commit and advances the watermark.
func (q *Query) run(rows Rows, noData bool, meta BatchMeta) (*Progress, error) {
	evictWm := q.st.Watermark
	lateWm := q.st.LastBatchWatermark
	if q.st.NextBatchID == 0 {
		lateWm = 0
	}
	if q.cp != nil {
		err := q.cp.WriteOffsets(q.st.NextBatchID, OffsetEntry{
			BatchWatermarkMs: evictWm, BatchTimestampMs: meta.TimestampMs, NoData: noData, Source: meta.Source,
		})
		if err != nil {
			return nil, fmt.Errorf("batch %d: %w", q.st.NextBatchID, err)
		}
	}
	// Planning the batch propagates both of its watermarks (the previous
	// batch's, for late rows, and its own): Spark fails a chain with a
	// second withWatermark here once either is not 0. The offsets are
	// written by then; nothing runs.
	if q.plan.Redefinition != nil && (engines.WatermarkSet(lateWm) || engines.WatermarkSet(evictWm)) {
		return nil, q.redefined(max(lateWm, evictWm))
	}
	for _, d := range q.ops {
		if t, ok := d.op.(*spark.TWSDedup); ok {
			if err := t.StartBatch(meta.TimestampMs); err != nil {
				return nil, fmt.Errorf("batch %d: operator %d (%s): %w", q.st.NextBatchID, d.idx, d.prog.Name, err)
			}
		}
	}
	alive := q.startBatch(rows.Len())
	split := q.ownedSet
	for _, s := range q.steps {
		if w := s.wm; w != nil {
			if q.ownedSet && !split {
				return nil, fmt.Errorf("batch %d: a withWatermark after a dedup cannot run split by key: its watermark depends on the verdicts of every key's rows", q.st.NextBatchID)
			}
			w.observe(rows, alive)
			continue
		}
		if split {
			alive, split = append(alive[:0], q.owned...), false
		}
		var err error
		if alive, err = q.dedup(s.dedup, rows, alive, lateWm*1000, evictWm*1000); err != nil {
			return nil, err
		}
	}
	if split {
		alive = q.owned
	}
	return q.commit(rows.Len(), len(alive), noData, evictWm, lateWm)
}

// startBatch resets the per-batch buffers for n rows, every row alive and
// emitted until an operator drops it, and returns the alive rows.
func (q *Query) startBatch(n int) []int32 {
	if cap(q.outcomes) < n {
		q.outcomes = make([]engines.Outcome, n)
		q.opOf = make([]uint8, n)
		q.alive = make([]int32, n)
		q.next = make([]int32, n)
	}
	q.outcomes = q.outcomes[:n]
	q.opOf = q.opOf[:n]
	alive := q.alive[:n]
	for i := range alive {
		alive[i] = int32(i)
		q.outcomes[i] = engines.Emitted
	}
	for _, w := range q.wms {
		w.batchSeen = false
	}
	return alive
}

// observe records the largest event time of the alive rows, as Spark's
// EventTimeWatermarkExec does: microseconds / 1000, truncated.
func (w *watermarkNode) observe(rows Rows, alive []int32) {
	for _, i := range alive {
		ms := rows.EventTime(int(i), w.col) / 1000
		if !w.batchSeen || ms > w.batchMaxMs {
			w.batchMaxMs = ms
			w.batchSeen = true
		}
	}
}

// dedup runs one dedup operator over the alive rows and returns the rows
// it emits, in order. Three passes, so that the operator sees the batch's
// keys at once (engines.BatchAdder: a store overlaps the cache misses of
// many keys): the late filter, which also encodes the keys of the rows
// that pass it; the operator, once, over every key in row order (the same
// decisions as one Process per row); and the outcomes. Eviction then runs
// with the batch's own watermark, after the operator consumed its input,
// so a key stored in this batch can go at once.
func (q *Query) dedup(d *dedupOp, rows Rows, alive []int32, lateMicros, evictMicros int64) ([]int32, error) {
	p := &d.prog
	p.NumRowsUpdated, p.NumRowsRemoved, p.NumRowsDroppedByWatermark, p.NumDroppedDuplicateRows = 0, 0, 0, 0
	if d.parts != nil {
		if err := q.route(d, rows, alive); err != nil {
			return nil, err
		}
	}
	if err := q.filterAndEncode(d, rows, alive, lateMicros); err != nil {
		return nil, err
	}
	if cap(q.added) < len(q.cand) {
		q.added = make([]bool, len(q.cand))
	}
	added := q.added[:len(q.cand)]
	var err error
	if d.parts != nil {
		err = q.processPartitions(d, added)
	} else {
		err = d.op.ProcessBatch(q.key, q.ends, q.ets, added)
	}
	if err != nil {
		return nil, fmt.Errorf("batch %d: operator %d (%s): %w", q.st.NextBatchID, d.idx, p.Name, err)
	}
	kept := q.applyOutcomes(d, added)
	if err := q.regroup(d, rows, kept); err != nil {
		return nil, err
	}
	if d.node.WatermarkReaches {
		var removed int
		if d.parts != nil {
			removed, err = q.evictPartitions(d, evictMicros)
		} else {
			removed, err = d.op.Evict(evictMicros)
		}
		if err != nil {
			return nil, fmt.Errorf("batch %d: operator %d (%s): evict: %w", q.st.NextBatchID, d.idx, p.Name, err)
		}
		p.NumRowsRemoved = int64(removed)
	}
	if t, ok := d.op.(*spark.TWSDedup); ok {
		p.NumRowsRemoved = int64(t.Removed())
	}
	p.NumRowsTotal = int64(d.op.Len())
	d.countTotals()
	// Swap buffers: the survivors feed the next node, grouped by this
	// operator's shuffle partition (regroup, see chainorder.go).
	q.alive, q.next = q.next[:cap(q.next)], q.alive[:cap(q.alive)]
	return kept, nil
}

// filterAndEncode drops the alive rows at or below the late watermark
// (when the watermark reaches the operator) and encodes the keys of the
// others back to back into q.key, with their end offsets, event times and
// row numbers (q.ends, q.ets, q.cand).
func (q *Query) filterAndEncode(d *dedupOp, rows Rows, alive []int32, lateMicros int64) error {
	filter := d.node.WatermarkReaches
	etCol := d.node.EventTimeColumn
	cand := q.cand[:0]
	keys, ends, ets := q.key[:0], q.ends[:0], q.ets[:0]
	for _, i := range alive {
		var et int64
		if etCol >= 0 {
			et = rows.EventTime(int(i), etCol)
		}
		if filter && et <= lateMicros {
			q.outcomes[i] = engines.DroppedLate
			q.opOf[i] = d.idx
			d.prog.NumRowsDroppedByWatermark++
			continue
		}
		keys = rows.AppendKey(keys, int(i), d.node.KeyColumns)
		if len(keys) > math.MaxInt32 {
			return fmt.Errorf("batch %d: operator %d (%s): the batch's keys exceed 2 GiB", q.st.NextBatchID, d.idx, d.prog.Name)
		}
		ends = append(ends, int32(len(keys)))
		ets = append(ets, et)
		cand = append(cand, i)
	}
	q.key, q.ends, q.ets, q.cand = keys, ends, ets, cand
	return nil
}

// applyOutcomes records the operator's decision on each candidate row and
// returns the rows it emits; survivors keep their order.
func (q *Query) applyOutcomes(d *dedupOp, added []bool) []int32 {
	kept := q.next[:0]
	for k, i := range q.cand {
		if added[k] {
			d.prog.NumRowsUpdated++
			kept = append(kept, i)
		} else {
			q.outcomes[i] = engines.DroppedDuplicate
			q.opOf[i] = d.idx
			d.prog.NumDroppedDuplicateRows++
		}
	}
	return kept
}

// commit commits the operators' stores as the state of the batch, fills
// its progress record, advances the watermark and logs the commit.
func (q *Query) commit(n, emitted int, noData bool, evictWm, lateWm int64) (*Progress, error) {
	for k, d := range q.ops {
		if err := d.op.Store().Commit(q.st.NextBatchID); err != nil {
			return nil, fmt.Errorf("batch %d: operator %d (%s): commit: %w", q.st.NextBatchID, k, d.prog.Name, err)
		}
	}
	pr := &q.prog
	pr.BatchID = q.st.NextBatchID
	pr.NoData = noData
	pr.NumInputRows = n
	pr.Watermark = evictWm
	pr.LateWatermark = lateWm
	pr.HasWatermark = q.plan.HasWatermark
	pr.NumOutputRows = emitted
	for k, d := range q.ops {
		pr.Operators[k] = d.prog
	}
	q.st.LastBatchWatermark = evictWm
	q.st.Restarted = false
	q.updateWatermark()
	if q.cp != nil {
		if err := q.cp.WriteCommit(q.st.NextBatchID, CommitEntry{NextBatchWatermarkMs: q.st.Watermark}); err != nil {
			return nil, fmt.Errorf("batch %d: %w", q.st.NextBatchID, err)
		}
	}
	q.st.NextBatchID++
	return pr, nil
}

// updateWatermark is Spark's WatermarkTracker.updateWatermark with the
// default "min" policy.
func (q *Query) updateWatermark() {
	if len(q.wms) == 0 {
		return
	}
	for _, w := range q.wms {
		if w.batchSeen {
			cand := w.batchMaxMs - w.delayMs
			if !w.defined || cand > w.wm {
				w.wm = cand
				w.defined = true
			}
		} else if !w.defined {
			// Spark populates 0 for a node that has seen no data yet.
			w.wm = 0
			w.defined = true
		}
	}
	min := q.wms[0].wm
	for _, w := range q.wms[1:] {
		if w.wm < min {
			min = w.wm
		}
	}
	if min > q.st.Watermark {
		q.st.Watermark = min
	}
}

// Close closes the operators' stores.
func (q *Query) Close() error {
	var first error
	for _, d := range q.ops {
		if err := d.op.Store().Close(); err != nil && first == nil {
			first = err
		}
	}
	q.ops = nil
	if q.cp != nil {
		// The checkpoint's log file, open for appends.
		if err := q.cp.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

type emptyRows struct{}

func (emptyRows) Len() int                                    { return 0 }
func (emptyRows) EventTime(int, int) int64                    { return 0 }
func (emptyRows) AppendKey(dst []byte, _ int, _ []int) []byte { return dst }
