package engines

import "math"

// NoExpiry is the expiry of a key that is never evicted: the keys of a
// dropDuplicates whose keys do not include the watermarked event time.
const NoExpiry int64 = math.MaxInt64

// Store holds the keys of one dedup operator. It is the small interface
// every state-store backend implements; the engines never see more of it.
//
// Times are microseconds since the epoch, like Spark's TimestampType. An
// entry is a key and its expiry: for dedupe with the event time among its
// keys, the event time; for dedupeWithinWatermark, the first copy's event
// time plus the delay (Spark's expiresAtMicros); NoExpiry otherwise.
type Store interface {
	// Add inserts key with the given expiry unless the key is present, and
	// reports whether it inserted. The store copies key; the caller may
	// reuse the slice. A key added in the current batch is visible to the
	// next Add of the same batch.
	Add(key []byte, expiresAt int64) (bool, error)
	// Evict removes every key whose expiry is at or below watermark and
	// returns how many it removed. Its cost is proportional to what it
	// removes, not to the number of keys that stay.
	Evict(watermark int64) (int, error)
	// Len returns the number of keys held.
	Len() int
	// Commit makes everything added and evicted so far durable as the
	// state of the given batch (Spark's StateStore.commit).
	Commit(batchID int64) error
	// Close releases the store's resources. A closed store is not used again.
	Close() error
}

// Entry is one key of a store, as Ranger yields it.
type Entry struct {
	Key       []byte
	ExpiresAt int64
}

// Ranger is implemented by stores that can list their entries, for
// snapshots and for `simulate state`. The order is unspecified unless the
// store documents one; Key is only valid during the callback.
type Ranger interface {
	Range(fn func(key []byte, expiresAt int64) bool) error
}

// Snapshotter is implemented by stores that must prepare, when asked, to be
// reopened later at their current version, after more batches have been
// committed on top of it. A resumable run (sim/runner) takes a job snapshot
// every second or so of wall time while the query commits every batch, so a
// resumed job reopens its stores at the snapshot's version, several
// batches behind their latest commit. The runner calls Snapshot on every
// store of the job right before it writes the job snapshot.
//
// version is the store's current version: the number of batches committed
// (the state after batch version-1), with nothing uncommitted. Once Snapshot
// returns, the store's folder can be reopened at version and at the version
// of the Snapshot call before it (the job snapshot still on disk should the
// process die before the new one is written), until the next Snapshot call
// returns; older versions may be gone. A store that keeps only its latest
// state (Pebble) saves a copy of it; a store that keeps every version
// (the checkpointed memory store) drops the files no such reopen needs, so
// that a long run does not keep one file per batch forever.
type Snapshotter interface {
	Snapshot(version int64) error
}

// BatchAdder is implemented by stores that add a run of keys at once. The
// executor hands a dedup operator every key of a micro-batch together
// (Operator.ProcessBatch), and a store that sees the run ahead can overlap
// the cache misses of many keys (hash them all, load their hash-table
// slots, then insert), where one Add at a time waits for each miss in
// turn. Found by type assertion; a store without it gets one Add per key.
type BatchAdder interface {
	// AddBatch is Add for each key keys[ends[i-1]:ends[i]] (ends[-1] is
	// 0), in order, with expiry expiresAt[i], and sets added[i] to Add's
	// result: a key added earlier in the run is visible to a later one.
	// ends, expiresAt and added have the same length. On error, the keys
	// before the one that failed are added and added[i] is undefined from
	// it on, as if Add had been called in a loop that stopped there.
	AddBatch(keys []byte, ends []int32, expiresAt []int64, added []bool) error
}

// StateFile is a file a store's state at a version is read from: all of
// it (Len -1), or its first Len bytes (an append-only log that grows past
// the version). SHA256, when known, is the hex SHA-256 of those bytes.
type StateFile struct {
	Path   string
	Len    int64
	SHA256 string
}

// StateSummer is implemented by stores that can list the files of their
// current version, and the checksums of those they wrote, without reading
// them back. A resumable run (sim/runner) records those checksums with
// each job snapshot, right after Snapshot(version).
type StateSummer interface {
	// StateFiles returns the files of version, the store's current
	// version, as the store's listing of its folder would (in order,
	// absolute or as the store was opened); ok is false when the store
	// cannot tell without reading its folder, and the caller lists and
	// hashes the files itself. A file whose SHA256 is empty is to be
	// hashed by the caller.
	StateFiles(version int64) (files []StateFile, ok bool, err error)
}
