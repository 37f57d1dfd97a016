package generators

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"math/rand/v2"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/randvar"
)

// Source is a pull iterator of rows in arrival order.
type Source interface {
	// Next writes the next row into r and reports whether there was one.
	Next(r *Row) bool
}

// Generator produces a scenario's rows: a Source that never reads the wall
// clock and gives the same rows for the same scenario and seed. It holds
// only the copies in flight, never the run's history. It is not safe for
// concurrent use.
type Generator struct {
	cfg         Config
	fingerprint uint64
	ids         IDKind
	events      *counter
	// stages are the pipeline, innermost first; the last one is the top.
	stages []stage
	// retries is the retry stage, or nil without retries.
	retries *retries
}

// New returns the generator of c's workload over [c.Start,
// c.Start+c.Duration), seeded with c.Seed. It refuses a configuration
// that Check finds a problem in, with the first problem.
//
// The pipeline, innermost first: originals (Poisson arrivals following
// the rate profile; ids, customers, payload) -> arrivalDelay -> numbering
// -> retries -> badClock -> injected bad-clock rows -> heartbeats, each
// stage present only when its part of the workload is on. See the package
// documentation for the semantics of each.
func New(c Config) (*Generator, error) {
	if ps := c.Check(); len(ps) > 0 {
		return nil, fmt.Errorf("generators: %s: %s", ps[0].Path, ps[0].Msg)
	}
	w := &c.Workload
	fp, err := fingerprint(&c)
	if err != nil {
		return nil, fmt.Errorf("generators: %w", err)
	}
	g := &Generator{cfg: c, fingerprint: fp, events: &counter{}}
	// With uuid ids every event's UUID is its number enciphered
	// (uuidCipher), written where the number is given.
	var ids *uuidCipher
	if w.IDs == UUIDs {
		ids = newUUIDCipher(c.Seed)
	} else {
		g.ids = IntIDs
	}
	durNs := int64(c.Duration)
	var segs []segment
	for _, seg := range w.Segments() {
		forNs := int64(seg.For)
		if forNs == 0 { // a constant rate: one segment for the whole run
			forNs = durNs
		}
		segs = append(segs, segment{forNs: forNs, rate: float64(seg.Rate)})
	}
	start := c.Start.UnixMicro()
	// A part that is off (no delay, no retries, no bad clocks, no
	// heartbeats) is left out of the pipeline rather than passed through.
	orig := newOriginals(segs, start, durNs, w.Customers, c.Seed)
	g.stages = append(g.stages, orig)
	if d := w.ArrivalDelay; !(d.Kind == "" || d.Kind == randvar.KindConstant && d.Value == 0) {
		src := newStream(c.Seed, partArrivalDelay)
		g.stages = append(g.stages, newArrivalDelay(g.top(), newSampler(d, rand.New(src)), src))
	}
	g.stages = append(g.stages, &numbering{in: g.top(), events: g.events, ids: ids})
	if w.Retries.Probability > 0 {
		g.retries = newRetries(g.top(), &w.Retries, c.Seed)
		g.stages = append(g.stages, g.retries)
	}
	if w.FutureTimestamps.Probability > 0 {
		g.stages = append(g.stages, newBadClock(g.top(), &w.FutureTimestamps, c.Seed))
	}
	if len(c.BadClockRows) > 0 {
		g.stages = append(g.stages, newInjected(g.top(), c.BadClockRows, start, w.Customers, ids, g.events, c.Seed))
	}
	if every := w.Heartbeat.Micros(); every > 0 {
		g.stages = append(g.stages, newHeartbeats(g.top(), every, start, orig.endMicros, g.events, ids))
	}
	return g, nil
}

// top returns the outermost stage.
func (g *Generator) top() stage { return g.stages[len(g.stages)-1] }

// Next writes the next row into r and reports whether there was one. Rows
// come in non-decreasing Arrival order; rows of the same microsecond come
// in increasing Truth.Event order (copies of older events, then the
// original or heartbeat created at that instant). After warm-up it does
// not allocate.
func (g *Generator) Next(r *Row) bool { return g.top().next(r) }

// NextArrival returns the Arrival of the row Next would return, without
// consuming it, and false when the stream has ended. The executor can use
// it to close a micro-batch without holding a row back.
func (g *Generator) NextArrival() (int64, bool) { return g.top().peek() }

// IDs returns the form of the event_id column of the rows.
func (g *Generator) IDs() IDKind { return g.ids }

// Events returns the number of logical events created so far (originals
// and heartbeats): the next row that starts an event gets this number.
func (g *Generator) Events() uint64 { return g.events.next }

// Pending returns the number of events with copies still to arrive: the
// generator's memory is proportional to it.
func (g *Generator) Pending() int {
	if g.retries == nil {
		return 0
	}
	return len(g.retries.queue)
}

// State returns the generator's exact position: its random streams, its
// pending copies and its counters. A generator of the same scenario
// restored from it (Restore) produces the same remaining rows as this one,
// so a killed run can resume.
func (g *Generator) State() ([]byte, error) {
	e := &encoder{buf: []byte(stateMagic)}
	e.u64(g.fingerprint)
	e.u64(g.events.next)
	for _, s := range g.stages {
		s.save(e)
	}
	return e.buf, nil
}

// Restore moves g to the position State recorded. The state must come
// from a generator of the same scenario (same seed, start, duration and
// workload); otherwise, or if the state is corrupt, Restore returns an
// error and leaves g as it was.
func (g *Generator) Restore(state []byte) error {
	body, ok := bytes.CutPrefix(state, []byte(stateMagic))
	if !ok {
		return errors.New("generators: restore: not a generator state (or a different format version)")
	}
	fresh, err := New(g.cfg)
	if err != nil {
		return err
	}
	d := &decoder{buf: body}
	if fp := d.u64(); d.err == nil && fp != fresh.fingerprint {
		return errors.New("generators: restore: the state is of a different scenario (seed, start, duration or workload differ)")
	}
	fresh.events.next = d.u64()
	for _, s := range fresh.stages {
		s.load(d)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail(fmt.Errorf("%d bytes left over", len(d.buf)))
	}
	if d.err != nil {
		return fmt.Errorf("generators: restore: %w", d.err)
	}
	*g = *fresh
	return nil
}

// fingerprint identifies what a generator's rows depend on: the seed,
// start, duration and workload (with the values of empirical samples).
func fingerprint(c *Config) (uint64, error) {
	b, err := json.Marshal(struct {
		Seed         uint64
		Start        int64
		Duration     interval.Duration
		Workload     Workload
		BadClockRows []BadClockRow `json:",omitempty"`
	}{c.Seed, c.Start.UnixMicro(), c.Duration, c.Workload, c.BadClockRows})
	if err != nil {
		return 0, err
	}
	h := fnv1a(string(b))
	w := &c.Workload
	for _, d := range []randvar.Spec{w.ArrivalDelay, w.Retries.Copies, w.Retries.Delay, w.FutureTimestamps.Skew} {
		for _, v := range d.Samples {
			h = (h ^ math.Float64bits(v)) * 0x100000001b3
		}
	}
	return h, nil
}
