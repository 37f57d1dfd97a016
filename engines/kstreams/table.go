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
//
// With Reduce, the table is groupByKey().reduce((old, new) -> new)
// (KStreamReduce): the same, except that the row and the forwarded record
// take the larger of the old row's and the record's timestamps, so a="x"@5
// after a="x"@20 is forwarded as a="x"@20.
type Table struct {
	rows   map[string]*TableRow
	reduce bool
}

// NewTable returns an empty table: toTable, or reduce if reduce is set.
func NewTable(reduce bool) *Table { return &Table{rows: map[string]*TableRow{}, reduce: reduce} }

// Process upserts one record and returns the record forwarded downstream
// (every record is forwarded).
func (t *Table) Process(key, value string, ts int64) TableRow {
	if old, ok := t.rows[key]; ok {
		if t.reduce {
			ts = max(ts, old.Timestamp)
		}
		*old = TableRow{Key: key, Value: value, Timestamp: ts}
		return *old
	}
	row := &TableRow{Key: key, Value: value, Timestamp: ts}
	t.rows[key] = row
	return *row
}

// Upsert is Process for a record whose value is not kept (a scenario's):
// it upserts key's row with timestamp ts and returns the forwarded
// record's timestamp. Only a new key allocates (its row).
func (t *Table) Upsert(key []byte, ts int64) int64 {
	if old, ok := t.rows[string(key)]; ok {
		if t.reduce {
			ts = max(ts, old.Timestamp)
		}
		old.Timestamp = ts
		return ts
	}
	k := string(key)
	t.rows[k] = &TableRow{Key: k, Timestamp: ts}
	return ts
}

// Len returns the table's rows: one per key ever seen.
func (t *Table) Len() int { return len(t.rows) }

// Rows returns the table's rows sorted by key.
func (t *Table) Rows() []TableRow {
	out := make([]TableRow, 0, len(t.rows))
	for _, r := range t.rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
