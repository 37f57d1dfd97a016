package curve

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// inst is one key of an event as stored in one interval of delays.
type inst struct {
	stored bool
	// y is ceil(event time / 1000): the stored copy's event time in
	// whole milliseconds, rounded up; batch the batch that stored it.
	y     int64
	batch int64
}

// piece is an event's state over the delays lo..hi (seconds).
type piece struct {
	lo, hi                    int64
	emitted, late, dup, missd int64
	// keys holds one inst per distinct key of the event (event.keyEnds).
	keys []inst
}

// event is a logical event whose copies are still arriving.
type event struct {
	copies, seen int64
	keyBuf       []byte
	keyEnds      []int
	pieces       []piece
	// ahead is the watermarkAhead of the batch of its last row so far.
	ahead bool
}

// ring counts stored keys of one tracked delay by the largest event time
// (ms) that still keeps them: a key goes once E_j >= w. A count may be
// negative: a key the shared counts hold for every delay but this one
// (see emit). The ring covers w in [base, base+len(count)), per
// millisecond and per block of blockMs (so that an eviction passes whole
// blocks at once); other keys wait in over.
type ring struct {
	dms   int64 // c x delay in ms
	count []int32
	block []int64
	base  int64
	// set is false until the first key sets base.
	set  bool
	over map[int64]int32
	// lastE is the largest E evicted with; due counts the keys stored
	// with a w at or below it, which the next eviction removes.
	lastE, due int64
	live       int64
}

// blockMs is the ring's block: a power of two.
const blockMs = 1024

func newRing(cdms int64, span int64) *ring {
	n := int64(blockMs)
	for n < span {
		n <<= 1
	}
	return &ring{dms: cdms, count: make([]int32, n), block: make([]int64, n/blockMs), over: map[int64]int32{}, lastE: math.MinInt64}
}

// add stores v keys (v = 1, or -1 to take one off) that go once the
// largest event time reaches w.
func (r *ring) add(w int64, v int32) {
	r.live += int64(v)
	if w <= r.lastE {
		r.due += int64(v)
		return
	}
	if !r.set {
		r.base, r.set = w, true
	}
	if w >= r.base && w-r.base < int64(len(r.count)) {
		k := w & int64(len(r.count)-1)
		r.count[k] += v
		r.block[k/blockMs] += int64(v)
		return
	}
	r.over[w] += v
}

// evict removes the keys with w <= e.
func (r *ring) evict(e int64) {
	r.live -= r.due
	r.due = 0
	if e <= r.lastE {
		return
	}
	r.lastE = e
	if !r.set {
		return
	}
	n := int64(len(r.count))
	mask := n - 1
	for r.base <= e {
		k := r.base & mask
		if k%blockMs == 0 && r.base+blockMs-1 <= e {
			// A whole block.
			if c := r.block[k/blockMs]; c != 0 || r.count[k] != 0 {
				r.live -= c
				r.block[k/blockMs] = 0
				clear(r.count[k : k+blockMs])
			}
			r.base += blockMs
			continue
		}
		c := int64(r.count[k])
		r.live -= c
		r.block[k/blockMs] -= c
		r.count[k] = 0
		r.base++
	}
	for w, c := range r.over {
		switch {
		case w <= e:
			r.live -= int64(c)
			delete(r.over, w)
		case w >= r.base && w-r.base < n:
			k := w & mask
			r.count[k] += c
			r.block[k/blockMs] += int64(c)
			delete(r.over, w)
		}
	}
}

// pass is one run over the stream.
type pass struct {
	sc    *scenario.Scenario
	sh    shape
	maxS  int64
	prog  func(float64)
	diffs []counters // difference arrays over seconds 0..maxS+1

	inputRows, logical, trueDups, batches, noData int64

	events window[event]
	free   []*event

	stateDelays []time.Duration
	stateSecs   []int64
	rings       []*ring
	// counts counts the keys every delay stores alike, rings the others;
	// peaks are the delays' peak state rows.
	counts *shared
	peaks  []int64

	// The batch being run: its index, E_{k-1} (prevE, -1: none) and the
	// late filter's watermarkAhead.
	batch  int64
	prevE  int64
	ahead  bool
	rowBuf generators.Batch
	key    []byte
}

func newPass(sc *scenario.Scenario, sh shape, maxD time.Duration, opts Options) *pass {
	p := &pass{sc: sc, sh: sh, maxS: int64(maxD / Unit), prog: opts.Progress}
	p.diffs = make([]counters, p.maxS+2)
	p.rowBuf.IDs = sc.Workload.IDs.Kind()
	trig := sc.Trigger.Std().Milliseconds()
	for _, d := range opts.StateDelays {
		if d%Unit != 0 || d < 0 || d > maxD || containsDur(p.stateDelays, d) {
			continue
		}
		p.stateDelays = append(p.stateDelays, d)
		p.stateSecs = append(p.stateSecs, int64(d/Unit))
		cd := sh.c * d.Milliseconds()
		// A key's w is at most its event time (about the batch's, a
		// trigger ahead of E) plus c x delay: the ring covers that, a
		// bad clock's lead goes to the overflow.
		p.rings = append(p.rings, newRing(cd, min(cd+4*trig+4096, 1<<16)))
	}
	// The shared counts by delay, increasing.
	order := make([]int, len(p.stateDelays))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(p.stateDelays[a], p.stateDelays[b]) })
	sorted := func(v []time.Duration) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, j := range order {
			out[i] = v[j]
		}
		return out
	}
	p.stateDelays = sorted(p.stateDelays)
	secs, rings := slices.Clone(p.stateSecs), slices.Clone(p.rings)
	var cdms []int64
	for i, j := range order {
		p.stateSecs[i], p.rings[i] = secs[j], rings[j]
		cdms = append(cdms, p.rings[i].dms)
	}
	if len(cdms) > 0 {
		p.counts = newShared(cdms, min(cdms[len(cdms)-1]+4*trig+4096, 1<<24))
	}
	p.peaks = make([]int64, len(cdms))
	return p
}

func containsDur(ds []time.Duration, d time.Duration) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// ceilMs is ceil(us / 1000).
func ceilMs(us int64) int64 {
	q := us / 1000
	if us%1000 > 0 {
		q++
	}
	return q
}

// floorDiv is floor(a / b) for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// run replays the runner's loop over triggers (sim/runner job.go): the
// rows that arrived by a trigger form its batch; with none, a no-data
// batch runs when no-data batches are on and the last batch raised the
// largest event time; idle triggers are skipped.
func (p *pass) run(ctx context.Context, src generators.Source) error {
	sc := p.sc
	trig := sc.Trigger.Micros()
	t := sc.Start.UnixMicro() + trig
	trafficLast := sc.Start.UnixMicro() + sc.LastTrafficTrigger().Microseconds()
	var look generators.Row
	hasLook := src.Next(&look)
	m := int64(-1)     // the largest event time (ms) of the data batches so far
	lastE := int64(-1) // E of the last batch run
	ran := false
	lastReported := t - trig
	for ; ; t += trig {
		if p.batches%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rows := p.rowBuf.Rows[:0]
		for hasLook && look.Arrival <= t {
			rows = append(rows, look)
			hasLook = src.Next(&look)
		}
		p.rowBuf.Rows = rows
		switch {
		case len(rows) > 0:
		case sc.NoDataMicroBatches && ran && m >= 0 && m > lastE:
		default:
			if !hasLook {
				p.finish()
				if p.prog != nil {
					p.prog(float64(t-lastReported) / 1e6)
				}
				return nil
			}
			if skip := (look.Arrival - t) / trig; skip > 1 {
				t += (skip - 1) * trig
			}
			continue
		}
		// Batch p.batches runs at t with E_k = m and late watermark
		// E_{k-1} = lastE (none for the first batch).
		e := m
		p.prevE = lastE
		if p.batches == 0 {
			p.prevE = -1
		}
		p.ahead = p.prevE >= 0 && p.prevE > t/1000
		p.batch = p.batches
		for i := range rows {
			p.row(i)
			if i%1024 == 1023 {
				p.events.advance()
			}
			if ms := p.rowBuf.EventTime(i, p.sh.wmCol) / 1000; ms > m {
				m = ms
			}
		}
		if len(rows) == 0 {
			p.noData++
		}
		p.events.advance()
		// Eviction after the rows, with E_k.
		for i, r := range p.rings {
			if e >= 0 {
				r.evict(e)
			}
			if e >= 0 && i == 0 {
				p.counts.evict(e)
			}
			if t <= trafficLast {
				p.peaks[i] = max(p.peaks[i], p.stateRows(i))
			}
		}
		lastE = e
		ran = true
		p.batches++
		if p.prog != nil && t-lastReported >= 60e6 {
			p.prog(float64(t-lastReported) / 1e6)
			lastReported = t
		}
	}
}

// row runs row i of the batch through its event's intervals.
func (p *pass) row(i int) {
	r := &p.rowBuf.Rows[i]
	tr := &r.Truth
	p.inputRows++
	if tr.Copy > 0 {
		p.trueDups++
	}
	ev := p.events.get(tr.Event)
	if ev == nil {
		ev = p.newEvent(int64(tr.Copies))
		p.events.set(tr.Event, ev)
		p.logical++
	}
	ev.seen++
	ev.ahead = p.ahead
	k := 0
	if !p.sh.oneKey {
		p.key = p.rowBuf.AppendKey(p.key[:0], i, p.sh.keyCols)
		k = ev.keyIndex(p.key)
	} else if len(ev.pieces[0].keys) == 0 {
		ev.addKey(nil)
	}
	et := p.rowBuf.EventTime(i, p.sh.wmCol)
	y := ceilMs(et)
	// Late for seconds <= lateMax.
	lateMax := int64(-1)
	if p.prevE >= 0 {
		lateMax = floorDiv(p.prevE-y, 1000)
	}
	n := len(ev.pieces)
	for j := 0; j < n; j++ {
		pc := &ev.pieces[j]
		if lateMax >= pc.lo {
			if lateMax >= pc.hi {
				pc.late++
				continue
			}
			// Split: lo..lateMax late, the rest decided below.
			lp := ev.clonePiece(j, pc.lo, lateMax)
			lp.late++
			pc = &ev.pieces[j]
			pc.lo = lateMax + 1
		}
		// decide may append a split piece, decided already: the loop
		// stops at the pieces the row found.
		p.decide(ev, j, k, y)
	}
	if ev.seen >= ev.copies {
		p.flush(ev, true)
		p.events.finish(tr.Event)
		p.free = append(p.free, ev)
	}
}

// decide runs the dedup on piece j (not late) for key k with event time
// y (ms, rounded up). A piece appended by a split is decided here.
func (p *pass) decide(ev *event, j, k int, y int64) {
	pc := &ev.pieces[j]
	in := pc.keys[k]
	switch {
	case !in.stored:
		p.emit(pc, k, y)
	case in.batch == p.batch:
		pc.dup++
	default:
		// Evicted by batch k-1 for seconds <= ev.
		evMax := int64(-1)
		if p.prevE >= 0 {
			evMax = floorDiv(p.prevE-in.y, p.sh.c*1000)
		}
		switch {
		case evMax < pc.lo:
			pc.dup++
		case evMax >= pc.hi:
			p.emit(pc, k, y)
		default:
			np := ev.clonePiece(j, pc.lo, evMax)
			p.emit(np, k, y)
			pc = &ev.pieces[j]
			pc.lo = evMax + 1
			pc.dup++
		}
	}
}

// emit emits the row in pc and stores its key.
func (p *pass) emit(pc *piece, k int, y int64) {
	if pc.emitted > 0 {
		pc.missd++
	}
	pc.emitted++
	pc.keys[k] = inst{stored: true, y: y, batch: p.batch}
	if p.counts != nil && pc.hi == p.maxS {
		// Stored at every delay from lo on: in the shared counts, taken
		// off again at the tracked delays below lo (few: lo is small).
		p.counts.add(y)
		for i, s := range p.stateSecs {
			if s >= pc.lo {
				break
			}
			p.rings[i].add(y+p.rings[i].dms, -1)
		}
		return
	}
	for i, s := range p.stateSecs {
		if s >= pc.lo && s <= pc.hi {
			p.rings[i].add(y+p.rings[i].dms, 1)
		}
	}
}

// flush adds ev's intervals to the totals; done says all its copies came.
func (p *pass) flush(ev *event, done bool) {
	for i := range ev.pieces {
		pc := &ev.pieces[i]
		c := counters{emitted: pc.emitted, missed: pc.missd, late: pc.late, dup: pc.dup}
		if done && pc.emitted == 0 {
			switch {
			case pc.late == ev.copies && ev.ahead:
				c.fdBadClock = 1
			case pc.late == ev.copies:
				c.fdLate = 1
			default:
				c.fdCollide = 1
			}
		}
		p.add(pc.lo, pc.hi, c)
	}
}

func (p *pass) add(lo, hi int64, c counters) {
	a, b := &p.diffs[lo], &p.diffs[hi+1]
	a.emitted += c.emitted
	b.emitted -= c.emitted
	a.missed += c.missed
	b.missed -= c.missed
	a.late += c.late
	b.late -= c.late
	a.dup += c.dup
	b.dup -= c.dup
	a.fdLate += c.fdLate
	b.fdLate -= c.fdLate
	a.fdBadClock += c.fdBadClock
	b.fdBadClock -= c.fdBadClock
	a.fdCollide += c.fdCollide
	b.fdCollide -= c.fdCollide
}

// finish adds the events whose copies did not all arrive.
func (p *pass) finish() {
	p.events.each(func(ev *event) { p.flush(ev, false) })
}

// totals returns the counters at every second 0..maxS.
func (p *pass) totals() []counters {
	out := make([]counters, p.maxS+1)
	var run counters
	for s := range out {
		d := p.diffs[s]
		run.emitted += d.emitted
		run.missed += d.missed
		run.late += d.late
		run.dup += d.dup
		run.fdLate += d.fdLate
		run.fdBadClock += d.fdBadClock
		run.fdCollide += d.fdCollide
		out[s] = run
	}
	return out
}

// newEvent returns an event with one interval, every delay.
func (p *pass) newEvent(copies int64) *event {
	var ev *event
	if n := len(p.free); n > 0 {
		ev = p.free[n-1]
		p.free = p.free[:n-1]
		ev.keyBuf, ev.keyEnds = ev.keyBuf[:0], ev.keyEnds[:0]
		for i := range ev.pieces {
			ev.pieces[i].keys = ev.pieces[i].keys[:0]
		}
		ev.pieces = ev.pieces[:1]
		ev.seen, ev.ahead = 0, false
	} else {
		ev = &event{pieces: make([]piece, 1, 2)}
	}
	ev.copies = copies
	keys := ev.pieces[0].keys
	ev.pieces[0] = piece{lo: 0, hi: p.maxS, keys: keys}
	return ev
}

// keyIndex returns the index of key among ev's keys, adding it (and an
// unstored inst to every interval) when new.
func (ev *event) keyIndex(key []byte) int {
	start := 0
	for i, end := range ev.keyEnds {
		if bytes.Equal(ev.keyBuf[start:end], key) {
			return i
		}
		start = end
	}
	return ev.addKey(key)
}

// addKey adds key to ev's keys, unstored in every interval, and returns
// its index.
func (ev *event) addKey(key []byte) int {
	ev.keyBuf = append(ev.keyBuf, key...)
	ev.keyEnds = append(ev.keyEnds, len(ev.keyBuf))
	for i := range ev.pieces {
		ev.pieces[i].keys = append(ev.pieces[i].keys, inst{})
	}
	return len(ev.keyEnds) - 1
}

// clonePiece appends a copy of piece j restricted to lo..hi and returns it.
func (ev *event) clonePiece(j int, lo, hi int64) *piece {
	src := ev.pieces[j]
	var keys []inst
	if n := len(ev.pieces); n < cap(ev.pieces) {
		keys = ev.pieces[:n+1][n].keys[:0]
	}
	keys = append(keys, src.keys...)
	np := src
	np.lo, np.hi, np.keys = lo, hi, keys
	ev.pieces = append(ev.pieces, np)
	return &ev.pieces[len(ev.pieces)-1]
}

// stateRows is tracked delay i's state rows now.
func (p *pass) stateRows(i int) int64 { return p.rings[i].live + p.counts.live(i) }
