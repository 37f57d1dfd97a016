package microbatch

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// testRows are rows with the columns id (0), t (1, a timestamp) and, in
// caseSchema, ID (2).
type testRows struct {
	ids []int64
	ts  []int64 // microseconds
	IDs []int64
}

func (r *testRows) Len() int                   { return len(r.ids) }
func (r *testRows) EventTime(i, col int) int64 { return r.ts[i] }
func (r *testRows) AppendKey(dst []byte, i int, cols []int) []byte {
	for _, c := range cols {
		v := r.ids[i]
		switch c {
		case 1:
			v = r.ts[i]
		case 2:
			v = r.IDs[i]
		}
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	return dst
}

// HashKey folds row i's cols as Spark hashes them: id and ID as longs, t
// as a timestamp (microseconds), so that the rows can run on partitioned
// stores.
func (r *testRows) HashKey(i int, cols []int) int32 {
	h := partition.Seed
	for _, c := range cols {
		switch c {
		case 0:
			h = partition.Long(h, r.ids[i])
		case 1:
			h = partition.Timestamp(h, r.ts[i])
		case 2:
			h = partition.Long(h, r.IDs[i])
		}
	}
	return h
}

// refPartition returns the partition of a reference key (8-byte
// big-endian columns, as testRows.AppendKey writes them) among n: each
// column folded as a long, which is how Spark hashes a long and a
// timestamp alike.
func refPartition(key string, n int) int {
	h := partition.Seed
	for off := 0; off+8 <= len(key); off += 8 {
		h = partition.Long(h, int64(binary.BigEndian.Uint64([]byte(key[off:off+8]))))
	}
	return partition.Of(h, n)
}

var (
	testSchema = chain.Schema{{Name: "id"}, {Name: "t", Type: chain.Timestamp}}
	// caseSchema adds a column that differs from id only in case: a key
	// named "id" or "ID" is then both columns.
	caseSchema = chain.Schema{{Name: "id"}, {Name: "t", Type: chain.Timestamp}, {Name: "ID"}}
)

// refOp is the reference model of one dedup operator: a plain map and a
// full scan to evict. It shares nothing with engines or the executor, and
// takes from the planner only the chain as parsed: keys, watermark reach
// and delay it works out itself.
type refOp struct {
	within   bool             // dropDuplicatesWithinWatermark
	cols     []int            // every schema column a key name matches, ignoring case
	reaches  bool             // a withWatermark comes before it
	delayMs  int64            // the nearest such withWatermark's delay
	etInKeys bool             // the event-time column t (1) is among cols
	state    map[string]int64 // key -> expiry (ms*1000 units), or -1 never
}

// refQuery is an obviously correct model of the micro-batch semantics of
// docs/replay-format.md, written as directly as possible.
type refQuery struct {
	ops    []*refOp
	nodes  []int // for each chain operator: -1 for a withWatermark, else its dedup index
	delays []int64
	wm     int64 // next batch's eviction watermark
	lastWm int64 // watermark the last batch ran with
	batch  int64
	nodeWm map[int]int64
	noData bool
	// restarted: the query restarted and has run no batch since (Spark
	// has no lastExecution to ask for a no-data batch).
	restarted bool
	// shuffle is spark.sql.shuffle.partitions: each dedup operator but the
	// last hands its emitted rows to the next sorted (stably) by its own
	// partition among shuffle, as Spark's local shuffle reads them.
	shuffle int
}

func newRef(c chain.Chain, schema chain.Schema, noData bool) *refQuery {
	r := &refQuery{nodeWm: map[int]int64{}, noData: noData}
	reaches, delay := false, int64(0)
	for _, op := range c.Ops {
		if op.Kind == chain.WithWatermark {
			reaches, delay = true, op.DelayMs
			r.nodes = append(r.nodes, -1)
			r.delays = append(r.delays, op.DelayMs)
			continue
		}
		o := &refOp{within: op.Kind == chain.DropDuplicatesWithinWatermark, reaches: reaches, delayMs: delay, state: map[string]int64{}}
		names := op.Keys
		if op.AllColumns {
			names = nil
			for _, col := range schema {
				names = append(names, col.Name)
			}
		}
		for _, name := range names {
			for ci, col := range schema {
				if strings.EqualFold(col.Name, name) {
					o.cols = append(o.cols, ci)
					o.etInKeys = o.etInKeys || ci == 1
				}
			}
		}
		r.nodes = append(r.nodes, len(r.ops))
		r.delays = append(r.delays, 0)
		r.ops = append(r.ops, o)
	}
	return r
}

// restart models a stop and a start from the checkpoint: state, watermark
// and batch id survive; the per-node watermarks do not (Spark makes a new
// WatermarkTracker and sets only the global watermark), and there is no
// last execution.
func (r *refQuery) restart() {
	r.nodeWm = map[int]int64{}
	r.restarted = true
}

type refBatch struct {
	noData  bool
	wm      int64
	ops     []OperatorProgress
	emitted []int
}

func (r *refQuery) run(rows *testRows, noData bool) refBatch {
	evict, late := r.wm, r.lastWm
	if r.batch == 0 {
		late = 0
	}
	alive := make([]int, rows.Len())
	for i := range alive {
		alive[i] = i
	}
	out := refBatch{noData: noData, wm: evict}
	maxSeen := map[int]int64{}
	for ni, k := range r.nodes {
		if k < 0 {
			for _, i := range alive {
				ms := rows.ts[i] / 1000
				if m, ok := maxSeen[ni]; !ok || ms > m {
					maxSeen[ni] = ms
				}
			}
			continue
		}
		op := r.ops[k]
		var p OperatorProgress
		var kept []int
		for _, i := range alive {
			if op.reaches && rows.ts[i] <= late*1000 {
				p.NumRowsDroppedByWatermark++
				continue
			}
			key := string(rows.AppendKey(nil, i, op.cols))
			if _, ok := op.state[key]; ok {
				p.NumDroppedDuplicateRows++
				continue
			}
			exp := int64(-1)
			if op.within {
				exp = rows.ts[i] + op.delayMs*1000
			} else if op.reaches && op.etInKeys {
				exp = rows.ts[i]
			}
			op.state[key] = exp
			p.NumRowsUpdated++
			kept = append(kept, i)
		}
		if op.reaches {
			for key, exp := range op.state {
				if exp != -1 && exp <= evict*1000 {
					delete(op.state, key)
					p.NumRowsRemoved++
				}
			}
		}
		p.NumRowsTotal = int64(len(op.state))
		out.ops = append(out.ops, p)
		if r.shuffle > 1 && k < len(r.ops)-1 {
			sort.SliceStable(kept, func(a, b int) bool {
				pa := refPartition(string(rows.AppendKey(nil, kept[a], op.cols)), r.shuffle)
				pb := refPartition(string(rows.AppendKey(nil, kept[b], op.cols)), r.shuffle)
				return pa < pb
			})
		}
		alive = kept
	}
	out.emitted = slices.Clone(alive)
	slices.Sort(out.emitted)
	// Watermark: per node max - delay, monotone per node, min over nodes
	// (0 for a node without data), monotone overall.
	for ni, k := range r.nodes {
		if k >= 0 {
			continue
		}
		if m, ok := maxSeen[ni]; ok {
			if old, ok := r.nodeWm[ni]; !ok || m-r.delays[ni] > old {
				r.nodeWm[ni] = m - r.delays[ni]
			}
		} else if _, ok := r.nodeWm[ni]; !ok {
			r.nodeWm[ni] = 0
		}
	}
	first := true
	var min int64
	for _, v := range r.nodeWm {
		if first || v < min {
			min, first = v, false
		}
	}
	if !first && min > r.wm {
		r.wm = min
	}
	r.lastWm = evict
	r.batch++
	r.restarted = false
	return out
}

func (r *refQuery) needsNoData() bool {
	if !r.noData || r.restarted || r.wm <= r.lastWm {
		return false
	}
	for _, op := range r.ops {
		if op.reaches {
			return true
		}
	}
	return false
}

var shapes = []string{
	`withWatermark("t", "%d seconds").dropDuplicates(["id", "t"])`,
	`withWatermark("t", "%d seconds").dropDuplicates(["id"])`,
	`withWatermark("t", "%d seconds").dropDuplicatesWithinWatermark(["id"])`,
	`withWatermark("t", "%d seconds").dropDuplicates()`,
	`dropDuplicates(["id"]).withWatermark("t", "%d seconds")`,
	`withWatermark("t", "%d seconds").dropDuplicates(["id", "t"]).dropDuplicatesWithinWatermark(["id"])`,
	`dropDuplicates(["id"]).withWatermark("t", "%d seconds").dropDuplicates(["id", "t"])`,
	`withWatermark("t", "%d seconds").dropDuplicatesWithinWatermark(["id", "t"]).dropDuplicates(["id"])`,
	`withWatermark("T", "%d seconds").dropDuplicatesWithinWatermark(["ID"])`,
	`withWatermark("t", "%d seconds").dropDuplicates(["Id", "T", "id"])`,
}

// TestExecutorMatchesReference runs random traces (rows, empty batches,
// idle triggers, restarts, no-data batches on and off, frames with and
// without a column that differs from id only in case) through the
// executor with real checkpointed memory stores and through the reference
// model, and compares every batch's counters, watermark and emitted rows,
// and at every idle trigger whether a no-data batch runs. A data batch does
// not bring its no-data batch along: only an idle trigger runs one, so
// data batches also follow each other directly (the late filter lagging),
// and a restart can fall between a batch and its no-data batch.
//
// The executor runs with one store per operator or with its state split
// over 1, 3 or 7 shuffle partitions (NewPartitionedQuery): the counters
// must not change except through the order in which a chain's later
// operator reads the rows (grouped by the earlier operator's partitions,
// see chainorder.go; drawn for one store per operator), and each partition's store must hold exactly the
// reference's keys that Spark's hash places in it, with each task's input
// rows, added and removed keys summing to the operator's.
func TestExecutorMatchesReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		shape := rapid.SampledFrom(shapes).Draw(rt, "shape")
		delay := rapid.IntRange(0, 5).Draw(rt, "delay")
		text := fmt.Sprintf(shape, delay)
		schema := testSchema
		if rapid.Bool().Draw(rt, "ID column") {
			schema = caseSchema
		}
		c, err := chain.Parse(text)
		if err != nil {
			rt.Fatal(err)
		}
		plan, err := chain.PlanFor(c, schema)
		if err != nil {
			rt.Fatal(err)
		}
		noData := rapid.Bool().Draw(rt, "noData")
		partitions := rapid.SampledFrom([]int{0, 1, 3, 7}).Draw(rt, "partitions")
		ref := newRef(c, schema, noData)
		// The shuffle partitions that order a chain's rows between its
		// operators: a partitioned query's own, else drawn.
		ref.shuffle = partitions
		if partitions == 0 {
			ref.shuffle = rapid.SampledFrom([]int{1, 2, 5}).Draw(rt, "shuffle partitions")
		}

		dir := t.TempDir()
		cp, err := CreateCheckpoint(dir+"/cp", CheckpointMeta{Query: text, Store: "memory", Partitions: partitions})
		if err != nil {
			rt.Fatal(err)
		}
		open := func() *Query {
			rec, err := cp.Recover()
			if err != nil {
				rt.Fatal(err)
			}
			var q *Query
			if partitions == 0 {
				stores := func(op int, _ chain.Node) (engines.Store, error) {
					return memstore.Open(cp.StateDir(op), rec.State.NextBatchID, memstore.Options{SnapshotEvery: 3})
				}
				if q, err = NewQuery(plan, stores, rec.State); err == nil {
					err = q.SetShufflePartitions(ref.shuffle)
				}
			} else {
				stores := func(op, part int, _ chain.Node) (engines.Store, error) {
					return memstore.Open(cp.PartitionDir(op, part), rec.State.NextBatchID, memstore.Options{SnapshotEvery: 3})
				}
				q, err = NewPartitionedQuery(plan, partitions, stores, rec.State)
			}
			if err != nil {
				rt.Fatal(err)
			}
			q.SetCheckpoint(cp)
			return q
		}
		q := open()
		defer func() { q.Close() }()

		check := func(step int, got *Progress, want refBatch, emitted []int) {
			if got.NoData != want.noData || got.Watermark != want.wm {
				rt.Fatalf("step %d batch %d: noData/watermark = %v/%d, reference %v/%d", step, got.BatchID, got.NoData, got.Watermark, want.noData, want.wm)
			}
			for k := range want.ops {
				g, w := got.Operators[k], want.ops[k]
				g.Name = ""
				if g != w {
					rt.Fatalf("step %d batch %d op %d: %+v, reference %+v", step, got.BatchID, k, g, w)
				}
			}
			if fmt.Sprint(emitted) != fmt.Sprint(want.emitted) {
				rt.Fatalf("step %d batch %d: emitted %v, reference %v", step, got.BatchID, emitted, want.emitted)
			}
			if partitions > 0 {
				checkPartitions(rt, step, q, ref, got)
			}
		}

		steps := rapid.IntRange(1, 30).Draw(rt, "steps")
		for s := 0; s < steps; s++ {
			switch rapid.IntRange(0, 9).Draw(rt, "step kind") {
			case 0:
				q.Close()
				q = open()
				ref.restart()
				continue
			case 1, 2, 3:
				// An idle trigger: a no-data batch, if Spark runs one.
				need := noData && q.NeedsNoDataBatch()
				if need != ref.needsNoData() {
					rt.Fatalf("step %d: no-data batch needed = %v, reference %v", s, need, ref.needsNoData())
				}
				if need {
					got, err := q.RunNoDataBatch(BatchMeta{})
					if err != nil {
						rt.Fatal(err)
					}
					check(s, got, ref.run(&testRows{}, true), nil)
				}
				continue
			}
			n := rapid.IntRange(0, 6).Draw(rt, "rows")
			rows := &testRows{}
			for i := 0; i < n; i++ {
				rows.ids = append(rows.ids, int64(rapid.IntRange(0, 4).Draw(rt, "id")))
				rows.IDs = append(rows.IDs, int64(rapid.IntRange(0, 1).Draw(rt, "ID")))
				// Times in whole and half seconds around a moving front.
				rows.ts = append(rows.ts, int64(rapid.IntRange(-2, 40).Draw(rt, "t"))*500_000+int64(rapid.IntRange(0, 1).Draw(rt, "us")))
			}
			got, err := q.RunBatch(rows, BatchMeta{})
			if err != nil {
				rt.Fatal(err)
			}
			var emitted []int
			for i, o := range q.Outcomes() {
				if o == engines.Emitted {
					emitted = append(emitted, i)
				}
			}
			check(s, got, ref.run(rows, false), emitted)
		}
	})
}

// checkPartitions checks a partitioned query's stores and task counters
// after a batch: partition p of each operator holds exactly the
// reference's keys that Spark's hash places in p, and the tasks' input
// rows, added and removed keys sum to the operator's counters.
func checkPartitions(rt *rapid.T, step int, q *Query, ref *refQuery, got *Progress) {
	n := q.Partitions()
	for k, op := range ref.ops {
		want := make([]int64, n)
		for key := range op.state {
			want[refPartition(key, n)]++
		}
		st := q.PartitionStats(k)
		if fmt.Sprint(st.Total) != fmt.Sprint(want) {
			rt.Fatalf("step %d batch %d op %d: keys per partition %v, reference %v", step, got.BatchID, k, st.Total, want)
		}
		var in, upd, rem int64
		for part := range n {
			in += st.InputRows[part]
			upd += st.Updated[part]
			rem += st.Removed[part]
		}
		o := got.Operators[k]
		if upd != o.NumRowsUpdated || rem != o.NumRowsRemoved {
			rt.Fatalf("step %d batch %d op %d: tasks added %d and removed %d keys, the operator %d and %d", step, got.BatchID, k, upd, rem, o.NumRowsUpdated, o.NumRowsRemoved)
		}
		// Every row that reached the operator went to one task: the
		// late, the duplicates and the emitted.
		if reached := o.NumRowsDroppedByWatermark + o.NumDroppedDuplicateRows + o.NumRowsUpdated; in != reached {
			rt.Fatalf("step %d batch %d op %d: tasks read %d rows, %d reached the operator", step, got.BatchID, k, in, reached)
		}
	}
}
