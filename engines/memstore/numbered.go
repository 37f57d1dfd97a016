package memstore

import (
	"errors"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/dedupsim/dedupsim/engines"
)

// Numbered is an in-memory engines.Store for keys that never expire and
// are, most of them, numbers in disguise: the keys of a dropDuplicates
// over the generator's event_id alone, whose ids are event numbers (ints)
// or event numbers enciphered (UUIDs). A key its Number function reads as
// a number is held as one bit of a compressed bitmap (Roaring; dense event
// numbers cost about one bit a key, 125 MB for 1e9 keys, where the hash
// table holds 60 to 70 bytes a key); any other key goes to a Store. It is
// exact as long as Number is: a key it accepts always gives the same
// number and no two keys it accepts give the same one (generators'
// KeyNumbering holds to this for any bytes), so two keys are equal
// exactly when their numbers are, and keys it rejects are compared byte
// for byte by the Store.
//
// It holds only keys that never expire (engines.NoExpiry): a Spark
// dropDuplicates whose keys do not include the watermarked event time.
// An Add with any other expiry is an error, since a bitmap keeps no
// expiry and a key must not be held in two places.
type Numbered struct {
	number func(key []byte) (uint64, bool)
	bits   *roaring64.Bitmap
	// n is the number of keys in bits (GetCardinality counts containers).
	n    int
	rest *Store
}

// errExpiring is Add's error for a key that would expire.
var errExpiring = errors.New("memstore: a numbered store holds only keys that never expire")

// NewNumbered returns an empty store whose keys number reads (see
// Numbered).
func NewNumbered(number func(key []byte) (uint64, bool)) *Numbered {
	return &Numbered{number: number, bits: roaring64.New(), rest: New()}
}

// Add inserts key unless it is present; expiresAt must be
// engines.NoExpiry.
func (s *Numbered) Add(key []byte, expiresAt int64) (bool, error) {
	if expiresAt != engines.NoExpiry {
		return false, errExpiring
	}
	if v, ok := s.number(key); ok {
		if s.bits.CheckedAdd(v) {
			s.n++
			return true, nil
		}
		return false, nil
	}
	return s.rest.Add(key, expiresAt)
}

// AddBatch is Add for each key of a run (engines.BatchAdder).
func (s *Numbered) AddBatch(keys []byte, ends []int32, expiresAt []int64, added []bool) error {
	start := int32(0)
	for i, end := range ends {
		ok, err := s.Add(keys[start:end], expiresAt[i])
		if err != nil {
			return err
		}
		added[i] = ok
		start = end
	}
	return nil
}

// Evict removes nothing: no key of a numbered store expires.
func (s *Numbered) Evict(watermark int64) (int, error) { return 0, nil }

// Len returns the number of keys.
func (s *Numbered) Len() int { return s.n + s.rest.Len() }

// Commit is a no-op: a numbered store keeps no checkpoint.
func (s *Numbered) Commit(batchID int64) error { return nil }

// Close releases the store's memory.
func (s *Numbered) Close() error {
	s.bits = roaring64.New()
	s.n = 0
	return s.rest.Close()
}

// BitmapBytes returns the bytes the bitmap of numbered keys takes
// serialized (Roaring's GetSizeInBytes), which its memory follows closely.
func (s *Numbered) BitmapBytes() uint64 { return s.bits.GetSizeInBytes() }

var _ engines.Store = (*Numbered)(nil)
var _ engines.BatchAdder = (*Numbered)(nil)
