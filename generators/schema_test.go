package generators

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestKeyRoundTrip encodes keys of generated rows (Batch.AppendKey) for
// several sets of columns, with UUID and integer event ids, and decodes
// them back (KeyLayout): every value comes back as the row holds it.
func TestKeyRoundTrip(t *testing.T) {
	colSets := [][]int{
		{ColEventID},
		{ColEventID, ColEventTime},
		{ColCustomerID},
		{ColEventTime, ColEventID, ColAttempt},
		{ColEventID, ColCustomerID, ColEventTime, ColIngestTime, ColAttempt, ColPayload},
		{ColEventID, ColEventID},
	}
	for _, ids := range []IDForm{UUIDs, Ints} {
		c := mixed(7)
		c.Workload.IDs = ids
		g := mustNew(t, c)
		b := Batch{IDs: ids.Kind(), Rows: all(g)[:2000]}
		for _, cols := range colSets {
			var l KeyLayout
			for i := range b.Rows {
				key := b.AppendKey(nil, i, cols)
				if i == 0 {
					var err error
					if l, err = NewKeyLayout(cols, len(key)); err != nil {
						t.Fatalf("%s ids, columns %v: %v", ids, cols, err)
					}
				}
				if got, want := l.Decode(key), rowValues(&b.Rows[i], b.IDs, cols); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s ids, columns %v, row %d: decoded %v, want %v", ids, cols, i, got, want)
				}
			}
		}
	}
}

// rowValues returns the values of cols of r as KeyLayout.Decode gives
// them.
func rowValues(r *Row, ids IDKind, cols []int) []any {
	var out []any
	for _, c := range cols {
		switch c {
		case ColEventID:
			if ids == UUIDIDs {
				out = append(out, string(r.EventID[:]))
			} else {
				out = append(out, r.EventNum)
			}
		case ColCustomerID:
			out = append(out, r.CustomerID)
		case ColEventTime:
			out = append(out, r.EventTime)
		case ColIngestTime:
			out = append(out, r.IngestTime)
		case ColAttempt:
			out = append(out, r.Attempt)
		case ColPayload:
			out = append(out, r.Payload)
		}
	}
	return out
}

// TestKeyLayoutOrderAndLengths checks that sort keys order integer
// columns by value, negative ones included, and that a key of a length
// no layout gives is refused.
func TestKeyLayoutOrderAndLengths(t *testing.T) {
	cols := []int{ColEventID, ColEventTime}
	ints := Batch{IDs: IntIDs, Rows: []Row{{EventNum: 5, EventTime: -3}, {EventNum: -1, EventTime: 7}, {EventNum: 5, EventTime: -4}}}
	var keys [][]byte
	for i := range ints.Rows {
		keys = append(keys, ints.AppendKey(nil, i, cols))
	}
	l, err := NewKeyLayout(cols, len(keys[0]))
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := l.SortKey(nil, keys[0]), l.SortKey(nil, keys[1]), l.SortKey(nil, keys[2])
	// -1 before 5; at the same id, -4 before -3.
	if !(bytes.Compare(b, c) < 0 && bytes.Compare(c, a) < 0) {
		t.Fatal("sort keys do not order by value")
	}
	if _, err := NewKeyLayout(cols, 20); err == nil || !strings.Contains(err.Error(), "20 bytes") || !strings.Contains(err.Error(), "event_id, event_time") {
		t.Fatalf("a key of no layout: %v", err)
	}
	if _, err := NewKeyLayout([]int{ColCustomerID}, 9); err == nil {
		t.Fatal("a 9-byte customer_id key was accepted")
	}
	l, err = NewKeyLayout([]int{ColCustomerID}, 8)
	if err != nil || !slices.Equal(l.Decode(binary.BigEndian.AppendUint64(nil, 42)), []any{int64(42)}) {
		t.Fatalf("customer_id: %v", err)
	}
}
