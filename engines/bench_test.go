package engines_test

import (
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/internal/enginetest"
)

// The benchmarks of this file compare each engine with a bare Go map loop
// over the same keys, measured inside the same benchmark run, and report:
//
//	ns/row           the engine's time per row (the same as ns/op)
//	allocs/row       the engine's heap allocations per row, as a fraction
//	bytes/key        heap growth per live key after the run (engine)
//	base-ns/row      the bare loop's time per row
//	base-allocs/row  the bare loop's allocations per row
//	base-bytes/key   the bare loop's heap growth per live key
//	ratio            ns/row / base-ns/row
//
// Setup (generating the rows, filling the live keys, warming up) is not
// timed but runs again for every b.N the testing package tries, so fix the
// rows for stable numbers, e.g.
//
//	go test ./engines -run '^$' -bench 'Engine|Evict' -benchtime 2000000x -count 6
//
// A run with b.N == 1 (-benchtime=1x, a smoke test) or -short uses small
// sizes whatever the name says, so that CI stays fast.

// benchStore is a state store under benchmark, with the bare loop it is
// measured against: the Go map for the memory store, Pebble's own Get and
// Set for the Pebble store.
type benchStore struct {
	name string
	open func(b *testing.B) engines.Store
	// base runs the bare loop over the same stream and rows as
	// enginetest.RunEngine, and returns its result and its heap growth per live key
	// since before (measured while the loop's state is still alive).
	base func(b *testing.B, k enginetest.Kind, live int, g *enginetest.StreamGen, rows *enginetest.RowBlock, before uint64) (enginetest.RunResult, float64)
	// baseEvict returns the bare loop's side of BenchmarkEvict.
	baseEvict func(b *testing.B, stay int) (w *window, live func() int, done func())
	// sizes are the live-key counts this store is benchmarked at.
	sizes []int
}

func benchStores() []benchStore {
	return []benchStore{
		{
			name: "memory",
			open: func(*testing.B) engines.Store { return memstore.New() },
			base: func(_ *testing.B, k enginetest.Kind, live int, g *enginetest.StreamGen, rows *enginetest.RowBlock, before uint64) (enginetest.RunResult, float64) {
				r, m := enginetest.RunBaseline(nil, k, live, g, rows)
				bytes := enginetest.PerKey(before, len(m.M))
				runtime.KeepAlive(m)
				return r, bytes
			},
			baseEvict: mapEvictWindow,
			sizes:     enginetest.BenchSizes(),
		},
		pebbleBenchStore(),
	}
}

// BenchmarkEngine runs each dedup engine over each store on the workload
// of stream_test.go at 1e5, 1e6 and 1e7 live keys and reports the ratio
// to the store's bare loop over the same keys, measured in the same run:
// the Go map for the memory store, Pebble Get and Set in NoSync batches
// for the Pebble store.
//
// The evicting engines (dedupe-evict, within) hold about keys= live keys
// throughout: the watermark delay is chosen for it. dedupe-noevict is
// prefilled with keys= distinct ids and then grows by every new id of the
// run (95% of rows).
func BenchmarkEngine(b *testing.B) {
	for _, k := range []enginetest.Kind{enginetest.DedupeNoEvict, enginetest.DedupeEvict, enginetest.Within} {
		for _, st := range benchStores() {
			for _, size := range st.sizes {
				name := fmt.Sprintf("engine=%s/store=%s/keys=%s", k, st.name, enginetest.SizeName(size))
				b.Run(name, func(b *testing.B) { benchEngine(b, k, st, size) })
			}
		}
	}
}

func benchEngine(b *testing.B, k enginetest.Kind, st benchStore, size int) {
	b.StopTimer()
	b.ReportAllocs()
	live := enginetest.LiveKeys(b, size)
	g := enginetest.NewStreamGen(enginetest.Seed)
	enginetest.Prime(g, k, live, func([]byte, int64) error { return nil }, func(int64) error { return nil })
	rows := g.Take(b.N)

	before := enginetest.HeapAlloc()
	op := k.NewOperator(st.open(b), live)
	eng, err := enginetest.RunEngine(b, op, k, live, enginetest.NewStreamGen(enginetest.Seed), rows, false)
	if err != nil {
		b.Fatal(err)
	}
	engBytes := enginetest.PerKey(before, op.Len())
	diskBytes := diskPerKey(op.Store())
	flushNs := flushPerKey(op.Store())
	if err := op.Store().Close(); err != nil {
		b.Fatal(err)
	}
	op = nil

	if st.base == nil {
		// No bare loop (-skip-bare-pebble): the engine's own numbers.
		n := float64(rows.Len())
		b.ReportMetric(float64(eng.Elapsed.Nanoseconds())/n, "ns/row")
		b.ReportMetric(float64(eng.CPU.Nanoseconds())/n, "cpu-ns/row")
		b.ReportMetric(float64(eng.Mallocs)/n, "allocs/row")
		b.ReportMetric(engBytes, "bytes/key")
		b.ReportMetric(diskBytes, "disk-bytes/key")
		b.ReportMetric(flushNs, "flush-ns/key")
		return
	}
	base, baseBytes := st.base(b, k, live, enginetest.NewStreamGen(enginetest.Seed), rows, enginetest.HeapAlloc())
	if st.name == "memory" && base.Emitted != eng.Emitted {
		// (The bare Pebble loop does not read its own batch's writes, so
		// it emits a repeat that comes within its batch again.)
		b.Fatalf("engine emitted %d rows, the bare loop %d", eng.Emitted, base.Emitted)
	}
	enginetest.ReportRows(b, eng, base, rows.Len())
	b.ReportMetric(engBytes, "bytes/key")
	b.ReportMetric(baseBytes, "base-bytes/key")
	if diskBytes > 0 {
		b.ReportMetric(diskBytes, "disk-bytes/key")
	}
	if flushNs > 0 {
		b.ReportMetric(flushNs, "flush-ns/key")
	}
}

// BenchmarkBatchAdd measures what handing the store a batch of keys at
// once (Operator.ProcessBatch, engines.BatchAdder) saves over one Process
// per row, on the memory store and the within engine, both measured in
// the same run over the same rows: ns/row is the batch call, row-ns/row
// the per-row call, ratio their quotient.
func BenchmarkBatchAdd(b *testing.B) {
	sizes := enginetest.BenchSizes()[:min(2, len(enginetest.BenchSizes()))]
	for _, size := range sizes {
		b.Run(fmt.Sprintf("engine=within/store=memory/keys=%s", enginetest.SizeName(size)), func(b *testing.B) {
			b.StopTimer()
			b.ReportAllocs()
			live := enginetest.LiveKeys(b, size)
			g := enginetest.NewStreamGen(enginetest.Seed)
			enginetest.Prime(g, enginetest.Within, live, func([]byte, int64) error { return nil }, func(int64) error { return nil })
			rows := g.Take(b.N)
			run := func(bb *testing.B, perRow bool) enginetest.RunResult {
				op := enginetest.Within.NewOperator(memstore.New(), live)
				r, err := enginetest.RunEngine(bb, op, enginetest.Within, live, enginetest.NewStreamGen(enginetest.Seed), rows, perRow)
				if err != nil {
					b.Fatal(err)
				}
				op.Store().Close()
				enginetest.HeapAlloc()
				return r
			}
			row := run(nil, true)
			batch := run(b, false)
			if row.Emitted != batch.Emitted || row.Evicted != batch.Evicted {
				b.Fatalf("batch: emitted %d, evicted %d; per row: %d, %d", batch.Emitted, batch.Evicted, row.Emitted, row.Evicted)
			}
			n := float64(rows.Len())
			b.ReportMetric(float64(batch.Elapsed.Nanoseconds())/n, "ns/row")
			b.ReportMetric(float64(row.Elapsed.Nanoseconds())/n, "row-ns/row")
			b.ReportMetric(float64(batch.Elapsed)/float64(row.Elapsed), "ratio")
			b.ReportMetric(float64(batch.CPU.Nanoseconds())/n, "cpu-ns/row")
			b.ReportMetric(float64(row.CPU.Nanoseconds())/n, "row-cpu-ns/row")
			b.ReportMetric(float64(batch.CPU)/float64(max(row.CPU, 1)), "cpu-ratio")
			b.ReportMetric(float64(batch.Mallocs)/n, "allocs/row")
		})
	}
}

// BenchmarkEvict measures the cost per evicted key while stay= keys remain
// in the store: a sliding window of ids in event-time order (with the
// stream's jitter), where each round adds enginetest.BatchRows new ids (not timed) and
// evicts (timed) the enginetest.BatchRows oldest. The cost must not grow with stay:
// eviction costs what it evicts. ns/op and ns/key are per evicted key; the
// baseline deletes the same keys from the store's bare loop (a Go map, or
// Pebble) through a FIFO. For Pebble the timed part includes the Commit
// that writes the evictions' deletes (the round's adds are committed
// before, untimed).
//
// -evict-1e8 adds stay=1e8 for the memory store (a heap of gigabytes and
// minutes of filling, BENCHMARKS.md, "Numbers behind the code's
// comments"; its bare-map baseline, which would need more again, is
// skipped, so that size reports only the store's metrics).
func BenchmarkEvict(b *testing.B) {
	for _, st := range benchStores() {
		sizes := st.sizes
		if *evict1e8 && st.name == "memory" && !testing.Short() {
			sizes = append(sizes[:len(sizes):len(sizes)], evictHuge)
		}
		for _, size := range sizes {
			name := fmt.Sprintf("store=%s/stay=%s", st.name, enginetest.SizeName(size))
			b.Run(name, func(b *testing.B) { benchEvict(b, st, size) })
		}
	}
}

// evict1e8 adds stay=1e8 to BenchmarkEvict's memory store.
var evict1e8 = flag.Bool("evict-1e8", false, "BenchmarkEvict: also run the memory store at stay=1e8 (about 10 GB; no bare-map baseline at that size)")

// evictHuge is the size -evict-1e8 adds; its bare-map baseline is skipped.
const evictHuge = 100_000_000

// window is the sliding window of BenchmarkEvict over one store or map.
type window struct {
	stay int
	next uint64 // the next id to add
	add  func(key []byte, exp int64) error
	// evict evicts at a watermark and reports how many keys went.
	evict func(wm int64) (int, error)
	// commit, if set, ends a batch: after the adds (untimed) and after
	// the eviction (timed).
	commit func() error
}

// round adds enginetest.BatchRows ids, then evicts every id that is more than stay
// ids old; only the eviction runs inside the timed loop, when b is not nil.
func (w *window) round(b *testing.B, r *enginetest.RunResult) error {
	var key [enginetest.IDLen]byte
	for range enginetest.BatchRows {
		enginetest.PutID(key[:], w.next)
		if err := w.add(key[:], enginetest.EventTime(w.next)); err != nil {
			return err
		}
		w.next++
	}
	if w.commit != nil {
		if err := w.commit(); err != nil {
			return err
		}
	}
	wm := enginetest.EventTime(0) + (int64(w.next)-int64(w.stay))*enginetest.StepMicros - 1
	var one enginetest.RunResult
	t := enginetest.StartLoop(b)
	n, err := w.evict(wm)
	if err == nil && w.commit != nil {
		err = w.commit()
	}
	t.Stop(&one)
	r.Evicted += n
	r.Elapsed += one.Elapsed
	r.CPU += one.CPU
	r.Mallocs += one.Mallocs
	return err
}

// fill adds the ids that stay and runs enginetest.WarmBatches untimed rounds, so
// that the timed rounds see the steady state.
func (w *window) fill() error {
	var key [enginetest.IDLen]byte
	for ; w.next < uint64(w.stay); w.next++ {
		enginetest.PutID(key[:], w.next)
		if err := w.add(key[:], enginetest.EventTime(w.next)); err != nil {
			return err
		}
		if w.commit != nil && (w.next+1)%enginetest.BatchRows == 0 {
			if err := w.commit(); err != nil {
				return err
			}
		}
	}
	var r enginetest.RunResult
	for range enginetest.WarmBatches {
		if err := w.round(nil, &r); err != nil {
			return err
		}
	}
	return nil
}

// run does rounds until at least n keys were evicted.
func (w *window) run(b *testing.B, n int) (enginetest.RunResult, error) {
	var r enginetest.RunResult
	for r.Evicted < n {
		if err := w.round(b, &r); err != nil {
			return r, err
		}
	}
	return r, nil
}

// mapEvictWindow is BenchmarkEvict's bare loop for the memory store: a Go
// map whose keys are deleted through an arrival-order FIFO.
func mapEvictWindow(_ *testing.B, stay int) (*window, func() int, func()) {
	m := &enginetest.MapBaseline{M: map[string]struct{}{}}
	w := &window{stay: stay,
		add: func(key []byte, exp int64) error {
			if _, ok := m.M[string(key)]; !ok {
				k := string(key)
				m.M[k] = struct{}{}
				m.Queue = append(m.Queue, enginetest.Expiring{Key: k, Exp: exp})
			}
			return nil
		},
		evict: func(wm int64) (int, error) { return m.Evict(wm), nil },
	}
	return w, func() int { return len(m.M) }, func() { runtime.KeepAlive(m) }
}

func benchEvict(b *testing.B, st benchStore, size int) {
	b.StopTimer()
	b.ReportAllocs()
	stay := enginetest.LiveKeys(b, size)

	before := enginetest.HeapAlloc()
	s := st.open(b)
	c := &enginetest.Committer{S: s}
	w := &window{stay: stay,
		add:   func(key []byte, exp int64) error { _, err := s.Add(key, exp); return err },
		evict: s.Evict,
	}
	if st.name != "memory" {
		// (The memory store's Commit is a no-op; leaving it out keeps
		// its numbers comparable with earlier runs.)
		w.commit = c.Commit
	}
	if err := w.fill(); err != nil {
		b.Fatal(err)
	}
	eng, err := w.run(b, b.N)
	if err != nil {
		b.Fatal(err)
	}
	engBytes := enginetest.PerKey(before, s.Len())
	diskBytes := diskPerKey(s)
	if l := s.Len(); l < stay-enginetest.JitterMicros/enginetest.StepMicros || l > stay+enginetest.JitterMicros/enginetest.StepMicros {
		b.Fatalf("%d keys stay, want %d", l, stay)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	s = nil

	n := float64(eng.Evicted)
	engNs := float64(eng.Elapsed.Nanoseconds()) / n
	if size >= evictHuge {
		// No bare map: it would not fit beside the store's own peak.
		b.ReportMetric(engNs, "ns/key")
		b.ReportMetric(float64(eng.Mallocs)/n, "allocs/key")
		b.ReportMetric(engBytes, "bytes/key")
		b.ReportMetric(float64(eng.CPU.Nanoseconds())/n, "cpu-ns/key")
		return
	}

	before = enginetest.HeapAlloc()
	bw, baseLive, done := st.baseEvict(b, stay)
	if err := bw.fill(); err != nil {
		b.Fatal(err)
	}
	// The same number of rounds as the engine, hence the same keys.
	base, err := bw.run(nil, eng.Evicted)
	if err != nil {
		b.Fatal(err)
	}
	baseBytes := enginetest.PerKey(before, baseLive())
	done()

	baseNs := float64(base.Elapsed.Nanoseconds()) / float64(base.Evicted)
	b.ReportMetric(engNs, "ns/key")
	b.ReportMetric(float64(eng.Mallocs)/n, "allocs/key")
	b.ReportMetric(baseNs, "base-ns/key")
	b.ReportMetric(float64(base.Mallocs)/float64(base.Evicted), "base-allocs/key")
	b.ReportMetric(engNs/baseNs, "ratio")
	b.ReportMetric(engBytes, "bytes/key")
	b.ReportMetric(baseBytes, "base-bytes/key")
	if diskBytes > 0 {
		b.ReportMetric(diskBytes, "disk-bytes/key")
	}
	// Per evicted key; the baseline evicted the same keys, give or take
	// the few its arrival-order FIFO holds back.
	base.CPU = base.CPU * time.Duration(eng.Evicted) / time.Duration(max(base.Evicted, 1))
	enginetest.ReportCPU(b, eng, base, n, "key")
}
