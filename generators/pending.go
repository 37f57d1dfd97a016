package generators

// pendingCopy is an event with copies still to arrive: one entry per
// event, however many copies it has left, so the queue's size is the
// number of events in flight.
type pendingCopy struct {
	// at is the arrival of the event's next copy.
	at int64
	// copy is that copy's number (1 for the first resend).
	copy uint32
	// orig is the original row as it was emitted; copies are made from it.
	orig Row
}

// pendingQueue is a binary min-heap of pending copies ordered by (at,
// event). Each event has one entry, so the order is total and the heap's
// shape never decides which of two rows comes first. It is written out
// rather than through container/heap, whose interface would box each
// entry.
type pendingQueue []pendingCopy

func (q pendingQueue) less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].orig.Truth.Event < q[j].orig.Truth.Event
}

// push adds c.
func (q *pendingQueue) push(c pendingCopy) {
	*q = append(*q, c)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// popMin removes the first entry.
func (q *pendingQueue) popMin() {
	h := *q
	last := len(h) - 1
	h[0] = h[last]
	h[last] = pendingCopy{}
	*q = h[:last]
	q.down(0)
}

// down restores the heap order below i after h[i] grew.
func (q pendingQueue) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(q) {
			return
		}
		m := l
		if r := l + 1; r < len(q) && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			return
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
}
