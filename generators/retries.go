package generators

import (
	"fmt"
	"math/rand/v2"
)

// retries resends originals, as producers do after a timeout. With
// probability retries.probability an original is resent; the number of
// extra copies is drawn from retries.copies when the original passes, so
// that its Truth.Copies is known on every one of its rows. Copy k arrives
// a retries.delay draw after copy k-1 (copy 0 being the original). A copy
// is the original's row with:
//
//   - Arrival: its own arrival; Truth.Copy: k.
//   - event_time: the original's (same); the original's plus the time
//     between the two arrivals (restamp: the producer stamps the resend,
//     so 10:00:00 becomes 10:00:01 a second later); or the original's
//     moved by a uniform whole number of microseconds in [-jitter, +jitter]
//     (jitter). "The original's" is the event time before any bad clock,
//     which is applied to every row afterwards, independently.
//   - attempt: k if attempt is among retries.metadata, else 0.
//   - ingest_time: the copy's own arrival if ingest_time is among
//     retries.metadata, else the original's arrival.
//
// Pending copies wait in a queue with one entry per event, and merge with
// the originals by (arrival, event): at the same microsecond, copies of
// older events come first.
type retries struct {
	in stage

	probability float64
	src         *rand.PCG // who is resent, and how many copies
	rng         *rand.Rand
	copies      sampler
	delaySrc    *rand.PCG
	delay       sampler
	mode        TimestampMode
	jitter      int64 // microseconds
	jitterSrc   *rand.PCG
	jitterRNG   *rand.Rand
	attempt     bool // attempt differs between copies
	ingest      bool // ingest_time differs between copies

	queue pendingQueue
}

func newRetries(in stage, r *Retries, seed uint64) *retries {
	s := &retries{
		in:          in,
		probability: r.Probability,
		src:         newStream(seed, partRetries),
		delaySrc:    newStream(seed, partRetryDelay),
		mode:        r.Timestamp,
		jitter:      r.Jitter.Micros(),
		jitterSrc:   newStream(seed, partJitter),
		attempt:     r.Varies(MetaAttempt),
		ingest:      r.Varies(MetaIngestTime),
	}
	s.rng = rand.New(s.src)
	s.copies = newSampler(r.Copies, s.rng)
	s.delay = newSampler(r.Delay, rand.New(s.delaySrc))
	s.jitterRNG = rand.New(s.jitterSrc)
	return s
}

// copyFirst reports whether the next row is a pending copy rather than
// the input's next original.
func (s *retries) copyFirst() bool {
	if len(s.queue) == 0 {
		return false
	}
	at, ok := s.in.peek()
	return !ok || s.queue[0].at <= at
}

func (s *retries) peek() (int64, bool) {
	if s.copyFirst() {
		return s.queue[0].at, true
	}
	return s.in.peek()
}

func (s *retries) next(r *Row) bool {
	if s.copyFirst() {
		s.emitCopy(r)
		return true
	}
	if !s.in.next(r) {
		return false
	}
	if s.probability >= 1 || s.rng.Float64() < s.probability {
		r.Truth.Copies = 1 + s.copies.count()
		s.queue.push(pendingCopy{at: addMicros(r.Arrival, s.delay.micros()), copy: 1, orig: *r})
	}
	return true
}

// emitCopy writes the first pending copy and schedules the event's next.
func (s *retries) emitCopy(r *Row) {
	c := &s.queue[0]
	*r = c.orig
	r.Arrival = c.at
	r.Truth.Copy = c.copy
	switch s.mode {
	case Restamp:
		r.EventTime = c.orig.EventTime + (c.at - c.orig.Arrival)
	case JitterTimestamp:
		r.EventTime = c.orig.EventTime + s.jitterRNG.Int64N(2*s.jitter+1) - s.jitter
	}
	if s.attempt {
		r.Attempt = int64(c.copy)
	}
	if s.ingest {
		r.IngestTime = c.at
	}
	if c.copy+1 < c.orig.Truth.Copies {
		c.copy++
		c.at = addMicros(c.at, s.delay.micros())
		s.queue.down(0)
		return
	}
	s.queue.popMin()
}

func (s *retries) save(e *encoder) {
	e.pcg(s.src)
	e.pcg(s.delaySrc)
	e.pcg(s.jitterSrc)
	e.u64(uint64(len(s.queue)))
	for i := range s.queue {
		e.i64(s.queue[i].at)
		e.u64(uint64(s.queue[i].copy))
		e.row(&s.queue[i].orig)
	}
}

func (s *retries) load(d *decoder) {
	d.pcg(s.src)
	d.pcg(s.delaySrc)
	d.pcg(s.jitterSrc)
	n := d.u64()
	// Each entry takes well over 100 bytes: a count beyond what is left
	// is corrupt, and must not size an allocation.
	if n > uint64(len(d.buf)/100) {
		d.fail(fmt.Errorf("pending copies: %d entries in %d bytes", n, len(d.buf)))
		return
	}
	s.queue = make(pendingQueue, n)
	for i := range s.queue {
		s.queue[i].at = d.i64()
		s.queue[i].copy = uint32(d.u64())
		d.row(&s.queue[i].orig)
	}
}
