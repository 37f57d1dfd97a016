// Package pebblestore is the Pebble-backed engines.Store: the dedup state of
// one operator kept on disk, shaped like Spark's RocksDB state store with
// changelog checkpointing (the WAL off, a changelog per batch, the database
// files as the checkpoint), and persisted per micro-batch so that a
// restarted query resumes from the last committed batch.
//
// # Writes
//
// Keys are not written to Pebble one by one. An Add puts the key in the
// overlay, an in-memory hash table of the keys added since the last flush
// (overlay.go); Commit writes the batch's changelog (changelog.go) and, once
// the overlay holds Options.MemTableSize bytes (or Options.CheckpointBatches
// batches, 1000 by default, were committed since the last flush), freezes
// it and flushes it in the background: its live entries, sorted, become a
// new sstable that Pebble ingests whole (flush.go). A random key costs Pebble no memtable insert
// (about a microsecond at a million keys, BENCHMARKS.md), only its share of
// a sequential sstable write, off the critical path.
//
// # Key layout
//
// One Pebble DB, the WAL disabled, holds one store. Every Pebble key starts
// with a one-byte prefix:
//
//	'f' + be64(id) + 'k' + key   an entry of flush id: expiresAt, 8 bytes big-endian
//	'f' + be64(id) + 'm'         the metadata of flush id (keys.go: meta)
//	'n' + key                    a key stored with engines.NoExpiry: empty value
//
// Each flush owns a key range no other flush touches, above every older
// one, so Pebble ingests its sstable into the bottom level with no overlap
// and never compacts it: the expiring keys cost no compaction at all. A
// flush is dropped whole, by one range deletion that Pebble's delete-only
// compactions turn into deleted files, once the watermark reaches the
// largest expiry among its entries. NoExpiry keys (a dropDuplicates
// without the event time among its keys) are never dropped, so they live
// in one key range of their own, which Pebble compacts as an ordinary LSM.
//
// # Eviction
//
// Evict deletes nothing where it lies. The expiry of every live key is kept
// in memory in the expiry index (engines/internal/expiry, 16 bytes a key),
// which Evict pops, so its count, and Len, are exact, and its cost is what
// it evicts. Every key is stored with the store's evict epoch when it was
// added, and an entry is dead once an eviction recorded after its epoch
// reached its expiry (evictlog.go); lookups, Range and flushes skip dead
// entries, and a key evicted and added again gets a new entry. A flush
// records its epoch for all its entries: they were all live when it was
// cut, so the evictions after it decide their fate. Range deletions touch
// only dropped flushes, which no lookup reads: they stay off the read path.
//
// # Lookups
//
// Add looks a key up in the overlay first (exact), then in the overlay
// being flushed, if any, then in Pebble, newest first: the NoExpiry keys,
// then each live flush. In front of Pebble, each flush has a Bloom filter
// in memory (filter.go, 20 bits per key, under 0.2% false positives),
// built as it is written and dropped with it, and the NoExpiry keys one
// that grows with them; a key that no filter may hold is certainly new and
// costs no read of Pebble. Filters have no false negatives, so results are
// exact: a filter hit still reads Pebble, which decides, with a seek of one
// iterator that the store makes at the first such read of a batch and
// closes at its Commit or at a flush's install (Pebble's Get allocates for
// every level it visits; a seek allocates nothing). The newest copy of a
// key decides: an older one is dead, since the key was added again after
// it. AddBatch loads every key's overlay slot and filter blocks ahead, a
// group at a time, so that their cache misses overlap; it does not sort a
// batch's lookups by key.
//
// # Micro-batches and durability
//
// Add and Evict change the in-memory state and append to the batch's
// changelog; Commit writes it to <dir>/changes/<version>.changes, whole (a
// temporary file written with write(2), closed and renamed into place),
// before it returns: once the operating system holds the bytes, the batch
// survives a killed process (kill -9). Commit does not fsync by default:
// Options.Fsync adds an fsync of the changelog and of its folder (and of
// every flush's sstables) for a machine crash, which a simulation does not
// need. Pebble's own writes (the MANIFEST an ingestion updates) keep
// Pebble's syncing.
//
// Recovery (Open, and Abort, which costs a reopen) reads the metadata of
// the newest flush, which records the state it was cut at (version, key
// count, evict log, live flushes), rebuilds the filters and the expiry
// index from the live flushes' entries (checking their count), and replays
// the changelogs of the batches committed after it through Add and Evict,
// checking that each Add inserts again and each Evict removes as many
// keys. A flush whose metadata is durable makes the changelogs before it
// unnecessary, and they are deleted; so the flushed database is Spark's
// checkpoint (RocksDB's changelog checkpointing snapshots every
// minDeltasForSnapshot batches; a flush comes when the overlay is full, or
// after Options.CheckpointBatches batches at the latest), and recovery is
// the latest checkpoint plus the changelogs after it: at most
// CheckpointBatches of them, or twice that if a flush was running when the
// process died. A killed process leaves at most a temporary changelog,
// staged sstables (killed before their ingestion), changelogs a flush
// already covers (killed after it) and dropped flushes whose range
// deletion was still in memory; Open removes them, and
// TestKilledDuringAFlush kills a flush at both points.
//
// # Versioned reopen
//
// Pebble keeps only the latest state, but a resumed run reopens a store at
// the version of its last job snapshot, a few batches back. Snapshot (the
// engines.Snapshotter the runner calls before each job snapshot) flushes
// the overlay and saves a Pebble checkpoint in <dir>.checkpoints/<version>,
// sstables hard-linked, keeping the two newest; OpenAt reopens the live
// store if it is at the wanted version and otherwise rebuilds it from that
// checkpoint, swapped in with renames. See snapshot.go for the layout and
// the crash cases.
//
// # Memory
//
// A store holds its block cache (Options.CacheSize, 64 MiB by default) and
// up to two overlays (the active one and the one being flushed,
// Options.MemTableSize each, 64 MiB by default); Options.MemoryBudget sizes
// both from one number, half each (Store.MemorySizes reports the result).
// An overlay entry costs its key and about 56 bytes. Besides, per live key: 16
// bytes of expiry index (expiring keys only) and 2.5 bytes of filter, plus
// the filters of flushes not yet dropped (at most about one flush's worth).
//
// # Pebble tuning
//
// Keys are mostly random ids with 8-byte values, which block compression
// cannot shrink, so sstables are uncompressed. The NoExpiry keys' sstables
// keep a 10-bit table filter per level; flushes' sstables have none (the
// store's own filters answer first). Pebble's informational logging is
// dropped so it does not interleave with the simulator's progress bar.
//
// A Store is not safe for concurrent use; the runner drives one store from
// one goroutine (the store's own flush goroutine shares nothing it
// writes).
package pebblestore
