package flink

// RocksDB state bytes: an estimate of the bytes one ValueState entry
// takes in RocksDB (EmbeddedRocksDBStateBackend), read from the
// serializers Flink writes it with (flink-runtime, flink-table-runtime and
// flink-statebackend-rocksdb 2.0.2 and 2.3.0) and RocksDB's block-based
// table format. docs/flink.md ("State bytes") shows the arithmetic. It is
// an estimate: the serialized key and value are exact for the rows they
// are given, the per-entry overhead is not (RocksDB's data blocks share
// key prefixes, its compression, Snappy by default, shrinks the blocks,
// and a key written several times is held once per version until a
// compaction merges them).
const (
	// rocksKeyGroupPrefix is the key group written before the key
	// (SerializedCompositeKeyBuilder): one byte at a max parallelism of
	// at most 128 (KeyGroupRangeAssignment's default at parallelism 1).
	rocksKeyGroupPrefix = 1
	// rocksRowLength is the int BinaryRowDataSerializer writes before a
	// row's bytes (the key row and a keep-last or rowtime row value).
	rocksRowLength = 4
	// rocksNamespace is VoidNamespaceSerializer's one byte; the key
	// serializer is not fixed-length but the namespace's is, so no key
	// length follows the key (RocksDBKeySerializationUtils
	// .isAmbiguousKeyPossible is false).
	rocksNamespace = 1
	// rocksTTLTimestamp is TtlSerializer's lastAccessTimestamp, a long
	// written before the user value (the compaction filter reads it at
	// offset 0).
	rocksTTLTimestamp = 8
	// rocksFlag is BooleanSerializer's byte (keep-first's flag).
	rocksFlag = 1
	// RocksInternalKeyBytes is RocksDB's internal key suffix: a 7-byte
	// sequence number and a 1-byte value type, packed in 8 bytes.
	RocksInternalKeyBytes = 8
	// RocksBlockOverheadBytes is the estimated per-entry overhead of a
	// data block: three varints (shared key length, unshared key length,
	// value length; one byte each below 128) and a 4-byte restart point
	// every 16 entries, rounded up. Index blocks (one entry per 4 KiB
	// block) and filters (none by default in Flink) are left out.
	RocksBlockOverheadBytes = 4
)

// RocksKeyBytes returns the serialized key of an entry whose key row is
// keyRowBytes long (BinaryRowBytes): key group, row length, row,
// namespace.
func RocksKeyBytes(keyRowBytes int) int64 {
	return int64(rocksKeyGroupPrefix + rocksRowLength + keyRowBytes + rocksNamespace)
}

// RocksValueBytes returns the serialized value of an entry: a row of
// rowBytes (BinaryRowBytes) when the state holds the row (keep-last and
// the rowtime changelog functions), else keep-first's Boolean flag;
// behind the TTL timestamp when TTL is on.
func RocksValueBytes(holdsRow bool, rowBytes int, ttl bool) int64 {
	n := int64(rocksFlag)
	if holdsRow {
		n = int64(rocksRowLength + rowBytes)
	}
	if ttl {
		n += rocksTTLTimestamp
	}
	return n
}

// RocksEntryBytes returns the estimated bytes of one entry in an SST
// data block: serialized key and value, the internal key suffix and the
// block overhead (uncompressed).
func RocksEntryBytes(keyBytes, valueBytes int64) int64 {
	return keyBytes + valueBytes + RocksInternalKeyBytes + RocksBlockOverheadBytes
}
