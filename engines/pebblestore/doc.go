// Package pebblestore is the Pebble-backed engines.Store: the dedup state of
// one operator kept on disk, like Spark's RocksDB state store, and
// persisted per micro-batch so that a restarted query resumes from the last
// committed batch.
//
// # Key layout
//
// One Pebble DB holds one store. Every Pebble key starts with a one-byte
// prefix:
//
//	"m"                                 metadata: format, last batch id, Len, index bound
//	'k' + key                           primary: expiresAt, 8 bytes big-endian
//	'x' + be64(expiresAt ^ 1<<63) + key expiry index: empty value
//
// The primary entry answers Add's "is this key present" with one point
// lookup on the exact key bytes (never a hash). The index entry orders keys
// by expiry: flipping the sign bit makes the big-endian bytes of an int64
// sort like the number itself, so negative expiries come first. The time is
// fixed-width, so the key that follows it needs no terminator, and keys that
// are prefixes of each other (or empty) stay distinct. NoExpiry keys have no
// index entry at all: they are never evicted, not even by
// Evict(math.MaxInt64), and cost eviction nothing.
//
// # Eviction
//
// Evict(w) reads the index span [low, w], where low is a lower bound on
// every indexed expiry, kept in memory and committed in the metadata, and
// moved past w by each Evict (an Add with an earlier expiry moves it back).
// It deletes the primary entry of each key it finds, and drops the whole
// span with one DeleteRange. Starting at low rather than at the first index
// key matters: deleted index entries stay in the LSM as tombstones until a
// compaction drops them, and an iterator starting at the front would step
// over all of them, so eviction would cost everything ever evicted instead
// of what it evicts now.
//
// The index span goes with one range tombstone rather than a point
// tombstone per entry because the span is contiguous and known: it writes
// nothing per evicted key to the WAL and the memtable, and compactions drop
// the covered entries wholesale. The primaries need point deletes, as they
// are scattered in key order. Measured with BenchmarkStore/op=steady and
// BenchmarkEvict at 1e5 live keys on 2 cores, point tombstones for the
// index cost 30 to 60% more CPU per row and per evicted key. BenchmarkEvict shows the
// cost per evicted key flat as the keys that stay grow from 1e4 to 1e6.
//
// # Micro-batches
//
// Add and Evict record what they do in an in-memory overlay of the keys the
// micro-batch added or evicted (pending.go); Add consults the overlay first
// and the committed DB second, so a batch sees its own writes. Commit then
// writes the overlay into one pebble.Batch, after the Evicts' range
// tombstones: the primary entries sorted by key, then the index entries
// sorted by expiry, then the metadata, and applies it atomically. Sorted,
// each memtable insert starts from the skiplist splice of the previous one
// instead of from the top, and the index entries, later than every
// committed one, append at the end of the index; a key added and evicted in
// the same batch writes nothing. Writing as Add went instead put the CPU
// per row at 2.3 to 3.0 times the bare loop's, against 1.6 to 1.8 sorted
// (BenchmarkStore/op=steady/keys=1e5, x-bare-cpu). An indexed pebble.Batch would give
// read-your-writes too, but every Set then also inserts into the batch's
// own skiplist and every Get seeks it; BenchmarkReadYourWrites measures it
// at 15 to 35% more CPU per row than the overlay, with 3 allocations per
// row against 1 (Pebble's own, in its Get), on a 2-core machine.
//
// A reopened store is exactly the state of the last Commit, with the batch
// id and Len that go with it: uncommitted work is lost, like Spark's state
// store restoring the last committed version. Abort discards it without a
// reopen.
//
// # Versioned reopen
//
// Pebble keeps only the latest state, but a resumed run reopens a store at
// the version of its last job snapshot, a few batches back. Snapshot (the
// engines.Snapshotter the runner calls before each job snapshot) saves a
// Pebble checkpoint in <dir>.checkpoints/<version>, sstables hard-linked,
// keeping the two newest; OpenAt reopens the live store if it is at the
// wanted version and otherwise rebuilds it from that checkpoint, swapped in
// with renames. See snapshot.go for the layout and the crash cases.
//
// # Durability
//
// A committed batch must survive a SIGKILL of the process; surviving a
// machine crash is not required. pebble.NoSync is not enough for that: in
// Pebble v1.1 a NoSync commit only copies the batch into the WAL writer's
// in-memory block (record.LogWriter.SyncRecord) and returns; the flush loop
// writes that block to the file when it fills or when a sync is requested,
// so a process killed after Commit returned can lose its last batches.
// TestCommittedBatchSurvivesSIGKILL fails with NoSync (the store reopens at
// batch 0 or 25 of 30) and passes as built. Commit uses pebble.Sync, whose
// contract is that the WAL is written to the file and synced before Commit
// returns; once write(2) returned, the data is in the OS page cache, which
// survives the process. With Options.Fsync false (the default) the WAL
// files are opened through a vfs.FS whose Sync is a no-op (fs.go), so the
// guarantee costs a write(2) per Commit instead of an fsync, which saves
// 0.4 ms or more per Commit on the measured machine (BenchmarkCommit).
// Options.Fsync true keeps the real fsync for machine-crash durability.
// Sstables and the MANIFEST keep Pebble's own syncing either way.
//
// # Pebble tuning
//
// Values are 8 bytes and keys are mostly random ids, which block
// compression cannot shrink, so every level is uncompressed (no CPU spent on
// every flush, compaction and block read). Every level has a 10-bit bloom
// filter, because most Adds look up a key that is absent, and the filter
// answers for an sstable without reading a data block. The block cache
// (default 64 MiB) and memtable (default 32 MiB) are Options; four
// memtables may queue before writes stall, so a slow flush on a 2-core
// machine does not stall a micro-batch. Pebble's informational logging is
// dropped so it does not interleave with the simulator's progress bar.
//
// A Store is not safe for concurrent use; the runner drives one store from
// one goroutine.
package pebblestore
