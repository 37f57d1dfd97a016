package kstreams

import "sort"

// TableRow is one row of a KTable's key-value store.
type TableRow struct {
	Key       string
	Value     string
	Timestamp int64
}

// Table is keep-last: stream.toTable(Materialized.as(store)), a KTable
// source over a timestamped key-value store, with no record cache. Every
// record overwrites its key's row and is forwarded downstream, whatever its
// value and timestamp: an identical copy, and a copy older than the stored
// row, both pass (measured on Kafka Streams 4.4 by oracles/kafka-streams;
// the idempotent-update skip of KIP-557, ValueAndTimestampSerializer's
// valuesAreSameAndTimeIsIncreasing, does not apply here). The store never
// expires anything, so it holds every key ever seen.
//
// Worked example: a="x"@10 is stored and forwarded; a="x"@20 replaces it
// and is forwarded; a="x"@5 replaces it too (the row goes back in time).
type Table struct {
	rows map[string]TableRow
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{rows: map[string]TableRow{}} }

// Process upserts one record and reports whether it was forwarded: always.
func (t *Table) Process(key, value string, ts int64) bool {
	t.rows[key] = TableRow{Key: key, Value: value, Timestamp: ts}
	return true
}

// Rows returns the table's rows sorted by key.
func (t *Table) Rows() []TableRow {
	out := make([]TableRow, 0, len(t.rows))
	for _, r := range t.rows {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
