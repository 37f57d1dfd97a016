package generators

// stage is one part of the generator pipeline. Stages wrap one another:
// each pulls rows from the stage it wraps, in arrival order, and changes,
// adds or holds them back. peek lets a stage merge its own rows (pending
// copies, heartbeats) with its input's without consuming a row it is not
// ready to emit, so that an event is numbered only when it is emitted.
type stage interface {
	// peek returns the arrival time of the row next would write, and
	// false when the stage has no rows left.
	peek() (arrival int64, ok bool)
	// next writes the next row into r and reports whether there was one.
	next(r *Row) bool
	// save appends the stage's position (its random streams, its queue,
	// its counters) to e; load restores it.
	save(e *encoder)
	load(d *decoder)
}

// counter hands out logical event numbers, densely in creation order. It
// is shared by the stages that create events (numbering of originals, and
// heartbeats), so that originals and heartbeats share one sequence.
type counter struct{ next uint64 }

// take returns the next event number.
func (c *counter) take() uint64 {
	n := c.next
	c.next++
	return n
}
