package generators

import (
	"math/rand/v2"
)

// badClock gives rows the event time of a clock running ahead: each row
// (original or copy, independently) with probability
// futureTimestamps.probability gets event_time = its arrival + a
// futureTimestamps.skew draw, and Truth.BadClock. One such row moves the
// watermark far ahead. Heartbeats, added outside this stage, never have a
// bad clock.
type badClock struct {
	in          stage
	probability float64
	src         *rand.PCG
	rng         *rand.Rand
	skew        sampler
}

func newBadClock(in stage, f *FutureTimestamps, seed uint64) *badClock {
	b := &badClock{in: in, probability: f.Probability, src: newStream(seed, partBadClock)}
	b.rng = rand.New(b.src)
	b.skew = newSampler(f.Skew, b.rng)
	return b
}

func (b *badClock) peek() (int64, bool) { return b.in.peek() }

func (b *badClock) next(r *Row) bool {
	if !b.in.next(r) {
		return false
	}
	if b.probability >= 1 || b.rng.Float64() < b.probability {
		r.EventTime = addMicros(r.Arrival, b.skew.micros())
		r.Truth.BadClock = true
	}
	return true
}

func (b *badClock) save(e *encoder) { e.pcg(b.src) }
func (b *badClock) load(d *decoder) { d.pcg(b.src) }
