package generators

// numbering gives each original its logical event number as it passes,
// which is when it is emitted: the stages outside it pull a row only to
// emit it. With integer ids the number is also the event_id.
type numbering struct {
	in     stage
	events *counter
	ints   bool
}

func (n *numbering) peek() (int64, bool) { return n.in.peek() }

func (n *numbering) next(r *Row) bool {
	if !n.in.next(r) {
		return false
	}
	r.Truth.Event = n.events.take()
	if n.ints {
		r.EventNum = int64(r.Truth.Event)
	}
	return true
}

func (n *numbering) save(*encoder) {}
func (n *numbering) load(*decoder) {}
