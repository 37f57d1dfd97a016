package generators

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The row schema: the columns of a generated row, and how a state key
// made of some of them is encoded and decoded. It is defined here and
// nowhere else; the query planner sees it through sim/scenario.Schema.

// Column indexes of a generated row, in schema order.
const (
	ColEventID = iota
	ColCustomerID
	ColEventTime
	ColIngestTime
	ColAttempt
	ColPayload
	NumColumns
)

// Column is one column of a generated row.
type Column struct {
	// Name is the column's name, as queries name it.
	Name string
	// Timestamp is set for the event-time columns (Spark's TimestampType):
	// event_time and ingest_time, in microseconds since the epoch.
	Timestamp bool
}

// Columns returns the columns of a generated row, in schema order.
func Columns() []Column {
	return []Column{
		{Name: "event_id"},
		{Name: "customer_id"},
		{Name: "event_time", Timestamp: true},
		{Name: "ingest_time", Timestamp: true},
		{Name: "attempt"},
		{Name: "payload"},
	}
}

// uuidLen is the width of a UUID event_id in a key.
const uuidLen = 36

// appendKey appends the values of cols of r to dst: a UUID event_id as
// its 36 bytes of text, every other column (an integer event_id, a
// timestamp in microseconds, a number) as 8 big-endian bytes.
func appendKey(dst []byte, r *Row, ids IDKind, cols []int) []byte {
	for _, c := range cols {
		switch c {
		case ColEventID:
			if ids == UUIDIDs {
				dst = append(dst, r.EventID[:]...)
			} else {
				dst = binary.BigEndian.AppendUint64(dst, uint64(r.EventNum))
			}
		case ColCustomerID:
			dst = binary.BigEndian.AppendUint64(dst, uint64(r.CustomerID))
		case ColEventTime:
			dst = binary.BigEndian.AppendUint64(dst, uint64(r.EventTime))
		case ColIngestTime:
			dst = binary.BigEndian.AppendUint64(dst, uint64(r.IngestTime))
		case ColAttempt:
			dst = binary.BigEndian.AppendUint64(dst, uint64(r.Attempt))
		case ColPayload:
			dst = binary.BigEndian.AppendUint64(dst, uint64(r.Payload))
		}
	}
	return dst
}

// KeyLayout is how a state key of some columns of a generated row splits
// into them (see Batch.AppendKey). A key does not say which form its
// event_id has; NewKeyLayout infers it from the key's length.
type KeyLayout struct {
	cols  []int
	width []int
	size  int
}

// NewKeyLayout returns the layout of keys of the columns cols (schema
// indexes, in key order) that are n bytes long: the only unknown, whether
// event_id is a UUID or an integer, follows from n. A length that no form
// gives is an error naming the columns.
func NewKeyLayout(cols []int, n int) (KeyLayout, error) {
	l := KeyLayout{cols: cols}
	fixed, ids := 0, 0
	for _, c := range cols {
		if c == ColEventID {
			ids++ // a key may name it twice: ["event_id", "EVENT_ID"]
		} else {
			fixed += 8
		}
	}
	idWidth := 0
	if ids > 0 {
		if rest := n - fixed; rest == ids*uuidLen || rest == ids*8 {
			idWidth = rest / ids
		} else {
			return l, fmt.Errorf("a key of %d bytes matches no encoding of columns %s", n, columnNames(cols))
		}
	} else if n != fixed {
		return l, fmt.Errorf("a key of %d bytes, columns %s take %d", n, columnNames(cols), fixed)
	}
	for _, c := range cols {
		w := 8
		if c == ColEventID {
			w = idWidth
		}
		l.width = append(l.width, w)
	}
	l.size = n
	return l, nil
}

// Size returns the length of the layout's keys.
func (l KeyLayout) Size() int { return l.size }

// Decode splits key, of the layout's size, into its columns' values, in
// key order: a UUID event_id as a string, every other column as an int64
// (a timestamp in microseconds since the epoch).
func (l KeyLayout) Decode(key []byte) []any {
	out := make([]any, len(l.cols))
	off := 0
	for i, c := range l.cols {
		w := l.width[i]
		f := key[off : off+w]
		off += w
		if c == ColEventID && w == uuidLen {
			out[i] = string(f)
		} else {
			out[i] = int64(binary.BigEndian.Uint64(f))
		}
	}
	return out
}

// SortKey returns key with the sign bit of every 8-byte column flipped, so
// that byte order is the order of the column values (integers and
// timestamps as signed numbers, UUIDs as text). It reuses dst.
func (l KeyLayout) SortKey(dst, key []byte) []byte {
	dst = append(dst[:0], key...)
	off := 0
	for _, w := range l.width {
		if w == 8 {
			dst[off] ^= 0x80
		}
		off += w
	}
	return dst
}

// columnNames renders the names of cols for messages.
func columnNames(cols []int) string {
	names := make([]string, len(cols))
	all := Columns()
	for i, c := range cols {
		names[i] = all[c].Name
	}
	return strings.Join(names, ", ")
}
