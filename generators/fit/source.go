package fit

// Record is one row of an event log, as a Source yields it.
type Record struct {
	// ID is the event's id (valid until the next row) (the columns of a composite id joined); rows
	// with the same ID are copies of one event.
	ID []byte
	// EventTime is the producer's event time, in microseconds since the
	// epoch.
	EventTime int64
	// Arrival is the row's arrival (broker or ingestion) time, in
	// microseconds since the epoch. Rows come in arrival order.
	Arrival int64
	// Customer is the customer column's value (valid until the next
	// row); empty when the log has no such column.
	Customer []byte
}

// Source yields the rows of a log in arrival order.
type Source interface {
	// Next fills r with the next row and reports whether there was one;
	// an error ends the reading.
	Next(r *Record) (bool, error)
	// Close releases the source.
	Close() error
}

// Opener opens the log from its first row; Fit calls it once per pass.
type Opener func() (Source, error)

// Slice is a Source over rows held in memory (tests, small logs).
type Slice struct {
	Rows []Record
	i    int
}

// Next yields the next row of s.
func (s *Slice) Next(r *Record) (bool, error) {
	if s.i >= len(s.Rows) {
		return false, nil
	}
	*r = s.Rows[s.i]
	s.i++
	return true, nil
}

// Close does nothing.
func (s *Slice) Close() error { return nil }

// SliceOpener returns an Opener over rows.
func SliceOpener(rows []Record) Opener {
	return func() (Source, error) { return &Slice{Rows: rows}, nil }
}
