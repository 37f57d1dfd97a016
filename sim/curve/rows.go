package curve

import (
	"context"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The engines that take rows one at a time (Flink, Kafka Streams, Beam)
// each remember a key by a clock of their own, and the verdict of a copy
// of an event compares that clock now, c, with the clock c0 at which the
// key was stored: every such comparison is a threshold on the horizon H
// (Flink's TTL, Kafka Streams' window W, Beam's duration d). With g = c -
// c0 (ms), the copy finds the key, and is dropped as a duplicate, at the
// horizons of s whole seconds with s > floor((a g - b) / 1000), and is
// emitted at the others (rowShape.a and .b, per engine's rule). The pass
// replays each event's copies over intervals of s, as the Spark pass
// does: where the rule stores the key again when it emits (Flink's and
// Beam's keep-first), an interval splits at the threshold; where it puts
// the key at every copy (Kafka Streams' window store) or emits every copy
// (Flink's keep-last), the verdicts of the copies are independent and no
// interval splits. Nothing the rules supported drops a row as late, and
// every event's first copy is emitted at every horizon, so no event is
// lost at any horizon: the counters are added as the copies come.

// clockKind is the clock a rule stores a key at and reads it by.
type clockKind uint8

const (
	// procClock is the row's arrival in ms: Flink's TTL clock, Beam's
	// processing time.
	procClock clockKind = iota
	// watermarkClock is Beam's input watermark at the row: the largest
	// event time (ms) of the rows before it, Beam's minimum timestamp
	// before the first.
	watermarkClock
	// streamClock is Kafka Streams' stream time of the row's task: the
	// largest event time (ms) its task has seen, the row's included.
	streamClock
)

// rowShape is what the row pass needs of a supported query.
type rowShape struct {
	engine string
	clock  clockKind
	// A copy is emitted at s seconds iff s <= floorDiv(a g - b, 1000).
	a, b int64
	// refresh: the key is put again at every copy, duplicate or not
	// (Kafka Streams' window store); always: every copy is emitted
	// (Flink's keep-last).
	refresh, always bool
	// keyCols are the key's columns; partitions the tasks a Kafka
	// Streams query's keys are spread over (1 otherwise).
	keyCols    []int
	partitions int
	// cut says how long a stored key counts in state: a key stored at
	// c0 is in state at horizon H ms while c0 + H + cut >= the clock at
	// the sample. noState says why the pass does not track the state
	// ("" when it does).
	cut     int64
	noState string
}

// beamMinTimestamp is Beam's BoundedWindow.TIMESTAMP_MIN_VALUE in ms: the
// input watermark before the first advance (engines/beam.MinTimestamp).
const beamMinTimestamp int64 = -9223372036854775

// rowPiece is an event's stored key over the horizons lo..hi (seconds):
// stored at clock c0 there.
type rowPiece struct {
	lo, hi, c0 int64
}

// rowEvent is an event whose copies are still arriving.
type rowEvent struct {
	copies, seen int64
	// task is the Kafka Streams task of the event's key; last the
	// stream time of its last put.
	task int
	last int64
	// pieces are in increasing lo, covering 0..maxS.
	pieces []rowPiece
}

// rowPass is one run over the stream of a row-at-a-time engine's query.
type rowPass struct {
	sc    *scenario.Scenario
	sh    rowShape
	maxS  int64
	prog  func(float64)
	diffs []counters

	inputRows, logical, trueDups, batches int64

	events window[rowEvent]
	free   []*rowEvent
	// maxEvent is the largest event time (ms) of the rows so far (any:
	// a row came); streamTime the tasks' stream times.
	maxEvent   int64
	any        bool
	streamTime []int64

	// The tracked horizons, increasing, and their state: shared holds
	// the keys every horizon stores alike (one per task), own the
	// others, per horizon; peaks and final are the state rows.
	stateDelays []time.Duration
	stateSecs   []int64
	cuts        []int64
	shared      []*sharedFifo
	own         []fifo
	peaks       []int64
	final       []int64

	rowBuf generators.Batch
	key    []byte
	spare  []rowPiece
}

// fifo holds times in increasing order from head on.
type fifo struct {
	t    []int64
	head int
}

func (f *fifo) push(c int64) { f.t = append(f.t, c) }

// pop drops the times below lim and returns how many remain.
func (f *fifo) pop(lim int64) int64 {
	for f.head < len(f.t) && f.t[f.head] < lim {
		f.head++
	}
	if f.head > 1024 && f.head >= len(f.t)/2 {
		n := copy(f.t, f.t[f.head:])
		f.t, f.head = f.t[:n], 0
	}
	return int64(len(f.t) - f.head)
}

// sharedFifo holds times in increasing order that every tracked horizon
// counts, each with its own pointer (absolute: base is the index of
// t[0]); ptr[i] falls behind as the horizon grows.
type sharedFifo struct {
	t      []int64
	base   int64
	ptr    []int64
	pushed int64
}

func (f *sharedFifo) push(c int64) { f.t = append(f.t, c); f.pushed++ }

// pop drops, for horizon i, the times below lim and returns how many it
// still counts.
func (f *sharedFifo) pop(i int, lim int64) int64 {
	p := f.ptr[i]
	for p < f.pushed && f.t[p-f.base] < lim {
		p++
	}
	f.ptr[i] = p
	return f.pushed - p
}

// compact drops the times every horizon dropped.
func (f *sharedFifo) compact() {
	slow := f.pushed
	for _, p := range f.ptr {
		slow = min(slow, p)
	}
	if k := slow - f.base; k > 1024 && k >= int64(len(f.t))/2 {
		n := copy(f.t, f.t[k:])
		f.t, f.base = f.t[:n], slow
	}
}

func newRowPass(sc *scenario.Scenario, sh rowShape, maxD time.Duration, opts Options) *rowPass {
	p := &rowPass{sc: sc, sh: sh, maxS: int64(maxD / Unit), prog: opts.Progress}
	p.diffs = make([]counters, p.maxS+2)
	p.rowBuf.IDs = sc.Workload.IDs.Kind()
	p.streamTime = make([]int64, max(sh.partitions, 1))
	for i := range p.streamTime {
		p.streamTime[i] = -1
	}
	if sh.noState == "" {
		for _, d := range opts.StateDelays {
			if d%Unit != 0 || d < Unit || d > maxD || containsDur(p.stateDelays, d) {
				continue
			}
			p.stateDelays = append(p.stateDelays, d)
		}
		sortDurs(p.stateDelays)
		for _, d := range p.stateDelays {
			p.stateSecs = append(p.stateSecs, int64(d/Unit))
			p.cuts = append(p.cuts, d.Milliseconds()+sh.cut)
		}
		n := len(p.stateDelays)
		if n > 0 {
			p.shared = make([]*sharedFifo, len(p.streamTime))
			for i := range p.shared {
				p.shared[i] = &sharedFifo{ptr: make([]int64, n)}
			}
			p.own = make([]fifo, n)
		}
		p.peaks, p.final = make([]int64, n), make([]int64, n)
	}
	return p
}

func sortDurs(ds []time.Duration) {
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && ds[j] < ds[j-1]; j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
}

// run replays the runner's row job (sim/runner rowjob.go): the rows one
// at a time at their arrival, a sample at every trigger at which rows
// arrived (idle triggers skipped; every arrival its own sample without a
// trigger).
func (p *rowPass) run(ctx context.Context, src *generators.Generator) error {
	sc := p.sc
	var look generators.Row
	has := src.Next(&look)
	start, trig := sc.Start.UnixMicro(), sc.Trigger.Micros()
	trafficLast := start + sc.LastTrafficTrigger().Microseconds()
	lastReported := start
	for t := start + trig; has; t += trig {
		if p.batches%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if look.Arrival > t && trig > 0 {
			t += (look.Arrival - t - 1) / trig * trig
			continue
		}
		if trig <= 0 {
			t = look.Arrival
		}
		rows := p.rowBuf.Rows[:0]
		for has && look.Arrival <= t {
			rows = append(rows, look)
			has = src.Next(&look)
		}
		p.rowBuf.Rows = rows
		for i := range rows {
			p.row(i)
			if i%1024 == 1023 {
				p.events.advance()
			}
		}
		p.events.advance()
		p.sample(t, t <= trafficLast)
		p.batches++
		if p.prog != nil && t-lastReported >= 60e6 {
			p.prog(float64(t-lastReported) / 1e6)
			lastReported = t
		}
	}
	if p.prog != nil {
		p.prog(max(0, sc.Duration.Std().Seconds()-float64(lastReported-start)/1e6))
	}
	return nil
}

// sample reads the tracked horizons' state at trigger t (us).
func (p *rowPass) sample(t int64, peak bool) {
	if len(p.stateDelays) == 0 {
		return
	}
	for i, cut := range p.cuts {
		var live int64
		if p.sh.clock == streamClock {
			for k, f := range p.shared {
				live += f.pop(i, p.streamTime[k]-cut)
			}
		} else {
			now := t / 1000
			if p.sh.clock == watermarkClock {
				now = beamMinTimestamp
				if p.any {
					now = p.maxEvent
				}
			}
			live = p.shared[0].pop(i, now-cut) + p.own[i].pop(now-cut)
		}
		p.final[i] = live
		if peak {
			p.peaks[i] = max(p.peaks[i], live)
		}
	}
	for _, f := range p.shared {
		f.compact()
	}
}

// row runs row i of the batch.
func (p *rowPass) row(i int) {
	r := &p.rowBuf.Rows[i]
	tr := &r.Truth
	p.inputRows++
	if tr.Copy > 0 {
		p.trueDups++
	}
	eventMs := r.EventTime / 1000
	procMs := r.Arrival / 1000
	ev := p.events.get(tr.Event)
	first := ev == nil
	if first {
		ev = p.newEvent(int64(tr.Copies))
		p.events.set(tr.Event, ev)
		p.logical++
		if p.sh.partitions > 1 {
			p.key = p.rowBuf.AppendKey(p.key[:0], i, p.sh.keyCols)
			ev.task = partitionFor(p.key, p.sh.partitions)
		}
	}
	ev.seen++
	var c int64
	switch p.sh.clock {
	case procClock:
		c = procMs
	case watermarkClock:
		c = beamMinTimestamp
		if p.any {
			c = p.maxEvent
		}
	case streamClock:
		st := &p.streamTime[ev.task]
		*st = max(*st, eventMs)
		c = *st
	}
	if !p.any || eventMs > p.maxEvent {
		p.maxEvent, p.any = eventMs, true
	}
	switch {
	case first:
		// Emitted at every horizon, stored at c.
		p.add(0, p.maxS, counters{emitted: 1})
		ev.pieces = append(ev.pieces[:0], rowPiece{lo: 0, hi: p.maxS, c0: c})
		ev.last = c
		p.storeAll(ev.task, c)
	case p.sh.always:
		p.add(0, p.maxS, counters{emitted: 1, missed: 1})
	case p.sh.refresh:
		m := p.emitMax(c - ev.last)
		p.split(0, p.maxS, m)
		if c != ev.last {
			// A put at a new window start: a new row of the store.
			p.storeAll(ev.task, c)
		}
		ev.last = c
	default:
		p.chain(ev, c)
	}
	if ev.seen >= ev.copies {
		p.events.finish(tr.Event)
		p.free = append(p.free, ev)
	}
}

// emitMax is the largest horizon (s) at which a copy g ms after its
// key's store is emitted.
func (p *rowPass) emitMax(g int64) int64 {
	return floorDiv(p.sh.a*g-p.sh.b, 1000)
}

// split adds a copy emitted (a missed duplicate) at the horizons lo..m
// and dropped as a duplicate at m+1..hi.
func (p *rowPass) split(lo, hi, m int64) {
	if m >= lo {
		p.add(lo, min(m, hi), counters{emitted: 1, missed: 1})
	}
	if m < hi {
		p.add(max(m+1, lo), hi, counters{dup: 1})
	}
}

// chain runs a copy at clock c through the event's pieces: where it
// finds the key it is a duplicate; elsewhere it is emitted and stores the
// key at c.
func (p *rowPass) chain(ev *rowEvent, c int64) {
	out := p.spare[:0]
	for _, pc := range ev.pieces {
		m := p.emitMax(c - pc.c0)
		p.split(pc.lo, pc.hi, m)
		switch {
		case m < pc.lo:
			out = appendPiece(out, pc)
		case m >= pc.hi:
			out = appendPiece(out, rowPiece{pc.lo, pc.hi, c})
			p.store(pc.lo, pc.hi, c)
		default:
			out = appendPiece(out, rowPiece{pc.lo, m, c})
			p.store(pc.lo, m, c)
			out = appendPiece(out, rowPiece{m + 1, pc.hi, pc.c0})
		}
	}
	p.spare = ev.pieces
	ev.pieces = out
}

// appendPiece appends pc, merged with the last piece when they store at
// the same clock.
func appendPiece(ps []rowPiece, pc rowPiece) []rowPiece {
	if n := len(ps); n > 0 && ps[n-1].c0 == pc.c0 && ps[n-1].hi+1 == pc.lo {
		ps[n-1].hi = pc.hi
		return ps
	}
	return append(ps, pc)
}

// storeAll counts a key stored at c at every horizon.
func (p *rowPass) storeAll(task int, c int64) {
	if p.shared != nil {
		p.shared[task].push(c)
	}
}

// store counts a key stored at c at the horizons lo..hi.
func (p *rowPass) store(lo, hi, c int64) {
	if p.shared == nil {
		return
	}
	if lo == 0 && hi == p.maxS {
		p.shared[0].push(c)
		return
	}
	for i, s := range p.stateSecs {
		if s > hi {
			break
		}
		if s >= lo {
			p.own[i].push(c)
		}
	}
}

func (p *rowPass) add(lo, hi int64, c counters) {
	a, b := &p.diffs[lo], &p.diffs[hi+1]
	a.emitted += c.emitted
	b.emitted -= c.emitted
	a.missed += c.missed
	b.missed -= c.missed
	a.dup += c.dup
	b.dup -= c.dup
}

func (p *rowPass) newEvent(copies int64) *rowEvent {
	var ev *rowEvent
	if n := len(p.free); n > 0 {
		ev = p.free[n-1]
		p.free = p.free[:n-1]
		ev.pieces = ev.pieces[:0]
		ev.seen, ev.task, ev.last = 0, 0, 0
	} else {
		ev = &rowEvent{}
	}
	ev.copies = copies
	return ev
}

// totals returns the counters at every second 0..maxS.
func (p *rowPass) totals() []counters {
	out := make([]counters, p.maxS+1)
	var run counters
	for s := range out {
		d := p.diffs[s]
		run.emitted += d.emitted
		run.missed += d.missed
		run.dup += d.dup
		out[s] = run
	}
	return out
}

// computeRows runs the pass of q, a query of an engine that takes rows
// one at a time (refused as checkRows refuses).
func computeRows(ctx context.Context, sc *scenario.Scenario, q scenario.Query, maxD time.Duration, opts Options) (*Curve, error) {
	sh, err := checkRows(sc, q)
	if err != nil {
		return nil, err
	}
	if maxD < rowMin {
		return nil, unsupported("no horizon of whole seconds up to %s", maxD)
	}
	src, err := generators.New(sc.Generator())
	if err != nil {
		return nil, err
	}
	p := newRowPass(sc, sh, maxD, opts)
	if err := p.run(ctx, src); err != nil {
		return nil, err
	}
	out := &Curve{Query: q.Name, Min: rowMin, Max: maxD, InputRows: p.inputRows, LogicalEvents: p.logical, TrueDuplicates: p.trueDups,
		Batches: p.batches, state: map[time.Duration]State{}}
	out.at = p.totals()
	for i, d := range p.stateDelays {
		out.state[d] = State{PeakRows: p.peaks[i], FinalRows: p.final[i]}
	}
	return out, nil
}
