package sparkmodel

import (
	"math"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
)

// Shape is the size of one state entry of a dedup operator in Spark's
// encoding: the key and value UnsafeRows' bytes.
type Shape struct {
	// KeyBytes is the key UnsafeRow's size: an 8-byte null bitset per 64
	// fields, 8 bytes per field, each string's bytes rounded up to 8.
	KeyBytes int64
	// ValueBytes is the value UnsafeRow's size: 16 for both operators.
	ValueBytes int64
}

// ShapeOf returns the entry shape of a dedup operator keyed on the
// generated columns keyColumns with event ids of the given form: the
// state-bytes model of metrics (EntryBytes) without its JVM objects.
func ShapeOf(keyColumns []int, ids generators.IDKind) Shape {
	key := metrics.EntryBytes(keyColumns, ids) - metrics.ValueBytes - metrics.EntryOverheadBytes
	return Shape{KeyBytes: key, ValueBytes: metrics.ValueBytes}
}

// The HDFS-backed store's JVM objects, as metrics' state-bytes model
// counts them (64-bit JVM, compressed oops).
const (
	// HDFSMapEntryBytes is what one map holds per entry: a
	// ConcurrentHashMap node (32 B) and its share of the table (8 B).
	// Every loaded version of a store has its own map, so its own nodes.
	HDFSMapEntryBytes = 32 + 8
	// HDFSRowObjectBytes is the objects around one key/value pair: two
	// UnsafeRow objects (2 × 40 B) and two byte[] headers (2 × 16 B). A
	// new version's map is made by putAll of the previous one, so the
	// versions share these, and the rows' bytes.
	HDFSRowObjectBytes = 2*40 + 2*16
)

// HDFSStore follows one HDFS-backed state store (one dedup operator's
// partition) across batches: how many of its versions Spark's provider
// holds in memory. Spark 3.5's HDFSBackedStateStoreProvider keeps the
// last spark.sql.streaming.maxBatchesToRetainInMemory (2) committed
// versions in loadedMaps; a batch gets its store as a new map filled by
// putAll of the version it reads (getLoadedMapForStore), which shares
// the previous version's key and value rows but has its own map nodes;
// new keys are copies (put: key.copy(), value.copy()). So while batch k
// runs, the heap holds the maps of versions k-1 and k and the new map of
// version k+1.
type HDFSStore struct {
	// Cached is the number of committed versions in loadedMaps before the
	// batch's own load: 0 for a new store, up to 2.
	Cached int
	// PrevTotal is the store's keys after the last batch; PrevUpdated the
	// keys that batch added; PrevPrevTotal the keys after the batch
	// before it.
	PrevTotal, PrevUpdated, PrevPrevTotal int64
}

// Restart records that the query restarted from its checkpoint: Spark's
// provider starts with no loaded version, and the next batch loads the
// one it reads from the checkpoint (a cache miss), which it then keeps.
func (s *HDFSStore) Restart() { s.Cached = 0 }

// Batch returns the store's peak heap bytes while a batch runs, for a
// batch that stored updated keys, evicted removed keys and left total
// keys, and records the batch. version is the batch's store version (its
// batch id since the checkpoint was made: 0 for a new store).
//
// The peak is just before eviction, when the new map holds every key it
// read and every key the batch stored:
//
//	before    = total - updated + removed      keys of the version read
//	new map   = before + updated               entries
//	versions  = the version read (unless version 0), and the one before it
//	            when loadedMaps still holds it
//	rows      = distinct key/value pairs: the version before's keys, plus
//	            those the last batch added, plus this batch's new keys
//	heap      = rows × (key + value + HDFSRowObjectBytes)
//	          + entries of every map × HDFSMapEntryBytes
//
// Of that peak, the new map's entries, (before + updated) ×
// HDFSMapEntryBytes, exist only while the batch's task runs (HDFSInFlight);
// the rest stays after it (or was there before it).
func (s *HDFSStore) Batch(shape Shape, version, updated, removed, total int64) int64 {
	before := total - updated + removed
	cached := s.Cached
	if version > 0 && cached == 0 {
		cached = 1 // loadMap reads the version from the checkpoint and keeps it
	}
	if version == 0 {
		cached = 0
	}
	entries := before + updated
	rows := updated
	switch cached {
	case 1:
		entries += before
		rows += before
	case 2:
		entries += before + s.PrevPrevTotal
		rows += s.PrevPrevTotal + s.PrevUpdated
	}
	heap := rows*(shape.KeyBytes+shape.ValueBytes+HDFSRowObjectBytes) + entries*HDFSMapEntryBytes
	s.PrevPrevTotal, s.PrevTotal, s.PrevUpdated = s.PrevTotal, total, updated
	s.Cached = min(cached+1, 2)
	return heap
}

// HDFSInFlight returns the part of an HDFS-backed store's peak (Batch) that
// only a running task holds: the new map's entries, (before + updated) =
// total + removed, × HDFSMapEntryBytes. Once the task commits, its map
// becomes a retained version and the oldest is dropped, so an idle store
// holds about the two versions' maps either way.
func HDFSInFlight(removed, total int64) int64 {
	return (total + removed) * HDFSMapEntryBytes
}

// RocksDBConf is the part of Spark's RocksDBConf the memory model reads,
// with Spark 3.5's defaults (DefaultRocksDBConf).
type RocksDBConf struct {
	// BlockCacheBytes is each instance's LRU block cache
	// (spark.sql.streaming.stateStore.rocksdb.blockCacheSizeMB, 8).
	BlockCacheBytes int64
	// WriteBufferBytes and MaxWriteBuffers bound an instance's memtables:
	// writeBufferSizeMB and maxWriteBufferNumber default to -1, which
	// keeps RocksDB's own defaults, 64 MiB and 2.
	WriteBufferBytes int64
	MaxWriteBuffers  int64
	// BlockBytes is the SST block size (blockSizeKB, 4).
	BlockBytes int64
	// BloomBitsPerKey is the filter's bits per key: Spark sets a
	// BloomFilter(), whose default is 10.
	BloomBitsPerKey float64
}

// DefaultRocksDBConf returns Spark 3.5's defaults, with
// boundedMemoryUsage false (the default): every instance has its own
// block cache and memtables, and the index and filter blocks live outside
// the cache.
func DefaultRocksDBConf() RocksDBConf {
	return RocksDBConf{BlockCacheBytes: 8 << 20, WriteBufferBytes: 64 << 20, MaxWriteBuffers: 2, BlockBytes: 4 << 10, BloomBitsPerKey: 10}
}

// RocksDB's encoding of an entry, as the model counts it.
const (
	// rocksVersionByte is the byte Spark's RocksDBStateEncoder puts before
	// every key and value UnsafeRow (STATE_ENCODING_VERSION).
	rocksVersionByte = 1
	// rocksInternalKeyBytes is the sequence number and type RocksDB adds
	// to every key.
	rocksInternalKeyBytes = 8
	// rocksBlockEntryBytes is a data block entry's three varint lengths
	// (shared, unshared, value; one byte each for these sizes) plus its
	// share of the block's restart array (4 bytes every 16 entries).
	rocksBlockEntryBytes = 3 + 4.0/16
	// rocksIndexHandleBytes is an index entry's block handle (offset and
	// size varints) and lengths, beside its separator key.
	rocksIndexHandleBytes = 12
	// rocksMemtableEntryBytes is a memtable entry's overhead beside the
	// internal key and value: two varint lengths and a skip list node's
	// next pointers (1.33 levels of 8 bytes on average).
	rocksMemtableEntryBytes = 2 + 11
	// rocksMaxArenaBlockBytes bounds the memtable arena's block: RocksDB's
	// default arena_block_size is 1/8 of the write buffer, at most 1 MiB.
	rocksMaxArenaBlockBytes = 1 << 20
)

// RocksDBEntry is the model's bytes of one key in an instance, on disk
// and in memory.
type RocksDBEntry struct {
	// SST is one key's bytes in the SST files: its data block entry, its
	// share of the index and its filter bits. LZ4 (Spark's compression)
	// is not counted: UnsafeRow keys of random ids compress little.
	SST float64
	// Filter is the index and filter share of SST, which a table reader
	// holds in memory outside the block cache.
	Filter float64
	// Data is the data block share of SST, which the block cache holds.
	Data float64
	// Put and Delete are one write's bytes in the memtable.
	Put, Delete float64
}

// RocksDBEntryOf returns the entry sizes of shape under conf.
func RocksDBEntryOf(shape Shape, conf RocksDBConf) RocksDBEntry {
	key := float64(shape.KeyBytes + rocksVersionByte + rocksInternalKeyBytes)
	val := float64(shape.ValueBytes + rocksVersionByte)
	data := key + val + rocksBlockEntryBytes
	index := (key + rocksIndexHandleBytes) * data / float64(conf.BlockBytes)
	filter := conf.BloomBitsPerKey / 8
	return RocksDBEntry{
		SST: data + index + filter, Filter: index + filter, Data: data,
		Put:    key + val + rocksMemtableEntryBytes,
		Delete: key + rocksMemtableEntryBytes,
	}
}

// RocksDBBatch returns one instance's native memory and local disk while
// a batch runs, for a batch that stored updated keys, evicted removed
// keys and left total keys:
//
//	before   = total - updated + removed            keys in the SST files read
//	cache    = min(BlockCacheBytes, before × Data)  the eviction scan reads
//	           every data block, so the cache is full up to its size
//	readers  = before × Filter                      index and filter blocks
//	memtable = the batch's puts and deletes, in whole arena blocks, at most
//	           WriteBufferBytes × MaxWriteBuffers; Spark's commit flushes it
//	memory   = cache + readers + memtable
//	disk     = (before + updated) × SST             the live keys at the peak
//
// Per-instance fixed costs (table cache, statistics, the JVM side) are
// not counted. Of memory, the memtable (RocksDBMemtable) exists only
// while the batch's task runs: Spark's commit flushes it.
func RocksDBBatch(e RocksDBEntry, conf RocksDBConf, updated, removed, total int64) (memory, disk int64) {
	before := total - updated + removed
	cache := math.Min(float64(conf.BlockCacheBytes), float64(before)*e.Data)
	readers := float64(before) * e.Filter
	memory = int64(math.Ceil(cache+readers)) + RocksDBMemtable(e, conf, updated, removed)
	disk = int64(math.Ceil(float64(before+updated) * e.SST))
	return memory, disk
}

// RocksDBMemtable returns the memtable bytes of a batch that stored
// updated keys and evicted removed keys: its puts and deletes in whole
// arena blocks (1/8 of the write buffer, at most 1 MiB), at most
// WriteBufferBytes × MaxWriteBuffers. Only a running task holds it.
func RocksDBMemtable(e RocksDBEntry, conf RocksDBConf, updated, removed int64) int64 {
	writes := float64(updated)*e.Put + float64(removed)*e.Delete
	arena := float64(min(conf.WriteBufferBytes/8, rocksMaxArenaBlockBytes))
	mem := math.Ceil(writes/arena) * arena
	return int64(math.Min(mem, float64(conf.WriteBufferBytes*conf.MaxWriteBuffers)))
}

// Spark's default executor memory overhead, the container memory it asks
// beside spark.executor.memory for everything outside the JVM heap:
// max(spark.executor.minMemoryOverhead, 384 MiB, and
// spark.executor.memoryOverheadFactor, 0.10, of the executor memory),
// when spark.executor.memoryOverhead is not set (ResourceProfile's
// calculateOverHeadMemory; the defaults in core's config package).
const (
	MinMemoryOverhead    = 384 << 20
	MemoryOverheadFactor = 0.10
)

// MemoryOverhead returns Spark's default spark.executor.memoryOverhead
// for an executor memory (spark.executor.memory) in bytes.
func MemoryOverhead(executorMemory int64) int64 {
	return max(MinMemoryOverhead, int64(MemoryOverheadFactor*float64(executorMemory)))
}

// HeapFor returns the spark.executor.memory, in whole GiB and at least
// 1 GiB (Spark's default), whose heap holds state bytes: the state alone,
// with no headroom for the rest of the job.
func HeapFor(state int64) int64 {
	const gib = 1 << 30
	return max(gib, (state+gib-1)/gib*gib)
}
