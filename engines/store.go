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
