package sim

import (
	"encoding/binary"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/sim/chain"
)

// testRows are rows with two columns: id (0) and t (1, a timestamp).
type testRows struct {
	ids []int64
	ts  []int64 // microseconds
}

func (r *testRows) Len() int                   { return len(r.ids) }
func (r *testRows) EventTime(i, col int) int64 { return r.ts[i] }
func (r *testRows) AppendKey(dst []byte, i int, cols []int) []byte {
	for _, c := range cols {
		v := r.ids[i]
		if c == 1 {
			v = r.ts[i]
		}
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	return dst
}

var testSchema = chain.Schema{{Name: "id"}, {Name: "t", Type: chain.Timestamp}}

// refOp is the reference model of one dedup operator: a plain map and a
// full scan to evict. It shares nothing with engines or the executor.
type refOp struct {
	node  chain.Node
	state map[string]int64 // key -> expiry (ms*1000 units), or -1 never
}

// refQuery is an obviously correct model of the micro-batch semantics of
// FORMAT.md, written as directly as possible.
type refQuery struct {
	plan        chain.Plan
	ops         []*refOp
	wm          int64 // next batch's eviction watermark
	lastWm      int64 // watermark the last batch ran with
	batch       int64
	nodeWm      map[int]int64
	noData      bool
	lastLateWms []int64
}

func newRef(p chain.Plan, noData bool) *refQuery {
	r := &refQuery{plan: p, nodeWm: map[int]int64{}, noData: noData}
	for _, n := range p.Nodes {
		if n.IsDedup() {
			r.ops = append(r.ops, &refOp{node: n, state: map[string]int64{}})
		}
	}
	return r
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
	k := 0
	for ni, n := range r.plan.Nodes {
		if !n.IsDedup() {
			for _, i := range alive {
				ms := rows.ts[i] / 1000
				if m, ok := maxSeen[ni]; !ok || ms > m {
					maxSeen[ni] = ms
				}
			}
			continue
		}
		op := r.ops[k]
		k++
		var p OperatorProgress
		var kept []int
		for _, i := range alive {
			if n.WatermarkReaches && rows.ts[i] <= late*1000 {
				p.NumRowsDroppedByWatermark++
				continue
			}
			key := string(rows.AppendKey(nil, i, n.KeyColumns))
			if _, ok := op.state[key]; ok {
				p.NumDroppedDuplicateRows++
				continue
			}
			exp := int64(-1)
			if n.Op.Kind == chain.DropDuplicatesWithinWatermark {
				exp = rows.ts[i] + n.DelayMs*1000
			} else if n.WatermarkReaches && n.EventTimeInKeys {
				exp = rows.ts[i]
			}
			op.state[key] = exp
			p.NumRowsUpdated++
			kept = append(kept, i)
		}
		if n.WatermarkReaches {
			for key, exp := range op.state {
				if exp != -1 && exp <= evict*1000 {
					delete(op.state, key)
					p.NumRowsRemoved++
				}
			}
		}
		p.NumRowsTotal = int64(len(op.state))
		out.ops = append(out.ops, p)
		alive = kept
	}
	out.emitted = alive
	// Watermark: per node max - delay, monotone per node, min over nodes
	// (0 for a node without data), monotone overall.
	for ni, n := range r.plan.Nodes {
		if n.IsDedup() {
			continue
		}
		if m, ok := maxSeen[ni]; ok {
			if old, ok := r.nodeWm[ni]; !ok || m-n.DelayMs > old {
				r.nodeWm[ni] = m - n.DelayMs
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
	return out
}

func (r *refQuery) needsNoData() bool {
	if !r.noData || r.wm <= r.lastWm {
		return false
	}
	for _, op := range r.ops {
		if op.node.WatermarkReaches {
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
}

// TestExecutorMatchesReference runs random traces (rows, empty batches,
// restarts, no-data batches on and off) through the executor with real
// checkpointed memory stores and through the reference model, and compares
// every batch's counters, watermark and emitted rows.
func TestExecutorMatchesReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		shape := rapid.SampledFrom(shapes).Draw(rt, "shape")
		delay := rapid.IntRange(0, 5).Draw(rt, "delay")
		text := fmt.Sprintf(shape, delay)
		c, err := chain.Parse(text)
		if err != nil {
			rt.Fatal(err)
		}
		plan, err := chain.PlanFor(c, testSchema)
		if err != nil {
			rt.Fatal(err)
		}
		noData := rapid.Bool().Draw(rt, "noData")
		ref := newRef(plan, noData)

		dir := t.TempDir()
		cp, err := CreateCheckpoint(dir+"/cp", CheckpointMeta{Query: text, Store: "memory"})
		if err != nil {
			rt.Fatal(err)
		}
		open := func() *Query {
			rec, err := cp.Recover()
			if err != nil {
				rt.Fatal(err)
			}
			stores := func(op int, _ chain.Node) (engines.Store, error) {
				return memstore.Open(cp.StateDir(op), rec.State.NextBatchID, memstore.Options{SnapshotEvery: 3})
			}
			q, err := NewQuery(plan, stores, rec.State)
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
		}

		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for s := 0; s < steps; s++ {
			if rapid.IntRange(0, 9).Draw(rt, "restart?") == 0 {
				q.Close()
				q = open()
				continue
			}
			n := rapid.IntRange(0, 6).Draw(rt, "rows")
			rows := &testRows{}
			for i := 0; i < n; i++ {
				rows.ids = append(rows.ids, int64(rapid.IntRange(0, 4).Draw(rt, "id")))
				// Times in whole and half seconds around a moving front.
				rows.ts = append(rows.ts, int64(rapid.IntRange(-2, 40).Draw(rt, "t"))*500_000+int64(rapid.IntRange(0, 1).Draw(rt, "us")))
			}
			got, err := q.RunBatch(rows, BatchMeta{})
			if err != nil {
				rt.Fatal(err)
			}
			var emitted []int
			for i, o := range q.Outcomes() {
				if o == Emitted {
					emitted = append(emitted, i)
				}
			}
			check(s, got, ref.run(rows, false), emitted)
			if noData && q.NeedsNoDataBatch() != ref.needsNoData() {
				rt.Fatalf("step %d: no-data batch needed = %v, reference %v", s, q.NeedsNoDataBatch(), ref.needsNoData())
			}
			if noData && q.NeedsNoDataBatch() {
				got, err := q.RunNoDataBatch(BatchMeta{})
				if err != nil {
					rt.Fatal(err)
				}
				check(s, got, ref.run(&testRows{}, true), nil)
			}
		}
	})
}
