package generators

// heartbeats adds a synthetic row at every multiple of the heartbeat
// interval after start (start+h, start+2h, ...), as producers that keep
// the watermark moving through quiet periods do. A heartbeat at time T is
// emitted while originals are still being generated (T before
// start+duration) or rows are still to come after T (pending copies); once
// neither holds, heartbeats stop and the stream can end.
//
// A heartbeat row has event_time = ingest_time = arrival = T, attempt 0,
// payload 0 and customer_id -1 (outside [0, customers), so that a query
// keyed on customer_id never merges it with a real event). It is its own
// logical event (Copies 1, Truth.Heartbeat) with its own id: the next
// event number as an int id, or that number's UUID (distinct from every
// other id by construction: the numbers enciphered are distinct). At
// the same microsecond as other rows it comes last, which keeps rows
// ordered by (arrival, event).
type heartbeats struct {
	in     stage
	every  int64 // microseconds, above 0
	start  int64 // microseconds since the epoch
	end    int64 // end of the originals' window
	k      int64 // the next heartbeat is at start + k*every
	events *counter
	ids    *uuidCipher
}

func newHeartbeats(in stage, every, start, end int64, events *counter, ids *uuidCipher) *heartbeats {
	return &heartbeats{in: in, every: every, start: start, end: end, k: 1, events: events, ids: ids}
}

// choose returns the next row's arrival, whether it is a heartbeat, and
// whether there is a next row at all.
func (h *heartbeats) choose() (at int64, beat, ok bool) {
	in, inOK := h.in.peek()
	t := h.start + h.k*h.every
	switch {
	case inOK && in <= t:
		return in, false, true
	case inOK || t < h.end:
		return t, true, true
	}
	return 0, false, false
}

func (h *heartbeats) peek() (int64, bool) {
	at, _, ok := h.choose()
	return at, ok
}

func (h *heartbeats) next(r *Row) bool {
	t, beat, ok := h.choose()
	if !beat {
		return ok && h.in.next(r)
	}
	*r = Row{
		CustomerID: -1,
		EventTime:  t,
		IngestTime: t,
		Arrival:    t,
		Truth:      Truth{Event: h.events.take(), Copies: 1, Heartbeat: true},
	}
	if h.ids != nil {
		h.ids.uuidFor(&r.EventID, r.Truth.Event)
	} else {
		r.EventNum = int64(r.Truth.Event)
	}
	h.k++
	return true
}

func (h *heartbeats) save(e *encoder) {
	e.i64(h.k)
}

func (h *heartbeats) load(d *decoder) {
	h.k = d.i64()
}
