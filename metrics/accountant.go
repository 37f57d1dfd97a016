package metrics

import (
	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
)

// eventState is the ground-truth bookkeeping of one logical event while
// copies of it may still arrive.
type eventState struct {
	seen    uint32 // copies processed
	late    uint32 // copies dropped behind the watermark
	emitted uint32 // copies emitted
	copies  uint32 // copies in all (from the generator's truth)
	known   bool   // a copy has been seen
}

// eventWindow holds the events that still have copies to come, indexed by
// logical event number. Events are numbered in creation order and most
// finish soon after, so a ring from the oldest unfinished event to the
// newest seen one holds them. A few events have a copy that comes back
// hours later (a long retry tail); rather than let one of them stretch the
// ring over every event since, the ring is capped at limit events and an
// unfinished event that falls off its front moves to a small map of
// stragglers. Memory then follows the rows in flight, never the run length.
type eventWindow struct {
	buf   []eventState
	start int    // ring index of base
	base  uint64 // oldest event in the ring
	n     int    // events from base to the newest seen
	// limit caps n; 0 means defaultWindow.
	limit      int
	stragglers map[uint64]*eventState
}

// defaultWindow is the ring's cap: 2^20 events (20 MiB), minutes of
// traffic at tens of thousands of events per second.
const defaultWindow = 1 << 20

func (w *eventWindow) get(e uint64) *eventState {
	if e < w.base {
		s, ok := w.stragglers[e]
		if !ok {
			// Every copy of a finished event has been counted already.
			panic("metrics: a row of a finished logical event arrived; the generator's Copies is wrong")
		}
		return s
	}
	off := int(e - w.base)
	if off >= w.n {
		if off >= len(w.buf) {
			w.grow(off + 1)
		}
		w.n = off + 1
	}
	return &w.buf[(w.start+off)&(len(w.buf)-1)]
}

func (w *eventWindow) grow(need int) {
	size := len(w.buf)
	if size == 0 {
		size = 1024
	}
	for size < need {
		size *= 2
	}
	nb := make([]eventState, size)
	if w.n > 0 {
		// The ring's contents in order: the part from start, then the
		// part that wrapped around.
		k := copy(nb, w.buf[w.start:min(w.start+w.n, len(w.buf))])
		copy(nb[k:w.n], w.buf)
	}
	w.buf, w.start = nb, 0
}

// finished reports whether every copy of the event has been seen.
func (s *eventState) finished() bool { return s.known && s.seen >= s.copies }

// advance drops finished events from the front of the window, and moves
// unfinished ones to the stragglers while the ring is over its cap.
func (w *eventWindow) advance() {
	limit := w.limit
	if limit <= 0 {
		limit = defaultWindow
	}
	mask := len(w.buf) - 1
	for w.n > 0 {
		s := &w.buf[w.start]
		if !s.finished() {
			if w.n <= limit {
				return
			}
			if w.stragglers == nil {
				w.stragglers = map[uint64]*eventState{}
			}
			c := *s
			w.stragglers[w.base] = &c
		}
		*s = eventState{}
		w.start = (w.start + 1) & mask
		w.base++
		w.n--
	}
}

// Accountant compares one query's outcomes with ground truth. It reads the
// truth the generator attached to each row; the engines never see it.
type Accountant struct {
	win eventWindow

	InputRows          int64
	LogicalEvents      int64
	TrueDuplicates     int64
	EmittedRows        int64
	MissedDuplicates   int64
	FalseDrops         int64
	FalseDropsLate     int64
	FalseDropsBadClock int64
	FalseDropsCollide  int64
	DroppedByWatermark int64
	DroppedDuplicates  int64
}

// Observe accounts for one batch: rows and the outcome of each, in a
// batch whose watermark was not ahead of the clock (see ObserveBatch).
func (a *Accountant) Observe(rows []generators.Row, outcomes []engines.Outcome) {
	a.ObserveBatch(rows, outcomes, false)
}

// ObserveBatch accounts for one batch: rows and the outcome of each.
// watermarkAhead says that the batch's late-filter watermark was ahead of
// its processing time minus the query's delay, which only a row stamped in
// the future can cause (every other row's event time is at or before its
// arrival). An event lost to late drops whose last copy dropped as late
// was dropped in such a batch is a bad-clock loss (FalseDropsBadClock);
// any other event all of whose copies were dropped as late is a late loss
// (FalseDropsLate).
//
// Worked example (delay 10m): a bad row stamped 30m ahead arrives at
// 27:33; from the next batch the watermark is about 47:33 and the late
// filter drops a normal row stamped 28:00 in the batch at 28:10. The
// filter's watermark, 47:33, is ahead of 28:10 - 10m = 18:10: the row's
// event, if it has no other copy, is lost to the bad clock. The same row
// dropped at 28:10 by a watermark of 17:50 (a normal 10m lag) would be
// lost as late.
func (a *Accountant) ObserveBatch(rows []generators.Row, outcomes []engines.Outcome, watermarkAhead bool) {
	for i := range rows {
		t := &rows[i].Truth
		a.InputRows++
		if t.Copy > 0 {
			a.TrueDuplicates++
		}
		ev := a.win.get(t.Event)
		if !ev.known {
			ev.known = true
			ev.copies = t.Copies
			a.LogicalEvents++
		}
		ev.seen++
		switch outcomes[i] {
		case engines.Emitted:
			a.EmittedRows++
			if ev.emitted > 0 {
				a.MissedDuplicates++
			}
			ev.emitted++
		case engines.DroppedLate:
			a.DroppedByWatermark++
			ev.late++
		case engines.DroppedDuplicate:
			a.DroppedDuplicates++
		}
		if ev.seen == ev.copies {
			if ev.emitted == 0 {
				a.FalseDrops++
				switch {
				case ev.late == ev.copies && watermarkAhead:
					// Every copy was late, so the last one dropped as
					// late is this row, dropped in this batch.
					a.FalseDropsBadClock++
				case ev.late == ev.copies:
					a.FalseDropsLate++
				default:
					a.FalseDropsCollide++
				}
			}
			if t.Event < a.win.base {
				delete(a.win.stragglers, t.Event)
			}
		}
	}
	a.win.advance()
}

// Skip records a row of logical event e that is not the accountant's to
// count: a part of a run split by key reads every row but counts only its
// own events' (sim/runner's KeyShard), and skips the others'. A skipped
// event is finished at once (known, no copy to come), so the window drops
// it as it drops a finished event: without it the other parts' events
// would never finish and would pile up among the stragglers.
func (a *Accountant) Skip(e uint64) {
	if e < a.win.base {
		return // dropped from the window already
	}
	a.win.get(e).known = true
}

// Pending returns the number of logical events the accountant holds: those
// with copies still to come, and finished ones not yet dropped from the
// front of its window.
func (a *Accountant) Pending() int { return a.win.n + len(a.win.stragglers) }
