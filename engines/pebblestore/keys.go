package pebblestore

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The one-byte prefixes of the three kinds of Pebble keys (see the package
// documentation for the layout).
const (
	primaryPrefix byte = 'k'
	indexPrefix   byte = 'x'
)

// metaKey is the Pebble key of the metadata record.
var metaKey = []byte{'m'}

// indexTimeLen is the length of the expiry in an index key.
const indexTimeLen = 8

// appendPrimary appends the primary Pebble key of key to dst.
func appendPrimary(dst, key []byte) []byte {
	dst = append(dst, primaryPrefix)
	return append(dst, key...)
}

// appendIndexTime appends the index prefix and the order-preserving
// encoding of t: the sign bit flipped, big-endian, so that the bytes sort
// like the signed number.
func appendIndexTime(dst []byte, t int64) []byte {
	dst = append(dst, indexPrefix)
	return binary.BigEndian.AppendUint64(dst, uint64(t)^(1<<63))
}

// appendIndex appends the index Pebble key of key expiring at t.
func appendIndex(dst []byte, t int64, key []byte) []byte {
	return append(appendIndexTime(dst, t), key...)
}

// splitIndex returns the expiry and the user key of an index Pebble key.
func splitIndex(k []byte) (t int64, key []byte, ok bool) {
	if len(k) < 1+indexTimeLen || k[0] != indexPrefix {
		return 0, nil, false
	}
	return int64(binary.BigEndian.Uint64(k[1:]) ^ (1 << 63)), k[1+indexTimeLen:], true
}

// metaVersion is the version of the metadata record; a store written by an
// unknown version is refused rather than misread.
const metaVersion = 1

// metaLen is the length of an encoded metadata record.
const metaLen = 2 + 3*8

// meta is the metadata record, written in every commit batch so that it
// always describes the state it is committed with.
type meta struct {
	// hasBatch reports whether any batch was committed; batchID is the last.
	hasBatch bool
	batchID  int64
	// n is the number of keys in the store.
	n int64
	// low is a lower bound on the expiry of every index entry (MaxInt64
	// when there is none), where the next Evict starts reading the index.
	low int64
}

// emptyMeta is the metadata of a freshly created store.
func emptyMeta() meta { return meta{low: math.MaxInt64} }

// append appends the encoding of m to dst: version, flags, batch id, n, low.
func (m meta) append(dst []byte) []byte {
	var flags byte
	if m.hasBatch {
		flags = 1
	}
	dst = append(dst, metaVersion, flags)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.batchID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.n))
	return binary.BigEndian.AppendUint64(dst, uint64(m.low))
}

// decodeMeta decodes a metadata record.
func decodeMeta(v []byte) (meta, error) {
	if len(v) != metaLen {
		return meta{}, fmt.Errorf("metadata record has %d bytes, want %d", len(v), metaLen)
	}
	if v[0] != metaVersion {
		return meta{}, fmt.Errorf("metadata version %d, this build reads version %d", v[0], metaVersion)
	}
	if v[1]&^1 != 0 {
		return meta{}, fmt.Errorf("metadata flags %#x unknown", v[1])
	}
	m := meta{
		hasBatch: v[1]&1 != 0,
		batchID:  int64(binary.BigEndian.Uint64(v[2:])),
		n:        int64(binary.BigEndian.Uint64(v[10:])),
		low:      int64(binary.BigEndian.Uint64(v[18:])),
	}
	if m.n < 0 {
		return meta{}, fmt.Errorf("metadata key count %d is negative", m.n)
	}
	return m, nil
}
