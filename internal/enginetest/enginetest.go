// Package enginetest is the synthetic workload and the timed loops the
// engines' benchmarks and tests share with the executor's (sim): a
// deterministic stream of UUID-like ids with a share of retried ones, the
// dedup configurations it runs through, the engine loop (one
// ProcessBatch, Evict and Commit per micro-batch) and the bare Go map loop
// the engines are measured against, inside the same benchmark run. It is
// for tests only.
package enginetest

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/spark"
)

// The benchmark workload: 36-byte UUID-like ids, a small share of rows that
// repeat a recent id (a producer retry), and event times that increase with
// the id's sequence number plus a little jitter, so that expiries arrive
// almost, but not exactly, in order.
const (
	// IDLen is the length of an id: a UUID in its text form.
	IDLen = 36
	// dupShare is the share of rows that repeat an earlier id.
	dupShare = 0.05
	// dupWindow bounds how far back (in distinct ids) a repeat reaches.
	dupWindow = 1000
	// StepMicros is the event time between consecutive distinct ids.
	StepMicros = 1000
	// JitterMicros is the spread of an id's event time past its slot: ids
	// up to five slots apart may arrive out of event-time order.
	JitterMicros = 5000
	// T0Micros is the event time of the first id (2024-01-01T00:00:00Z).
	T0Micros = 1_704_067_200_000_000
	// BatchRows is the rows of one micro-batch: the engines evict once per
	// batch, as the executor does.
	BatchRows = 10_000
)

// PutID writes id number n as a 36-byte UUID-like text into dst. Distinct n
// give distinct ids: the first 16 hex digits are splitmix(n), a bijection.
func PutID(dst []byte, n uint64) {
	const hex = "0123456789abcdef"
	a, b := splitmix(n), splitmix(n^0x5bd1e9955bd1e995)
	j := 0
	for i := range IDLen {
		switch i {
		case 8, 13, 18, 23:
			dst[i] = '-'
			continue
		}
		var x uint64
		if j < 16 {
			x = a >> (4 * j)
		} else {
			x = b >> (4 * (j - 16))
		}
		dst[i] = hex[x&15]
		j++
	}
}

// splitmix is SplitMix64's finalizer: a bijective mix of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// StreamGen is a deterministic pull iterator over the workload's rows. Two
// generators made with the same seed yield the same rows, which is how the
// engine and its baseline see the same keys.
type StreamGen struct {
	rng *rand.Rand
	// ids is the number of distinct ids emitted so far.
	IDs uint64
	// maxET is the largest event time emitted so far.
	MaxET int64
}

func NewStreamGen(seed uint64) *StreamGen {
	return &StreamGen{rng: rand.New(rand.NewPCG(seed, 0x0ddba11)), MaxET: T0Micros}
}

// EventTime is id n's event time: a function of n, so a repeat carries the
// original's event time, as a retried event does.
func EventTime(n uint64) int64 {
	return T0Micros + int64(n)*StepMicros + int64(splitmix(n^0xa5a5a5a5)%JitterMicros)
}

// next writes the next row's id into key and returns its event time and
// whether it repeats an earlier id (the ground truth: the engines must call
// exactly these rows duplicates while the repeated id is in state).
func (g *StreamGen) Next(key []byte) (et int64, dup bool) {
	n := g.IDs
	if g.IDs > 0 && g.rng.Float64() < dupShare {
		n = g.IDs - 1 - g.rng.Uint64N(min(g.IDs, dupWindow))
		dup = true
	} else {
		g.IDs++
	}
	PutID(key, n)
	et = EventTime(n)
	g.MaxET = max(g.MaxET, et)
	return et, dup
}

// RowBlock is a stretch of pre-generated rows, so that the timed loops
// read keys from memory instead of paying for their generation.
type RowBlock struct {
	Keys  []byte  // row i's id is keys[i*IDLen : (i+1)*IDLen]
	Times []int64 // row i's event time
	// batchMax[b] is the largest event time of all rows up to the end of
	// batch b (BatchRows rows each), prefix included: the watermark base.
	BatchMax []int64
	// dups is the number of rows that repeat an earlier id.
	Dups int
}

func (r *RowBlock) Key(i int) []byte { return r.Keys[i*IDLen : (i+1)*IDLen] }
func (r *RowBlock) Len() int         { return len(r.Times) }

// take pre-generates the generator's next n rows.
func (g *StreamGen) Take(n int) *RowBlock {
	r := &RowBlock{Keys: make([]byte, n*IDLen), Times: make([]int64, n)}
	for i := range n {
		et, dup := g.Next(r.Key(i))
		r.Times[i] = et
		if dup {
			r.Dups++
		}
		if (i+1)%BatchRows == 0 || i == n-1 {
			r.BatchMax = append(r.BatchMax, g.MaxET)
		}
	}
	return r
}

// Kind is one of the benchmarked dedup configurations.
type Kind int

const (
	// DedupeNoEvict is dropDuplicates without the event time among the
	// keys: nothing is ever evicted and the state grows with the stream.
	DedupeNoEvict Kind = iota
	// DedupeEvict is dropDuplicates with the event time among the keys:
	// a key expires at its event time. (The benchmark keys are the ids
	// alone; a real key would also encode the event time, which changes
	// the key length, not the work.)
	DedupeEvict
	// Within is dropDuplicatesWithinWatermark: a key expires at its first
	// event time plus the delay.
	Within
)

var engineNames = [...]string{"dedupe-noevict", "dedupe-evict", "within"}

func (k Kind) String() string { return engineNames[k] }

func (k Kind) Evicts() bool { return k != DedupeNoEvict }

// delayMicros is the watermark delay that keeps about live ids in state
// in steady state. Spark evicts with watermark = max event time - delay;
// dedupe keeps a key until the watermark passes its event time, so one
// delay of event time is live; Within keeps it until the watermark passes
// event time + delay, so two delays are live.
func (k Kind) DelayMicros(live int) int64 {
	switch k {
	case DedupeEvict:
		return int64(live) * StepMicros
	case Within:
		return int64(live) * StepMicros / 2
	}
	return 0
}

// newOperator returns the engine's operator over s for a steady state of
// about live ids.
func (k Kind) NewOperator(s engines.Store, live int) spark.Operator {
	if k == Within {
		return spark.NewDedupeWithinWatermark(s, k.DelayMicros(live)/1000)
	}
	return spark.NewDedupe(s, k == DedupeEvict)
}

// expiry is the expiry the engine gives a key first seen at et; the
// baseline uses it to evict the same keys.
func (k Kind) Expiry(et int64, live int) int64 {
	switch k {
	case DedupeEvict:
		return et
	case Within:
		return et + k.DelayMicros(live)
	}
	return engines.NoExpiry
}

// watermark is the eviction watermark after a batch whose running maximum
// event time is maxET.
func (k Kind) Watermark(maxET int64, live int) int64 {
	return maxET - k.DelayMicros(live)
}

// WarmBatches is how many batches run, untimed, after the prefill: enough
// for the evicting engines to reach their steady state (the first
// evictions reorganize the expiry index around the watermark).
const WarmBatches = 3

// Prime brings an operator to the steady state of the benchmark: it feeds
// the first `live` distinct ids (and the repeats among them) without
// eviction, then WarmBatches batches with eviction. add and evict are
// either the engine's or the baseline's.
func Prime(g *StreamGen, k Kind, live int, add func(key []byte, et int64) error, evict func(wm int64) error) error {
	var key [IDLen]byte
	for g.IDs < uint64(live) {
		et, _ := g.Next(key[:])
		if err := add(key[:], et); err != nil {
			return err
		}
	}
	for range WarmBatches {
		for range BatchRows {
			et, _ := g.Next(key[:])
			if err := add(key[:], et); err != nil {
				return err
			}
		}
		if k.Evicts() {
			if err := evict(k.Watermark(g.MaxET, live)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ModelRun is the obviously correct reference: a map from key to expiry
// and a full scan per eviction. It returns rows emitted, keys evicted and
// the keys left.
func ModelRun(k Kind, live int, g *StreamGen, rows *RowBlock) (emitted, evicted, left int) {
	m := map[string]int64{}
	add := func(key []byte, et int64) {
		if _, ok := m[string(key)]; !ok {
			m[string(key)] = k.Expiry(et, live)
			emitted++
		}
	}
	evict := func(wm int64) {
		for key, exp := range m {
			if exp != engines.NoExpiry && exp <= wm {
				delete(m, key)
				evicted++
			}
		}
	}
	if err := Prime(g, k, live,
		func(key []byte, et int64) error { add(key, et); return nil },
		func(wm int64) error { evict(wm); return nil }); err != nil {
		panic(err)
	}
	emitted, evicted = 0, 0
	for b, start := 0, 0; start < rows.Len(); b, start = b+1, start+BatchRows {
		for i := start; i < min(start+BatchRows, rows.Len()); i++ {
			add(rows.Key(i), rows.Times[i])
		}
		if k.Evicts() {
			evict(k.Watermark(rows.BatchMax[b], live))
		}
	}
	return emitted, evicted, len(m)
}

// Seed fixes the workload: the engine and its baseline replay it.
const Seed = 1

// SmokeKeys replaces the live-key count of a smoke run (b.N == 1).
const SmokeKeys = 10_000

// BenchSizes are the live-key counts, named as in keys=1e6.
func BenchSizes() []int {
	if testing.Short() {
		return []int{1e5}
	}
	return []int{1e5, 1e6, 1e7}
}

// LiveKeys is the live-key count a sub-benchmark really uses.
func LiveKeys(b *testing.B, n int) int {
	if b.N == 1 {
		return min(n, SmokeKeys)
	}
	return n
}

// SizeName prints 100000 as 1e5.
func SizeName(n int) string {
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

// RunResult is what one timed loop did.
type RunResult struct {
	Emitted, Evicted int
	Elapsed          time.Duration // wall clock
	CPU              time.Duration // process CPU time
	Mallocs          uint64
}

// Loop brackets a timed loop: it starts the benchmark timer (when
// there is one), the wall clock and the allocation count, and stop ends
// them.
type Loop struct {
	b        *testing.B
	start    time.Time
	startCPU time.Duration
	mallocs  uint64
}

func StartLoop(b *testing.B) *Loop {
	t := &Loop{b: b}
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

func (t *Loop) Stop(r *RunResult) {
	r.Elapsed = time.Since(t.start)
	r.CPU = processCPU() - t.startCPU
	if t.b != nil {
		t.b.StopTimer()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.Mallocs = ms.Mallocs - t.mallocs
}

// RunEngine primes op from g, then runs rows through it the way the
// executor does: one ProcessBatch per batch of BatchRows rows (one Process
// per row when perRow), then Evict, then Commit. Only the rows are timed;
// b may be nil.
func RunEngine(b *testing.B, op spark.Operator, k Kind, live int, g *StreamGen, rows *RowBlock, perRow bool) (RunResult, error) {
	c := &Committer{S: op.Store()}
	err := Prime(g, k, live,
		func(key []byte, et int64) error {
			if _, err := op.Process(key, et); err != nil {
				return err
			}
			return c.Added()
		},
		func(wm int64) error {
			if _, err := op.Evict(wm); err != nil {
				return err
			}
			return c.Commit()
		})
	if err == nil {
		err = c.Commit()
	}
	if err != nil {
		return RunResult{}, err
	}
	// The keys of a RowBlock are back to back, IDLen bytes each: the
	// batch's key buffer is a slice of them, and every full batch has the
	// same end offsets.
	ends := make([]int32, BatchRows)
	for i := range ends {
		ends[i] = int32((i + 1) * IDLen)
	}
	added := make([]bool, BatchRows)
	var r RunResult
	t := StartLoop(b)
	for bi, start := 0, 0; start < rows.Len(); bi, start = bi+1, start+BatchRows {
		end := min(start+BatchRows, rows.Len())
		if perRow {
			for i := start; i < end; i++ {
				ok, err := op.Process(rows.Key(i), rows.Times[i])
				if err != nil {
					return r, err
				}
				if ok {
					r.Emitted++
				}
			}
		} else {
			n := end - start
			if err := op.ProcessBatch(rows.Keys[start*IDLen:end*IDLen], ends[:n], rows.Times[start:end], added[:n]); err != nil {
				return r, err
			}
			for _, ok := range added[:n] {
				if ok {
					r.Emitted++
				}
			}
		}
		if k.Evicts() {
			n, err := op.Evict(k.Watermark(rows.BatchMax[bi], live))
			if err != nil {
				return r, err
			}
			r.Evicted += n
		}
		if err := c.Commit(); err != nil {
			return r, err
		}
	}
	t.Stop(&r)
	return r, nil
}

// Committer commits a store the way the executor does, once per batch:
// Commit is a no-op for the memory store and writes the batch for Pebble,
// whose uncommitted work would otherwise grow without bound.
type Committer struct {
	S       engines.Store
	batch   int64
	pending int
}

// added counts one Add and commits when a batch's worth is pending (the
// priming of dedupe-noevict, which never evicts).
func (c *Committer) Added() error {
	if c.pending++; c.pending >= BatchRows {
		return c.Commit()
	}
	return nil
}

func (c *Committer) Commit() error {
	c.pending = 0
	c.batch++
	return c.S.Commit(c.batch - 1)
}

// Expiring is a baseline key and its expiry, in arrival order.
type Expiring struct {
	Key string
	Exp int64
}

// MapBaseline is the bare loop the engines are measured against: a Go
// map[string]struct{} with one lookup and, for a new key, one insert per
// row (the insert allocates the key's string). The evicting cases also
// delete expired keys the obvious way: a FIFO of (key, expiry) in arrival
// order, popped from the front while the front has expired. That is
// cheaper than exact eviction (an out-of-order key waits for the keys
// before it), so the baseline is, if anything, too fast.
type MapBaseline struct {
	M     map[string]struct{}
	Queue []Expiring
	Head  int
}

// evict deletes the expired keys at the front of the queue.
func (m *MapBaseline) Evict(wm int64) int {
	n := 0
	for m.Head < len(m.Queue) && m.Queue[m.Head].Exp <= wm {
		delete(m.M, m.Queue[m.Head].Key)
		m.Queue[m.Head] = Expiring{}
		m.Head++
		n++
	}
	// Compact once the popped front is the larger half: amortized O(1).
	if m.Head > len(m.Queue)/2 {
		m.Queue = m.Queue[:copy(m.Queue, m.Queue[m.Head:])]
		m.Head = 0
	}
	return n
}

// RunBaseline is RunEngine's twin over the bare map: the same priming and
// the same rows. The row loop is written out so that nothing but the map
// work is timed.
func RunBaseline(b *testing.B, k Kind, live int, g *StreamGen, rows *RowBlock) (RunResult, *MapBaseline) {
	m := &MapBaseline{M: map[string]struct{}{}}
	evicts := k.Evicts()
	add := func(key []byte, et int64) error {
		if _, ok := m.M[string(key)]; !ok {
			s := string(key)
			m.M[s] = struct{}{}
			if evicts {
				m.Queue = append(m.Queue, Expiring{s, k.Expiry(et, live)})
			}
		}
		return nil
	}
	Prime(g, k, live, add, func(wm int64) error { m.Evict(wm); return nil })
	delay := k.DelayMicros(live)
	var r RunResult
	t := StartLoop(b)
	for bi, start := 0, 0; start < rows.Len(); bi, start = bi+1, start+BatchRows {
		end := min(start+BatchRows, rows.Len())
		for i := start; i < end; i++ {
			key := rows.Key(i)
			if _, ok := m.M[string(key)]; !ok {
				s := string(key)
				m.M[s] = struct{}{}
				if evicts {
					exp := rows.Times[i]
					if k == Within {
						exp += delay
					}
					m.Queue = append(m.Queue, Expiring{s, exp})
				}
				r.Emitted++
			}
		}
		if evicts {
			r.Evicted += m.Evict(rows.BatchMax[bi] - delay)
		}
	}
	t.Stop(&r)
	return r, m
}

// HeapAlloc returns the live heap after a full collection.
func HeapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// PerKey is heap growth since before divided by keys.
func PerKey(before uint64, keys int) float64 {
	return (float64(HeapAlloc()) - float64(before)) / float64(max(keys, 1))
}

// ReportRows reports the per-row metrics of an engine and its baseline.
func ReportRows(b *testing.B, eng, base RunResult, rows int) {
	n := float64(rows)
	engNs := float64(eng.Elapsed.Nanoseconds()) / n
	baseNs := float64(base.Elapsed.Nanoseconds()) / n
	b.ReportMetric(engNs, "ns/row")
	b.ReportMetric(float64(eng.Mallocs)/n, "allocs/row")
	b.ReportMetric(baseNs, "base-ns/row")
	b.ReportMetric(float64(base.Mallocs)/n, "base-allocs/row")
	b.ReportMetric(engNs/baseNs, "ratio")
	ReportCPU(b, eng, base, n, "row")
}

// ReportCPU reports the CPU-time twins of ns/row (or ns/key) and ratio.
func ReportCPU(b *testing.B, eng, base RunResult, n float64, unit string) {
	engCPU := float64(eng.CPU.Nanoseconds()) / n
	baseCPU := float64(base.CPU.Nanoseconds()) / n
	b.ReportMetric(engCPU, "cpu-ns/"+unit)
	b.ReportMetric(baseCPU, "base-cpu-ns/"+unit)
	if baseCPU > 0 {
		b.ReportMetric(engCPU/baseCPU, "cpu-ratio")
	}
}
