package generators

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"slices"
)

// BadClockRow is one row a scenario's bad-clock fault injects into the
// stream: a new logical event that arrives at Start+At with an event time
// Skew ahead of its arrival. Being part of the generated stream, it is in
// every job's rows; its ground truth has BadClock set.
type BadClockRow struct {
	// At is the row's arrival, a processing-time offset from Start, within
	// (0, Duration].
	At int64 `json:"atMicros"`
	// Skew is how far ahead of its arrival the row's event time is, above
	// 0, in microseconds.
	Skew int64 `json:"skewMicros"`
	// Key is the key path the row came from in a scenario file
	// ("faults[2]"), which Check names in its problems; empty names the
	// row by its index in Config.BadClockRows.
	Key string `json:"-"`
}

// injected adds the bad-clock rows of a scenario's faults to the stream,
// each at its arrival: a new logical event (the next event number, Copies
// 1, Truth.BadClock) with a valid key of its own (a random UUID or the
// event number as event_id, a customer_id drawn in [0, customers), a
// random payload, all from the injected rows' own stream), event_time =
// arrival + skew, ingest_time = arrival, attempt 0. At the same
// microsecond as input rows it comes after them, so rows stay ordered by
// (arrival, event); heartbeats, added outside this stage, come after it.
type injected struct {
	in        stage
	rows      []BadClockRow // by arrival
	start     int64         // microseconds since the epoch
	customers int64
	ids       *uuidCipher
	events    *counter
	k         int // the next row to inject
	src       *rand.PCG
	rng       *rand.Rand
}

func newInjected(in stage, rows []BadClockRow, start, customers int64, ids *uuidCipher, events *counter, seed uint64) *injected {
	sorted := slices.SortedStableFunc(slices.Values(rows), func(a, b BadClockRow) int { return cmp.Compare(a.At, b.At) })
	s := &injected{in: in, rows: sorted, start: start, customers: customers, ids: ids, events: events,
		src: newStream(seed, partInjected)}
	s.rng = rand.New(s.src)
	return s
}

// choose returns the next row's arrival, whether it is an injected row,
// and whether there is a next row.
func (s *injected) choose() (at int64, inject, ok bool) {
	in, inOK := s.in.peek()
	if s.k >= len(s.rows) {
		return in, false, inOK
	}
	t := s.start + s.rows[s.k].At
	if inOK && in <= t {
		return in, false, true
	}
	return t, true, true
}

func (s *injected) peek() (int64, bool) {
	at, _, ok := s.choose()
	return at, ok
}

func (s *injected) next(r *Row) bool {
	t, inject, ok := s.choose()
	if !inject {
		return ok && s.in.next(r)
	}
	b := s.rows[s.k]
	*r = Row{
		CustomerID: s.rng.Int64N(s.customers),
		EventTime:  addMicros(t, b.Skew),
		IngestTime: t,
		Arrival:    t,
		Payload:    int64(s.rng.Uint64()),
		Truth:      Truth{Event: s.events.take(), Copies: 1, BadClock: true},
	}
	// Two draws, once the row's random UUID, are still taken, so that
	// the next injected row's customer and payload stay what they were.
	s.rng.Uint64()
	s.rng.Uint64()
	if s.ids != nil {
		s.ids.uuidFor(&r.EventID, r.Truth.Event)
	} else {
		r.EventNum = int64(r.Truth.Event)
	}
	s.k++
	return true
}

func (s *injected) save(e *encoder) {
	e.pcg(s.src)
	e.i64(int64(s.k))
}

func (s *injected) load(d *decoder) {
	d.pcg(s.src)
	s.k = int(d.i64())
	if s.k < 0 || s.k > len(s.rows) {
		s.k = 0
		d.fail(errors.New("injected bad-clock rows: position out of range"))
	}
}
