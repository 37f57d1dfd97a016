package metrics

import "github.com/dedupsim/dedupsim/generators"

// The state-size model of the memory store. dedupsim's own store is
// smaller; what users size is Spark's HDFSBackedStateStore, a
// ConcurrentHashMap[UnsafeRow, UnsafeRow] on a 64-bit JVM with compressed
// oops. One entry costs:
//
//   - the key UnsafeRow's bytes: an 8-byte null bitset per 64 fields, an
//     8-byte slot per field, and each string's bytes rounded up to 8;
//   - the value UnsafeRow's bytes: 16 for both operators (dedupe stores a
//     one-field null row, dedupeWithinWatermark one long, expiresAtMicros);
//   - EntryOverheadBytes of JVM objects around them.
//
// Spark also keeps the previous version's map in memory
// (spark.sql.streaming.maxBatchesToRetainInMemory = 2), so a JVM heap can
// hold up to about twice this between maintenance runs; the model counts
// one copy, the live state.
const (
	// EntryOverheadBytes is the JVM object overhead of one state entry:
	// a ConcurrentHashMap node (32 B), its share of the table (8 B), two
	// UnsafeRow objects (2 x 40 B) and two byte[] headers (2 x 16 B).
	EntryOverheadBytes = 32 + 8 + 2*40 + 2*16
	// ValueBytes is the UnsafeRow size of either operator's value.
	ValueBytes = 16
	uuidLen    = 36
)

// UnsafeRowBytes returns the size of a Spark UnsafeRow with nFields
// fixed-width fields and the given string lengths.
func UnsafeRowBytes(nFields int, stringLens ...int) int64 {
	n := int64(8*((nFields+63)/64) + 8*nFields)
	for _, l := range stringLens {
		n += int64((l + 7) / 8 * 8)
	}
	return n
}

// EntryBytes returns the modelled size of one state entry of a dedup
// operator over generated rows, keyed on the generated columns keyColumns
// (their indexes, generators.ColEventID and so on) with event ids of the
// given form. Both dedup operators store a value of ValueBytes, so the
// operator's kind does not change it: a UUID event_id is a 36-byte string,
// every other column a fixed-width field.
func EntryBytes(keyColumns []int, ids generators.IDKind) int64 {
	var strs []int
	for _, c := range keyColumns {
		if c == generators.ColEventID && ids == generators.UUIDIDs {
			strs = append(strs, uuidLen)
		}
	}
	return UnsafeRowBytes(len(keyColumns), strs...) + ValueBytes + EntryOverheadBytes
}
