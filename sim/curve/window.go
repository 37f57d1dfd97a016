package curve

// window holds the events whose copies are still arriving, by logical
// event number (dense, in creation order), as metrics.Accountant's
// window does: a ring from the oldest unfinished event to the newest
// seen, capped, the unfinished events that fall off its front moving to
// a small map. Memory follows the rows in flight, not the run length.
type window[E any] struct {
	buf   []slot[E]
	start int    // ring index of base
	base  uint64 // oldest event in the ring
	n     int    // events from base to the newest seen
	// stragglers hold unfinished events older than base.
	stragglers map[uint64]*E
}

type slot[E any] struct {
	ev   *E
	done bool
}

// windowCap caps the ring's events.
const windowCap = 1 << 20

// get returns event e (nil when not seen yet).
func (w *window[E]) get(e uint64) *E {
	if e < w.base {
		ev, ok := w.stragglers[e]
		if !ok {
			panic("curve: a row of a finished logical event arrived; the generator's Copies is wrong")
		}
		return ev
	}
	off := int(e - w.base)
	if off >= w.n {
		if off >= len(w.buf) {
			w.grow(off + 1)
		}
		w.n = off + 1
	}
	return w.buf[(w.start+off)&(len(w.buf)-1)].ev
}

// set makes ev event e's (e is in the ring or a straggler).
func (w *window[E]) set(e uint64, ev *E) {
	if e < w.base {
		w.stragglers[e] = ev
		return
	}
	w.buf[(w.start+int(e-w.base))&(len(w.buf)-1)].ev = ev
}

// finish marks event e done.
func (w *window[E]) finish(e uint64) {
	if e < w.base {
		delete(w.stragglers, e)
		return
	}
	s := &w.buf[(w.start+int(e-w.base))&(len(w.buf)-1)]
	s.ev, s.done = nil, true
}

func (w *window[E]) grow(need int) {
	size := len(w.buf)
	if size == 0 {
		size = 1024
	}
	for size < need {
		size *= 2
	}
	nb := make([]slot[E], size)
	if w.n > 0 {
		k := copy(nb, w.buf[w.start:min(w.start+w.n, len(w.buf))])
		copy(nb[k:w.n], w.buf)
	}
	w.buf, w.start = nb, 0
}

// advance drops finished events from the front, and moves unfinished
// ones to the stragglers while the ring is over its cap.
func (w *window[E]) advance() {
	mask := len(w.buf) - 1
	for w.n > 0 {
		s := &w.buf[w.start]
		if !s.done {
			if w.n <= windowCap {
				return
			}
			// Unseen events too (nil): their rows may come.
			if w.stragglers == nil {
				w.stragglers = map[uint64]*E{}
			}
			w.stragglers[w.base] = s.ev
		}
		*s = slot[E]{}
		w.start = (w.start + 1) & mask
		w.base++
		w.n--
	}
}

// each calls f with every unfinished event.
func (w *window[E]) each(f func(*E)) {
	for i := 0; i < w.n; i++ {
		if s := w.buf[(w.start+i)&(len(w.buf)-1)]; s.ev != nil {
			f(s.ev)
		}
	}
	for _, ev := range w.stragglers {
		if ev != nil {
			f(ev)
		}
	}
}
