package microbatch_test

import (
	"fmt"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
	"github.com/dedupsim/dedupsim/internal/enginetest"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"path/filepath"
)

// blockRows is one micro-batch of an enginetest.RowBlock as the executor reads it:
// column 0 is the id, column 1 the event time.
type blockRows struct {
	r          *enginetest.RowBlock
	start, end int
}

func (b blockRows) Len() int                 { return b.end - b.start }
func (b blockRows) EventTime(i, _ int) int64 { return b.r.Times[b.start+i] }

// AppendKey encodes the id, and the event time when it is a key column, as
// a fixed-width (hence injective) byte string.
func (b blockRows) AppendKey(dst []byte, i int, cols []int) []byte {
	for _, c := range cols {
		if c == 0 {
			dst = append(dst, b.r.Key(b.start+i)...)
		} else {
			t := uint64(b.r.Times[b.start+i])
			dst = append(dst, byte(t>>56), byte(t>>48), byte(t>>40), byte(t>>32), byte(t>>24), byte(t>>16), byte(t>>8), byte(t))
		}
	}
	return dst
}

// executorStore is a state store the executor is benchmarked on.
type executorStore struct {
	name string
	open func(b *testing.B) engines.Store
}

// executorStores are the engines' benchmark stores: the memory store and
// a Pebble store in the benchmark's temporary folder.
func executorStores() []executorStore {
	return []executorStore{
		{"memory", func(*testing.B) engines.Store { return memstore.New() }},
		{"pebble", func(b *testing.B) engines.Store {
			s, err := pebblestore.Open(filepath.Join(b.TempDir(), "store"), pebblestore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
}

var benchSchema = chain.Schema{{Name: "id"}, {Name: "t", Type: chain.Timestamp}}

// BenchmarkExecutor runs the stream through sim's micro-batch executor
// (late filter, key encoding, the operator, eviction, counters, one batch
// of enginetest.BatchRows rows per RunBatch) with a dropDuplicatesWithinWatermark
// query, and reports it against the raw operator loop of BenchmarkEngine
// over the same rows (op-ns/row, op-ratio: the executor's own overhead)
// and against the bare map loop (base-ns/row, ratio).
func BenchmarkExecutor(b *testing.B) {
	for _, st := range executorStores() {
		for _, size := range enginetest.BenchSizes()[:min(2, len(enginetest.BenchSizes()))] {
			name := fmt.Sprintf("query=within/store=%s/keys=%s", st.name, enginetest.SizeName(size))
			b.Run(name, func(b *testing.B) { benchExecutor(b, st, size) })
		}
	}
}

func benchExecutor(b *testing.B, st executorStore, size int) {
	b.StopTimer()
	b.ReportAllocs()
	live := enginetest.LiveKeys(b, size)
	k := enginetest.Within
	g := enginetest.NewStreamGen(enginetest.Seed)
	// The rows enginetest.Prime feeds the engines, kept to feed the executor.
	prefix := &enginetest.RowBlock{}
	enginetest.Prime(g, k, live, func(key []byte, et int64) error {
		prefix.Keys = append(prefix.Keys, key...)
		prefix.Times = append(prefix.Times, et)
		return nil
	}, func(int64) error { return nil })
	rows := g.Take(b.N)

	// The watermark delay that keeps about live keys: within keeps two.
	text := fmt.Sprintf(`withWatermark("t", "%d milliseconds").dropDuplicatesWithinWatermark(["id"])`, k.DelayMicros(live)/1000)
	c, err := chain.Parse(text)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := chain.PlanFor(c, benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	q, err := microbatch.NewQuery(plan, func(int, chain.Node) (engines.Store, error) { return st.open(b), nil }, microbatch.State{})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	run := func(r *enginetest.RowBlock) (emitted int) {
		for start := 0; start < r.Len(); start += enginetest.BatchRows {
			p, err := q.RunBatch(blockRows{r, start, min(start+enginetest.BatchRows, r.Len())}, microbatch.BatchMeta{})
			if err != nil {
				b.Fatal(err)
			}
			emitted += p.NumOutputRows
		}
		return emitted
	}
	run(prefix)
	var ex enginetest.RunResult
	t := enginetest.StartLoop(b)
	ex.Emitted = run(rows)
	t.Stop(&ex)

	op := k.NewOperator(st.open(b), live)
	raw, err := enginetest.RunEngine(nil, op, k, live, enginetest.NewStreamGen(enginetest.Seed), rows, false)
	if err != nil {
		b.Fatal(err)
	}
	op.Store().Close()
	base, _ := enginetest.RunBaseline(nil, k, live, enginetest.NewStreamGen(enginetest.Seed), rows)
	if ex.Emitted != base.Emitted {
		b.Fatalf("executor emitted %d rows, the bare loop %d", ex.Emitted, base.Emitted)
	}
	enginetest.ReportRows(b, ex, base, rows.Len())
	n := float64(rows.Len())
	b.ReportMetric(float64(raw.Elapsed.Nanoseconds())/n, "op-ns/row")
	b.ReportMetric(float64(ex.Elapsed.Nanoseconds())/float64(raw.Elapsed.Nanoseconds()), "op-ratio")
}
