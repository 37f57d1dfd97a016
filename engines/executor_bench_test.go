package engines_test

import (
	"fmt"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/sim"
	"github.com/dedupsim/dedupsim/sim/chain"
)

// blockRows is one micro-batch of a rowBlock as the executor reads it:
// column 0 is the id, column 1 the event time.
type blockRows struct {
	r          *rowBlock
	start, end int
}

func (b blockRows) Len() int                 { return b.end - b.start }
func (b blockRows) EventTime(i, _ int) int64 { return b.r.times[b.start+i] }

// AppendKey encodes the id, and the event time when it is a key column, as
// a fixed-width (hence injective) byte string.
func (b blockRows) AppendKey(dst []byte, i int, cols []int) []byte {
	for _, c := range cols {
		if c == 0 {
			dst = append(dst, b.r.key(b.start+i)...)
		} else {
			t := uint64(b.r.times[b.start+i])
			dst = append(dst, byte(t>>56), byte(t>>48), byte(t>>40), byte(t>>32), byte(t>>24), byte(t>>16), byte(t>>8), byte(t))
		}
	}
	return dst
}

var benchSchema = chain.Schema{{Name: "id"}, {Name: "t", Type: chain.Timestamp}}

// BenchmarkExecutor runs the stream through sim's micro-batch executor
// (late filter, key encoding, the operator, eviction, counters, one batch
// of batchRows rows per RunBatch) with a dropDuplicatesWithinWatermark
// query, and reports it against the raw operator loop of BenchmarkEngine
// over the same rows (op-ns/row, op-ratio: the executor's own overhead)
// and against the bare map loop (base-ns/row, ratio).
func BenchmarkExecutor(b *testing.B) {
	for _, st := range benchStores() {
		for _, size := range benchSizes()[:min(2, len(benchSizes()))] {
			name := fmt.Sprintf("query=within/store=%s/keys=%s", st.name, sizeName(size))
			b.Run(name, func(b *testing.B) { benchExecutor(b, st, size) })
		}
	}
}

func benchExecutor(b *testing.B, st benchStore, size int) {
	b.StopTimer()
	b.ReportAllocs()
	live := liveKeys(b, size)
	k := within
	g := newStreamGen(benchSeed)
	// The rows prime feeds the engines, kept to feed the executor.
	prefix := &rowBlock{}
	prime(g, k, live, func(key []byte, et int64) error {
		prefix.keys = append(prefix.keys, key...)
		prefix.times = append(prefix.times, et)
		return nil
	}, func(int64) error { return nil })
	rows := g.take(b.N)

	// The watermark delay that keeps about live keys: within keeps two.
	text := fmt.Sprintf(`withWatermark("t", "%d milliseconds").dropDuplicatesWithinWatermark(["id"])`, k.delayMicros(live)/1000)
	c, err := chain.Parse(text)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := chain.PlanFor(c, benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	q, err := sim.NewQuery(plan, func(int, chain.Node) (engines.Store, error) { return st.open(b), nil }, sim.State{})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	run := func(r *rowBlock) (emitted int) {
		for start := 0; start < r.len(); start += batchRows {
			p, err := q.RunBatch(blockRows{r, start, min(start+batchRows, r.len())}, sim.BatchMeta{})
			if err != nil {
				b.Fatal(err)
			}
			emitted += p.NumOutputRows
		}
		return emitted
	}
	run(prefix)
	var ex runResult
	t := startLoop(b)
	ex.emitted = run(rows)
	t.stop(&ex)

	op := k.newOperator(st.open(b), live)
	raw, err := runEngine(nil, op, k, live, newStreamGen(benchSeed), rows, false)
	if err != nil {
		b.Fatal(err)
	}
	op.Store().Close()
	base, _ := runBaseline(nil, k, live, newStreamGen(benchSeed), rows)
	if ex.emitted != base.emitted {
		b.Fatalf("executor emitted %d rows, the bare loop %d", ex.emitted, base.emitted)
	}
	reportRows(b, ex, base, rows.len())
	n := float64(rows.len())
	b.ReportMetric(float64(raw.elapsed.Nanoseconds())/n, "op-ns/row")
	b.ReportMetric(float64(ex.elapsed.Nanoseconds())/float64(raw.elapsed.Nanoseconds()), "op-ratio")
}
