package microbatch

import (
	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/generators"
)

// KeyHasher is implemented by rows that know the Spark types of their
// columns, so that the executor can place a row's key in a shuffle
// partition as Spark's HashPartitioning does (engines/spark/partition).
// Generated rows (*generators.Batch) are hashed by the executor itself
// (HashGenerated); other rows run on partitioned stores only if they
// implement it.
type KeyHasher interface {
	// HashKey returns Spark's Murmur3 hash (seed 42) of row i's values of
	// cols, folded in that order: engines/spark/partition's Seed, then one
	// fold per column by its Spark type.
	HashKey(i int, cols []int) int32
}

// HashGenerated returns Spark's Murmur3 hash (seed 42) of the values of
// cols of a generated row, folded in the order of cols, each by the Spark
// type a generated column has:
//
//	event_id      a UUID: StringType, its 36 bytes of text (partition.Bytes);
//	              an integer id: LongType (partition.Long)
//	customer_id   LongType
//	event_time    TimestampType, microseconds (partition.Timestamp)
//	ingest_time   TimestampType, microseconds
//	attempt       IntegerType (partition.Int), as docs/scenario.md types it
//	              and the export writes it (Parquet INT32, job.py's
//	              IntegerType): Spark hashes it with hashInt
//	payload       LongType
//
// A column index outside the schema leaves the hash unchanged. It
// allocates nothing.
func HashGenerated(row *generators.Row, ids generators.IDKind, cols []int) int32 {
	h := partition.Seed
	for _, c := range cols {
		switch c {
		case generators.ColEventID:
			if ids == generators.UUIDIDs {
				h = partition.Bytes(h, row.EventID[:])
			} else {
				h = partition.Long(h, row.EventNum)
			}
		case generators.ColCustomerID:
			h = partition.Long(h, row.CustomerID)
		case generators.ColEventTime:
			h = partition.Timestamp(h, row.EventTime)
		case generators.ColIngestTime:
			h = partition.Timestamp(h, row.IngestTime)
		case generators.ColAttempt:
			h = partition.Int(h, int32(row.Attempt))
		case generators.ColPayload:
			h = partition.Long(h, row.Payload)
		}
	}
	return h
}

// HashDecoded returns Spark's Murmur3 hash (seed 42) of a key decoded by
// generators.KeyLayout.Decode, whose values are those of the generated
// columns cols (schema indexes, in key order): each folds by the Spark
// type HashGenerated gives its column. A string value (a UUID event_id)
// folds as a StringType; an int64 as an IntegerType for attempt, else as
// a LongType, which Spark hashes as it hashes a timestamp. It is
// HashGenerated for keys read back from a store.
func HashDecoded(cols []int, values []any) int32 {
	h := partition.Seed
	for i, v := range values {
		switch x := v.(type) {
		case string:
			h = partition.String(h, x)
		case int64:
			if i < len(cols) && cols[i] == generators.ColAttempt {
				h = partition.Int(h, int32(x))
			} else {
				h = partition.Long(h, x)
			}
		}
	}
	return h
}

// rowHasher hashes the rows of one batch: generated rows directly, other
// rows through KeyHasher.
type rowHasher struct {
	gen *generators.Batch
	kh  KeyHasher
}

// hasherOf returns the hasher of rows, and false when rows cannot be
// hashed (neither generated rows nor a KeyHasher).
func hasherOf(rows Rows) (rowHasher, bool) {
	switch r := rows.(type) {
	case *generators.Batch:
		return rowHasher{gen: r}, true
	case KeyHasher:
		return rowHasher{kh: r}, true
	}
	return rowHasher{}, false
}

// hash returns the hash of row i's cols.
func (h rowHasher) hash(i int, cols []int) int32 {
	if h.gen != nil {
		return HashGenerated(&h.gen.Rows[i], h.gen.IDs, cols)
	}
	return h.kh.HashKey(i, cols)
}
