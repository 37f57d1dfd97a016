package generators

// numbering gives each original its logical event number as it passes,
// which is when it is emitted: the stages outside it pull a row only to
// emit it. With integer ids the number is also the event_id; with UUIDs
// (ids set) the event_id is the number enciphered.
type numbering struct {
	in     stage
	events *counter
	ids    *uuidCipher
}

func (n *numbering) peek() (int64, bool) { return n.in.peek() }

func (n *numbering) next(r *Row) bool {
	if !n.in.next(r) {
		return false
	}
	r.Truth.Event = n.events.take()
	if n.ids != nil {
		n.ids.uuidFor(&r.EventID, r.Truth.Event)
	} else {
		r.EventNum = int64(r.Truth.Event)
	}
	return true
}

func (n *numbering) save(*encoder) {}
func (n *numbering) load(*decoder) {}
