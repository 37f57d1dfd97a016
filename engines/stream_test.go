package engines_test

import (
	"math/rand/v2"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
)

// The benchmark workload: 36-byte UUID-like ids, a small share of rows that
// repeat a recent id (a producer retry), and event times that increase with
// the id's sequence number plus a little jitter, so that expiries arrive
// almost, but not exactly, in order.
const (
	// idLen is the length of an id: a UUID in its text form.
	idLen = 36
	// dupShare is the share of rows that repeat an earlier id.
	dupShare = 0.05
	// dupWindow bounds how far back (in distinct ids) a repeat reaches.
	dupWindow = 1000
	// stepMicros is the event time between consecutive distinct ids.
	stepMicros = 1000
	// jitterMicros is the spread of an id's event time past its slot: ids
	// up to five slots apart may arrive out of event-time order.
	jitterMicros = 5000
	// t0Micros is the event time of the first id (2024-01-01T00:00:00Z).
	t0Micros = 1_704_067_200_000_000
	// batchRows is the rows of one micro-batch: the engines evict once per
	// batch, as the executor does.
	batchRows = 10_000
)

// putID writes id number n as a 36-byte UUID-like text into dst. Distinct n
// give distinct ids: the first 16 hex digits are splitmix(n), a bijection.
func putID(dst []byte, n uint64) {
	const hex = "0123456789abcdef"
	a, b := splitmix(n), splitmix(n^0x5bd1e9955bd1e995)
	j := 0
	for i := range idLen {
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

// streamGen is a deterministic pull iterator over the workload's rows. Two
// generators made with the same seed yield the same rows, which is how the
// engine and its baseline see the same keys.
type streamGen struct {
	rng *rand.Rand
	// ids is the number of distinct ids emitted so far.
	ids uint64
	// maxET is the largest event time emitted so far.
	maxET int64
}

func newStreamGen(seed uint64) *streamGen {
	return &streamGen{rng: rand.New(rand.NewPCG(seed, 0x0ddba11)), maxET: t0Micros}
}

// eventTime is id n's event time: a function of n, so a repeat carries the
// original's event time, as a retried event does.
func eventTime(n uint64) int64 {
	return t0Micros + int64(n)*stepMicros + int64(splitmix(n^0xa5a5a5a5)%jitterMicros)
}

// next writes the next row's id into key and returns its event time and
// whether it repeats an earlier id (the ground truth: the engines must call
// exactly these rows duplicates while the repeated id is in state).
func (g *streamGen) next(key []byte) (et int64, dup bool) {
	n := g.ids
	if g.ids > 0 && g.rng.Float64() < dupShare {
		n = g.ids - 1 - g.rng.Uint64N(min(g.ids, dupWindow))
		dup = true
	} else {
		g.ids++
	}
	putID(key, n)
	et = eventTime(n)
	g.maxET = max(g.maxET, et)
	return et, dup
}

// rowBlock is a stretch of pre-generated rows, so that the timed loops
// read keys from memory instead of paying for their generation.
type rowBlock struct {
	keys  []byte  // row i's id is keys[i*idLen : (i+1)*idLen]
	times []int64 // row i's event time
	// batchMax[b] is the largest event time of all rows up to the end of
	// batch b (batchRows rows each), prefix included: the watermark base.
	batchMax []int64
	// dups is the number of rows that repeat an earlier id.
	dups int
}

func (r *rowBlock) key(i int) []byte { return r.keys[i*idLen : (i+1)*idLen] }
func (r *rowBlock) len() int         { return len(r.times) }

// take pre-generates the generator's next n rows.
func (g *streamGen) take(n int) *rowBlock {
	r := &rowBlock{keys: make([]byte, n*idLen), times: make([]int64, n)}
	for i := range n {
		et, dup := g.next(r.key(i))
		r.times[i] = et
		if dup {
			r.dups++
		}
		if (i+1)%batchRows == 0 || i == n-1 {
			r.batchMax = append(r.batchMax, g.maxET)
		}
	}
	return r
}

// engineKind is one of the benchmarked dedup configurations.
type engineKind int

const (
	// dedupeNoEvict is dropDuplicates without the event time among the
	// keys: nothing is ever evicted and the state grows with the stream.
	dedupeNoEvict engineKind = iota
	// dedupeEvict is dropDuplicates with the event time among the keys:
	// a key expires at its event time. (The benchmark keys are the ids
	// alone; a real key would also encode the event time, which changes
	// the key length, not the work.)
	dedupeEvict
	// within is dropDuplicatesWithinWatermark: a key expires at its first
	// event time plus the delay.
	within
)

var engineNames = [...]string{"dedupe-noevict", "dedupe-evict", "within"}

func (k engineKind) String() string { return engineNames[k] }

func (k engineKind) evicts() bool { return k != dedupeNoEvict }

// delayMicros is the watermark delay that keeps about live ids in state
// in steady state. Spark evicts with watermark = max event time - delay;
// dedupe keeps a key until the watermark passes its event time, so one
// delay of event time is live; within keeps it until the watermark passes
// event time + delay, so two delays are live.
func (k engineKind) delayMicros(live int) int64 {
	switch k {
	case dedupeEvict:
		return int64(live) * stepMicros
	case within:
		return int64(live) * stepMicros / 2
	}
	return 0
}

// newOperator returns the engine's operator over s for a steady state of
// about live ids.
func (k engineKind) newOperator(s engines.Store, live int) engines.Operator {
	if k == within {
		return engines.NewDedupeWithinWatermark(s, k.delayMicros(live)/1000)
	}
	return engines.NewDedupe(s, k == dedupeEvict)
}

// expiry is the expiry the engine gives a key first seen at et; the
// baseline uses it to evict the same keys.
func (k engineKind) expiry(et int64, live int) int64 {
	switch k {
	case dedupeEvict:
		return et
	case within:
		return et + k.delayMicros(live)
	}
	return engines.NoExpiry
}

// watermark is the eviction watermark after a batch whose running maximum
// event time is maxET.
func (k engineKind) watermark(maxET int64, live int) int64 {
	return maxET - k.delayMicros(live)
}

// warmBatches is how many batches run, untimed, after the prefill: enough
// for the evicting engines to reach their steady state (the first
// evictions reorganize the expiry index around the watermark).
const warmBatches = 3

// prime brings an operator to the steady state of the benchmark: it feeds
// the first `live` distinct ids (and the repeats among them) without
// eviction, then warmBatches batches with eviction. add and evict are
// either the engine's or the baseline's.
func prime(g *streamGen, k engineKind, live int, add func(key []byte, et int64) error, evict func(wm int64) error) error {
	var key [idLen]byte
	for g.ids < uint64(live) {
		et, _ := g.next(key[:])
		if err := add(key[:], et); err != nil {
			return err
		}
	}
	for range warmBatches {
		for range batchRows {
			et, _ := g.next(key[:])
			if err := add(key[:], et); err != nil {
				return err
			}
		}
		if k.evicts() {
			if err := evict(k.watermark(g.maxET, live)); err != nil {
				return err
			}
		}
	}
	return nil
}

// modelRun is the obviously correct reference: a map from key to expiry
// and a full scan per eviction. It returns rows emitted, keys evicted and
// the keys left.
func modelRun(k engineKind, live int, g *streamGen, rows *rowBlock) (emitted, evicted, left int) {
	m := map[string]int64{}
	add := func(key []byte, et int64) {
		if _, ok := m[string(key)]; !ok {
			m[string(key)] = k.expiry(et, live)
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
	if err := prime(g, k, live,
		func(key []byte, et int64) error { add(key, et); return nil },
		func(wm int64) error { evict(wm); return nil }); err != nil {
		panic(err)
	}
	emitted, evicted = 0, 0
	for b, start := 0, 0; start < rows.len(); b, start = b+1, start+batchRows {
		for i := start; i < min(start+batchRows, rows.len()); i++ {
			add(rows.key(i), rows.times[i])
		}
		if k.evicts() {
			evict(k.watermark(rows.batchMax[b], live))
		}
	}
	return emitted, evicted, len(m)
}

// TestStreamMatchesEngines checks that the benchmarks measure working
// engines: over the benchmark stream, every engine and the bare baseline
// emit exactly the rows that are not repeats, evict what the reference
// model evicts, and keep about `live` keys in steady state.
func TestStreamMatchesEngines(t *testing.T) {
	const live, rows, seed = 20_000, 65_000, 7
	for _, k := range []engineKind{dedupeNoEvict, dedupeEvict, within} {
		t.Run(k.String(), func(t *testing.T) {
			g := newStreamGen(seed)
			if err := prime(g, k, live, func([]byte, int64) error { return nil }, func(int64) error { return nil }); err != nil {
				t.Fatal(err)
			}
			block := g.take(rows)
			wantEmitted, wantEvicted, wantLeft := modelRun(k, live, newStreamGen(seed), block)
			if unique := rows - block.dups; wantEmitted != unique {
				t.Fatalf("model emitted %d rows, the generator made %d distinct ids: a repeat was evicted before it came back", wantEmitted, unique)
			}

			for _, perRow := range []bool{false, true} {
				s := memstore.New()
				op := k.newOperator(s, live)
				res, err := runEngine(nil, op, k, live, newStreamGen(seed), block, perRow)
				if err != nil {
					t.Fatal(err)
				}
				if res.emitted != wantEmitted || res.evicted != wantEvicted || op.Len() != wantLeft {
					t.Fatalf("engine (per row %v): emitted %d, evicted %d, left %d; model: %d, %d, %d",
						perRow, res.emitted, res.evicted, op.Len(), wantEmitted, wantEvicted, wantLeft)
				}
			}

			base, _ := runBaseline(nil, k, live, newStreamGen(seed), block)
			if base.emitted != wantEmitted {
				t.Fatalf("baseline emitted %d, model %d", base.emitted, wantEmitted)
			}
			// The baseline evicts in arrival order, so it may keep a key a
			// batch longer than the engines: compare its work, not its
			// exact timing.
			if d := base.evicted - wantEvicted; d < -jitterMicros/stepMicros || d > jitterMicros/stepMicros {
				t.Fatalf("baseline evicted %d, model %d", base.evicted, wantEvicted)
			}
			if k.evicts() {
				if l := wantLeft; l < live*9/10 || l > live*11/10 {
					t.Fatalf("%d keys live, want about %d", l, live)
				}
			}
		})
	}
}

// TestPutIDDistinct guards the property that makes the stream's ground
// truth exact: distinct numbers give distinct ids.
func TestPutIDDistinct(t *testing.T) {
	seen := map[string]uint64{}
	var key [idLen]byte
	for n := range uint64(200_000) {
		putID(key[:], n)
		if m, ok := seen[string(key[:])]; ok {
			t.Fatalf("ids %d and %d are both %q", m, n, key)
		}
		seen[string(key[:])] = n
	}
	if key[8] != '-' || key[23] != '-' {
		t.Fatalf("id %q is not UUID-shaped", key)
	}
}
