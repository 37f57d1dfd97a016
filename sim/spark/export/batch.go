package export

import (
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// cell is one value of a row, as a batch file holds it: a string's bytes,
// an integer (a long, an integer, a timestamp in microseconds, a boolean
// as 0 or 1) or a double, or null.
type cell struct {
	null bool
	i    int64
	f    float64
	s    []byte
}

// batch is one micro-batch to export: the rows the executor runs, which
// the batch file holds, value by value.
type batch interface {
	microbatch.Rows
	// cell fills dst with row i's value of column c (of the export's
	// columns). The bytes of a string stay valid until the next batch.
	cell(i, c int, dst *cell)
}

// Columns returns the columns of a generated row as an export writes
// them, in schema order: event_id (a string, or a long with ids: int),
// customer_id long, event_time and ingest_time timestamps, attempt
// integer, payload long; the types docs/scenario.md gives them.
func Columns(ids generators.IDKind) []Column {
	gen := generators.Columns()
	out := make([]Column, len(gen))
	for i, c := range gen {
		out[i] = Column{Name: c.Name, Type: Long}
		switch {
		case c.Timestamp:
			out[i].Type = Timestamp
		case i == generators.ColEventID && ids == generators.UUIDIDs:
			out[i].Type = String
		case i == generators.ColAttempt:
			out[i].Type = Integer
		}
	}
	return out
}

// genBatch is a batch of generated rows.
type genBatch struct {
	generators.Batch
}

func (b *genBatch) cell(i, c int, dst *cell) {
	r := &b.Rows[i]
	dst.null = false
	switch c {
	case generators.ColEventID:
		if b.IDs == generators.UUIDIDs {
			dst.s = r.EventID[:]
		} else {
			dst.i = r.EventNum
		}
	case generators.ColCustomerID:
		dst.i = r.CustomerID
	case generators.ColEventTime:
		dst.i = r.EventTime
	case generators.ColIngestTime:
		dst.i = r.IngestTime
	case generators.ColAttempt:
		dst.i = r.Attempt
	case generators.ColPayload:
		dst.i = r.Payload
	}
}

// HashKey implements microbatch.KeyHasher: a chain's later operators read a
// generated batch's rows in the order of Spark's partitions.
func (b *genBatch) HashKey(i int, cols []int) int32 {
	return microbatch.HashGenerated(&b.Rows[i], b.IDs, cols)
}
