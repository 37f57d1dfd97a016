package metrics

import (
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim"
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
// logical event number. Events are numbered in creation order and finish
// roughly in that order, so a ring from the oldest unfinished event to the
// newest seen one holds them: its size follows the rows in flight, never the
// length of the run.
type eventWindow struct {
	buf   []eventState
	start int    // ring index of base
	base  uint64 // oldest unfinished event
	n     int    // events from base to the newest seen
}

func (w *eventWindow) get(e uint64) *eventState {
	if e < w.base {
		// Every copy of an event below base has been counted already.
		panic("metrics: a row of a finished logical event arrived; the generator's Copies is wrong")
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
	for i := 0; i < w.n; i++ {
		nb[i] = w.buf[(w.start+i)&(len(w.buf)-1)]
	}
	w.buf, w.start = nb, 0
}

// advance drops finished events from the front of the window.
func (w *eventWindow) advance() {
	mask := len(w.buf) - 1
	for w.n > 0 {
		s := &w.buf[w.start]
		if !s.known || s.seen < s.copies {
			return
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
	FalseDropsCollide  int64
	DroppedByWatermark int64
	DroppedDuplicates  int64
}

// Observe accounts for one batch: rows and the outcome of each.
func (a *Accountant) Observe(rows []generators.Row, outcomes []sim.Outcome) {
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
		case sim.Emitted:
			a.EmittedRows++
			if ev.emitted > 0 {
				a.MissedDuplicates++
			}
			ev.emitted++
		case sim.DroppedLate:
			a.DroppedByWatermark++
			ev.late++
		case sim.DroppedDuplicate:
			a.DroppedDuplicates++
		}
		if ev.seen == ev.copies && ev.emitted == 0 {
			a.FalseDrops++
			if ev.late == ev.copies {
				a.FalseDropsLate++
			} else {
				a.FalseDropsCollide++
			}
		}
	}
	a.win.advance()
}

// Pending returns the number of logical events with copies still to come.
func (a *Accountant) Pending() int { return a.win.n }
