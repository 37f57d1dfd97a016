package engines_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
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

// benchSeed fixes the workload: the engine and its baseline replay it.
const benchSeed = 1

// smokeKeys replaces the live-key count of a smoke run (b.N == 1).
const smokeKeys = 10_000

// benchSizes are the live-key counts, named as in keys=1e6.
func benchSizes() []int {
	if testing.Short() {
		return []int{1e5}
	}
	return []int{1e5, 1e6, 1e7}
}

// liveKeys is the live-key count a sub-benchmark really uses.
func liveKeys(b *testing.B, n int) int {
	if b.N == 1 {
		return min(n, smokeKeys)
	}
	return n
}

// sizeName prints 100000 as 1e5.
func sizeName(n int) string {
	e, m := 0, n
	for m >= 10 && m%10 == 0 {
		m /= 10
		e++
	}
	if m == 1 {
		return fmt.Sprintf("1e%d", e)
	}
	return fmt.Sprint(n)
}

// benchStore is a state store under benchmark, with the bare loop it is
// measured against: the Go map for the memory store, Pebble's own Get and
// Set for the Pebble store.
type benchStore struct {
	name string
	open func(b *testing.B) engines.Store
	// base runs the bare loop over the same stream and rows as
	// runEngine, and returns its result and its heap growth per live key
	// since before (measured while the loop's state is still alive).
	base func(b *testing.B, k engineKind, live int, g *streamGen, rows *rowBlock, before uint64) (runResult, float64)
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
			base: func(_ *testing.B, k engineKind, live int, g *streamGen, rows *rowBlock, before uint64) (runResult, float64) {
				r, m := runBaseline(nil, k, live, g, rows)
				bytes := perKey(before, len(m.m))
				runtime.KeepAlive(m)
				return r, bytes
			},
			baseEvict: mapEvictWindow,
			sizes:     benchSizes(),
		},
		pebbleBenchStore(),
	}
}

// runResult is what one timed loop did.
type runResult struct {
	emitted, evicted int
	elapsed          time.Duration // wall clock
	cpu              time.Duration // process CPU time
	mallocs          uint64
}

// timedLoop brackets a timed loop: it starts the benchmark timer (when
// there is one), the wall clock and the allocation count, and stop ends
// them.
type timedLoop struct {
	b        *testing.B
	start    time.Time
	startCPU time.Duration
	mallocs  uint64
}

func startLoop(b *testing.B) *timedLoop {
	t := &timedLoop{b: b}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.mallocs = ms.Mallocs
	if b != nil {
		b.StartTimer()
	}
	t.startCPU = processCPU()
	t.start = time.Now()
	return t
}

func (t *timedLoop) stop(r *runResult) {
	r.elapsed = time.Since(t.start)
	r.cpu = processCPU() - t.startCPU
	if t.b != nil {
		t.b.StopTimer()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.mallocs = ms.Mallocs - t.mallocs
}

// runEngine primes op from g, then runs rows through it the way the
// executor does: one ProcessBatch per batch of batchRows rows (one Process
// per row when perRow), then Evict, then Commit. Only the rows are timed;
// b may be nil.
func runEngine(b *testing.B, op engines.Operator, k engineKind, live int, g *streamGen, rows *rowBlock, perRow bool) (runResult, error) {
	c := &committer{s: op.Store()}
	err := prime(g, k, live,
		func(key []byte, et int64) error {
			if _, err := op.Process(key, et); err != nil {
				return err
			}
			return c.added()
		},
		func(wm int64) error {
			if _, err := op.Evict(wm); err != nil {
				return err
			}
			return c.commit()
		})
	if err == nil {
		err = c.commit()
	}
	if err != nil {
		return runResult{}, err
	}
	// The keys of a rowBlock are back to back, idLen bytes each: the
	// batch's key buffer is a slice of them, and every full batch has the
	// same end offsets.
	ends := make([]int32, batchRows)
	for i := range ends {
		ends[i] = int32((i + 1) * idLen)
	}
	added := make([]bool, batchRows)
	var r runResult
	t := startLoop(b)
	for bi, start := 0, 0; start < rows.len(); bi, start = bi+1, start+batchRows {
		end := min(start+batchRows, rows.len())
		if perRow {
			for i := start; i < end; i++ {
				ok, err := op.Process(rows.key(i), rows.times[i])
				if err != nil {
					return r, err
				}
				if ok {
					r.emitted++
				}
			}
		} else {
			n := end - start
			if err := op.ProcessBatch(rows.keys[start*idLen:end*idLen], ends[:n], rows.times[start:end], added[:n]); err != nil {
				return r, err
			}
			for _, ok := range added[:n] {
				if ok {
					r.emitted++
				}
			}
		}
		if k.evicts() {
			n, err := op.Evict(k.watermark(rows.batchMax[bi], live))
			if err != nil {
				return r, err
			}
			r.evicted += n
		}
		if err := c.commit(); err != nil {
			return r, err
		}
	}
	t.stop(&r)
	return r, nil
}

// committer commits a store the way the executor does, once per batch:
// Commit is a no-op for the memory store and writes the batch for Pebble,
// whose uncommitted work would otherwise grow without bound.
type committer struct {
	s       engines.Store
	batch   int64
	pending int
}

// added counts one Add and commits when a batch's worth is pending (the
// priming of dedupe-noevict, which never evicts).
func (c *committer) added() error {
	if c.pending++; c.pending >= batchRows {
		return c.commit()
	}
	return nil
}

func (c *committer) commit() error {
	c.pending = 0
	c.batch++
	return c.s.Commit(c.batch - 1)
}

// expiring is a baseline key and its expiry, in arrival order.
type expiring struct {
	key string
	exp int64
}

// mapBaseline is the bare loop the engines are measured against: a Go
// map[string]struct{} with one lookup and, for a new key, one insert per
// row (the insert allocates the key's string). The evicting cases also
// delete expired keys the obvious way: a FIFO of (key, expiry) in arrival
// order, popped from the front while the front has expired. That is
// cheaper than exact eviction (an out-of-order key waits for the keys
// before it), so the baseline is, if anything, too fast.
type mapBaseline struct {
	m     map[string]struct{}
	queue []expiring
	head  int
}

// evict deletes the expired keys at the front of the queue.
func (m *mapBaseline) evict(wm int64) int {
	n := 0
	for m.head < len(m.queue) && m.queue[m.head].exp <= wm {
		delete(m.m, m.queue[m.head].key)
		m.queue[m.head] = expiring{}
		m.head++
		n++
	}
	// Compact once the popped front is the larger half: amortized O(1).
	if m.head > len(m.queue)/2 {
		m.queue = m.queue[:copy(m.queue, m.queue[m.head:])]
		m.head = 0
	}
	return n
}

// runBaseline is runEngine's twin over the bare map: the same priming and
// the same rows. The row loop is written out so that nothing but the map
// work is timed.
func runBaseline(b *testing.B, k engineKind, live int, g *streamGen, rows *rowBlock) (runResult, *mapBaseline) {
	m := &mapBaseline{m: map[string]struct{}{}}
	evicts := k.evicts()
	add := func(key []byte, et int64) error {
		if _, ok := m.m[string(key)]; !ok {
			s := string(key)
			m.m[s] = struct{}{}
			if evicts {
				m.queue = append(m.queue, expiring{s, k.expiry(et, live)})
			}
		}
		return nil
	}
	prime(g, k, live, add, func(wm int64) error { m.evict(wm); return nil })
	delay := k.delayMicros(live)
	var r runResult
	t := startLoop(b)
	for bi, start := 0, 0; start < rows.len(); bi, start = bi+1, start+batchRows {
		end := min(start+batchRows, rows.len())
		for i := start; i < end; i++ {
			key := rows.key(i)
			if _, ok := m.m[string(key)]; !ok {
				s := string(key)
				m.m[s] = struct{}{}
				if evicts {
					exp := rows.times[i]
					if k == within {
						exp += delay
					}
					m.queue = append(m.queue, expiring{s, exp})
				}
				r.emitted++
			}
		}
		if evicts {
			r.evicted += m.evict(rows.batchMax[bi] - delay)
		}
	}
	t.stop(&r)
	return r, m
}

// heapAlloc returns the live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// perKey is heap growth since before divided by keys.
func perKey(before uint64, keys int) float64 {
	return (float64(heapAlloc()) - float64(before)) / float64(max(keys, 1))
}

// BenchmarkEngine runs each dedup engine over each store on the workload
// of stream_test.go at 1e5, 1e6 and 1e7 live keys (the Pebble store at
// 1e5 and 1e6) and reports the ratio to the store's bare loop over the
// same keys, measured in the same run: the Go map for the memory store,
// Pebble Get and Set in NoSync batches for the Pebble store.
//
// The evicting engines (dedupe-evict, within) hold about keys= live keys
// throughout: the watermark delay is chosen for it. dedupe-noevict is
// prefilled with keys= distinct ids and then grows by every new id of the
// run (95% of rows).
func BenchmarkEngine(b *testing.B) {
	for _, k := range []engineKind{dedupeNoEvict, dedupeEvict, within} {
		for _, st := range benchStores() {
			for _, size := range st.sizes {
				name := fmt.Sprintf("engine=%s/store=%s/keys=%s", k, st.name, sizeName(size))
				b.Run(name, func(b *testing.B) { benchEngine(b, k, st, size) })
			}
		}
	}
}

func benchEngine(b *testing.B, k engineKind, st benchStore, size int) {
	b.StopTimer()
	b.ReportAllocs()
	live := liveKeys(b, size)
	g := newStreamGen(benchSeed)
	prime(g, k, live, func([]byte, int64) error { return nil }, func(int64) error { return nil })
	rows := g.take(b.N)

	before := heapAlloc()
	op := k.newOperator(st.open(b), live)
	eng, err := runEngine(b, op, k, live, newStreamGen(benchSeed), rows, false)
	if err != nil {
		b.Fatal(err)
	}
	engBytes := perKey(before, op.Len())
	diskBytes := diskPerKey(op.Store())
	if err := op.Store().Close(); err != nil {
		b.Fatal(err)
	}
	op = nil

	base, baseBytes := st.base(b, k, live, newStreamGen(benchSeed), rows, heapAlloc())
	if st.name == "memory" && base.emitted != eng.emitted {
		// (The bare Pebble loop does not read its own batch's writes, so
		// it emits a repeat that comes within its batch again.)
		b.Fatalf("engine emitted %d rows, the bare loop %d", eng.emitted, base.emitted)
	}
	reportRows(b, eng, base, rows.len())
	b.ReportMetric(engBytes, "bytes/key")
	b.ReportMetric(baseBytes, "base-bytes/key")
	if diskBytes > 0 {
		b.ReportMetric(diskBytes, "disk-bytes/key")
	}
}

// BenchmarkBatchAdd measures what handing the store a batch of keys at
// once (Operator.ProcessBatch, engines.BatchAdder) saves over one Process
// per row, on the memory store and the within engine, both measured in
// the same run over the same rows: ns/row is the batch call, row-ns/row
// the per-row call, ratio their quotient.
func BenchmarkBatchAdd(b *testing.B) {
	sizes := benchSizes()[:min(2, len(benchSizes()))]
	for _, size := range sizes {
		b.Run(fmt.Sprintf("engine=within/store=memory/keys=%s", sizeName(size)), func(b *testing.B) {
			b.StopTimer()
			b.ReportAllocs()
			live := liveKeys(b, size)
			g := newStreamGen(benchSeed)
			prime(g, within, live, func([]byte, int64) error { return nil }, func(int64) error { return nil })
			rows := g.take(b.N)
			run := func(bb *testing.B, perRow bool) runResult {
				op := within.newOperator(memstore.New(), live)
				r, err := runEngine(bb, op, within, live, newStreamGen(benchSeed), rows, perRow)
				if err != nil {
					b.Fatal(err)
				}
				op.Store().Close()
				heapAlloc()
				return r
			}
			row := run(nil, true)
			batch := run(b, false)
			if row.emitted != batch.emitted || row.evicted != batch.evicted {
				b.Fatalf("batch: emitted %d, evicted %d; per row: %d, %d", batch.emitted, batch.evicted, row.emitted, row.evicted)
			}
			n := float64(rows.len())
			b.ReportMetric(float64(batch.elapsed.Nanoseconds())/n, "ns/row")
			b.ReportMetric(float64(row.elapsed.Nanoseconds())/n, "row-ns/row")
			b.ReportMetric(float64(batch.elapsed)/float64(row.elapsed), "ratio")
			b.ReportMetric(float64(batch.cpu.Nanoseconds())/n, "cpu-ns/row")
			b.ReportMetric(float64(row.cpu.Nanoseconds())/n, "row-cpu-ns/row")
			b.ReportMetric(float64(batch.cpu)/float64(max(row.cpu, 1)), "cpu-ratio")
			b.ReportMetric(float64(batch.mallocs)/n, "allocs/row")
		})
	}
}

// reportRows reports the per-row metrics of an engine and its baseline.
func reportRows(b *testing.B, eng, base runResult, rows int) {
	n := float64(rows)
	engNs := float64(eng.elapsed.Nanoseconds()) / n
	baseNs := float64(base.elapsed.Nanoseconds()) / n
	b.ReportMetric(engNs, "ns/row")
	b.ReportMetric(float64(eng.mallocs)/n, "allocs/row")
	b.ReportMetric(baseNs, "base-ns/row")
	b.ReportMetric(float64(base.mallocs)/n, "base-allocs/row")
	b.ReportMetric(engNs/baseNs, "ratio")
	reportCPU(b, eng, base, n, "row")
}

// reportCPU reports the CPU-time twins of ns/row (or ns/key) and ratio.
func reportCPU(b *testing.B, eng, base runResult, n float64, unit string) {
	engCPU := float64(eng.cpu.Nanoseconds()) / n
	baseCPU := float64(base.cpu.Nanoseconds()) / n
	b.ReportMetric(engCPU, "cpu-ns/"+unit)
	b.ReportMetric(baseCPU, "base-cpu-ns/"+unit)
	if baseCPU > 0 {
		b.ReportMetric(engCPU/baseCPU, "cpu-ratio")
	}
}

// BenchmarkEvict measures the cost per evicted key while stay= keys remain
// in the store: a sliding window of ids in event-time order (with the
// stream's jitter), where each round adds batchRows new ids (not timed) and
// evicts (timed) the batchRows oldest. The cost must not grow with stay:
// eviction costs what it evicts. ns/op and ns/key are per evicted key; the
// baseline deletes the same keys from the store's bare loop (a Go map, or
// Pebble) through a FIFO. For Pebble the timed part includes the Commit
// that writes the evictions' deletes (the round's adds are committed
// before, untimed).
func BenchmarkEvict(b *testing.B) {
	for _, st := range benchStores() {
		for _, size := range st.sizes {
			name := fmt.Sprintf("store=%s/stay=%s", st.name, sizeName(size))
			b.Run(name, func(b *testing.B) { benchEvict(b, st, size) })
		}
	}
}

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

// round adds batchRows ids, then evicts every id that is more than stay
// ids old; only the eviction runs inside the timed loop, when b is not nil.
func (w *window) round(b *testing.B, r *runResult) error {
	var key [idLen]byte
	for range batchRows {
		putID(key[:], w.next)
		if err := w.add(key[:], eventTime(w.next)); err != nil {
			return err
		}
		w.next++
	}
	if w.commit != nil {
		if err := w.commit(); err != nil {
			return err
		}
	}
	wm := eventTime(0) + (int64(w.next)-int64(w.stay))*stepMicros - 1
	var one runResult
	t := startLoop(b)
	n, err := w.evict(wm)
	if err == nil && w.commit != nil {
		err = w.commit()
	}
	t.stop(&one)
	r.evicted += n
	r.elapsed += one.elapsed
	r.cpu += one.cpu
	r.mallocs += one.mallocs
	return err
}

// fill adds the ids that stay and runs warmBatches untimed rounds, so
// that the timed rounds see the steady state.
func (w *window) fill() error {
	var key [idLen]byte
	for ; w.next < uint64(w.stay); w.next++ {
		putID(key[:], w.next)
		if err := w.add(key[:], eventTime(w.next)); err != nil {
			return err
		}
		if w.commit != nil && (w.next+1)%batchRows == 0 {
			if err := w.commit(); err != nil {
				return err
			}
		}
	}
	var r runResult
	for range warmBatches {
		if err := w.round(nil, &r); err != nil {
			return err
		}
	}
	return nil
}

// run does rounds until at least n keys were evicted.
func (w *window) run(b *testing.B, n int) (runResult, error) {
	var r runResult
	for r.evicted < n {
		if err := w.round(b, &r); err != nil {
			return r, err
		}
	}
	return r, nil
}

// mapEvictWindow is BenchmarkEvict's bare loop for the memory store: a Go
// map whose keys are deleted through an arrival-order FIFO.
func mapEvictWindow(_ *testing.B, stay int) (*window, func() int, func()) {
	m := &mapBaseline{m: map[string]struct{}{}}
	w := &window{stay: stay,
		add: func(key []byte, exp int64) error {
			if _, ok := m.m[string(key)]; !ok {
				k := string(key)
				m.m[k] = struct{}{}
				m.queue = append(m.queue, expiring{k, exp})
			}
			return nil
		},
		evict: func(wm int64) (int, error) { return m.evict(wm), nil },
	}
	return w, func() int { return len(m.m) }, func() { runtime.KeepAlive(m) }
}

func benchEvict(b *testing.B, st benchStore, size int) {
	b.StopTimer()
	b.ReportAllocs()
	stay := liveKeys(b, size)

	before := heapAlloc()
	s := st.open(b)
	c := &committer{s: s}
	w := &window{stay: stay,
		add:   func(key []byte, exp int64) error { _, err := s.Add(key, exp); return err },
		evict: s.Evict,
	}
	if st.name != "memory" {
		// (The memory store's Commit is a no-op; leaving it out keeps
		// its numbers comparable with earlier runs.)
		w.commit = c.commit
	}
	if err := w.fill(); err != nil {
		b.Fatal(err)
	}
	eng, err := w.run(b, b.N)
	if err != nil {
		b.Fatal(err)
	}
	engBytes := perKey(before, s.Len())
	diskBytes := diskPerKey(s)
	if l := s.Len(); l < stay-jitterMicros/stepMicros || l > stay+jitterMicros/stepMicros {
		b.Fatalf("%d keys stay, want %d", l, stay)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	s = nil

	before = heapAlloc()
	bw, baseLive, done := st.baseEvict(b, stay)
	if err := bw.fill(); err != nil {
		b.Fatal(err)
	}
	// The same number of rounds as the engine, hence the same keys.
	base, err := bw.run(nil, eng.evicted)
	if err != nil {
		b.Fatal(err)
	}
	baseBytes := perKey(before, baseLive())
	done()

	n := float64(eng.evicted)
	engNs := float64(eng.elapsed.Nanoseconds()) / n
	baseNs := float64(base.elapsed.Nanoseconds()) / float64(base.evicted)
	b.ReportMetric(engNs, "ns/key")
	b.ReportMetric(float64(eng.mallocs)/n, "allocs/key")
	b.ReportMetric(baseNs, "base-ns/key")
	b.ReportMetric(float64(base.mallocs)/float64(base.evicted), "base-allocs/key")
	b.ReportMetric(engNs/baseNs, "ratio")
	b.ReportMetric(engBytes, "bytes/key")
	b.ReportMetric(baseBytes, "base-bytes/key")
	if diskBytes > 0 {
		b.ReportMetric(diskBytes, "disk-bytes/key")
	}
	// Per evicted key; the baseline evicted the same keys, give or take
	// the few its arrival-order FIFO holds back.
	base.cpu = base.cpu * time.Duration(eng.evicted) / time.Duration(max(base.evicted, 1))
	reportCPU(b, eng, base, n, "key")
}
