package memstore

import (
	"encoding/binary"
	"errors"
	"math"
)

// Arena layout. A key is stored as one record,
//
//	[len uint32][expiresAt int64][key bytes], padded to a multiple of 8,
//
// in a slab, and is named by a 32-bit ref: the slab index in the high
// refSlabBits bits and the record's offset in 8-byte units in the low
// refOffBits bits. A 32-bit ref is what lets a hash-table slot be 8 bytes
// (tag + ref); the price is a bound of 2^32 x 8 bytes = 32 GiB of records,
// some 700 million 36-byte keys, far past what a laptop holds.
const (
	// slabShift is log2 of the slab size. Keys are tens of bytes; a slab
	// holds thousands of them, and a slab is released when its last key is
	// evicted. Small enough that a few long-lived keys (a bad-clock row
	// under a pair-keyed dedup) pin little memory. A slab is allocated
	// once per some 5,000 keys, off the per-row cost.
	slabShift = 18
	slabSize  = 1 << slabShift
	// recAlign is the record alignment; refs count in these units.
	recAlign    = 8
	refOffBits  = slabShift - 3
	refSlabBits = 32 - refOffBits
	maxSlabs    = 1 << refSlabBits
	// recHeader is the bytes before a record's key: length and expiry.
	recHeader = 12
)

// errArenaFull is returned when the keys exceed what 32-bit refs address.
var errArenaFull = errors.New("memstore: key arena full (32 GiB of keys)")

// errKeyTooLong is returned for a key whose length does not fit a record.
var errKeyTooLong = errors.New("memstore: key longer than 4 GiB")

// arena stores keys and their expiries in large slabs so that adding a key
// costs no allocation of its own, and so that the hash table and the
// expiry index can name a key with 32 bits and no pointer: the garbage
// collector sees a few thousand slab headers, never a per-key pointer. Keys
// are evicted roughly in the order they were added, so whole slabs empty
// out and are recycled through a free list.
type arena struct {
	// slabs[0] is never used, so that ref 0 can mean "no key".
	slabs [][]byte
	live  []int32 // live records per slab
	cur   int     // slab being filled, 0 before the first key
	used  int     // bytes used in slabs[cur]
	free  []int   // empty slabs ready for reuse

	// The frozen views of a checkpointed store's background snapshots
	// (see view.go). With track set, bits[i] has a bit per 8-byte unit of
	// slabs[i], set where a live record starts, and enc is the bytes
	// the live records take in a snapshot file. While pinned, a slab that
	// empties is parked in pending instead of being reused, since a view
	// may still read its records.
	track   bool
	bits    [][]uint64
	enc     int64
	pinned  bool
	pending []int
}

func newArena() arena {
	return arena{slabs: [][]byte{nil}, live: []int32{0}}
}

// recSize is the padded size of the record of an n-byte key.
func recSize(n int) int { return (recHeader + n + recAlign - 1) &^ (recAlign - 1) }

// add copies key and its expiry into the arena and returns its ref.
func (a *arena) add(key []byte, expiresAt int64) (uint32, error) {
	if uint64(len(key)) > math.MaxUint32 {
		return 0, errKeyTooLong
	}
	size := recSize(len(key))
	if a.cur == 0 || a.used+size > len(a.slabs[a.cur]) {
		if err := a.nextSlab(size); err != nil {
			return 0, err
		}
	}
	s := a.slabs[a.cur]
	off := a.used
	binary.LittleEndian.PutUint32(s[off:], uint32(len(key)))
	binary.LittleEndian.PutUint64(s[off+4:], uint64(expiresAt))
	copy(s[off+recHeader:], key)
	a.used += size
	a.live[a.cur]++
	if a.track {
		u := off / recAlign
		a.bits[a.cur][u>>6] |= 1 << (u & 63)
		a.enc += encSize(len(key), expiresAt)
	}
	return uint32(a.cur)<<refOffBits | uint32(off/recAlign), nil
}

// nextSlab makes a slab with room for a record of size bytes current: a
// recycled one if any, else a new one; a record larger than a slab gets a
// slab of its own.
func (a *arena) nextSlab(size int) error {
	if a.cur != 0 && a.live[a.cur] == 0 {
		// Every key of the full slab was evicted while it was being
		// filled (release skips the current slab).
		switch {
		case !a.pinned && size <= len(a.slabs[a.cur]):
			// Refill it in place rather than abandon it unrecycled.
			a.used = 0
			return nil
		case len(a.slabs[a.cur]) > slabSize:
			// Oversized: let the GC have it, as release does.
			a.slabs[a.cur] = nil
			if a.track {
				a.bits[a.cur] = nil
			}
		case a.pinned:
			// A frozen view may still read its records.
			a.pending = append(a.pending, a.cur)
		default:
			a.free = append(a.free, a.cur)
		}
	}
	if k := len(a.free); k > 0 && size <= slabSize {
		a.cur = a.free[k-1]
		a.free = a.free[:k-1]
		a.used = 0
		return nil
	}
	if len(a.slabs) >= maxSlabs {
		return errArenaFull
	}
	n := max(size, slabSize)
	a.slabs = append(a.slabs, make([]byte, n))
	a.live = append(a.live, 0)
	if a.track {
		a.bits = append(a.bits, make([]uint64, (n/recAlign+63)/64))
	}
	a.cur = len(a.slabs) - 1
	a.used = 0
	return nil
}

// key returns the key at ref. The slice shares the arena's memory: it is
// valid until the key is released and must not be modified.
func (a *arena) key(ref uint32) []byte {
	s := a.slabs[ref>>refOffBits]
	off := int(ref&(1<<refOffBits-1)) * recAlign
	n := int(binary.LittleEndian.Uint32(s[off:]))
	return s[off+recHeader : off+recHeader+n]
}

// expiry returns the expiry stored with the key at ref.
func (a *arena) expiry(ref uint32) int64 {
	s := a.slabs[ref>>refOffBits]
	off := int(ref&(1<<refOffBits-1)) * recAlign
	return int64(binary.LittleEndian.Uint64(s[off+4:]))
}

// release drops the record at ref and recycles its slab once empty.
func (a *arena) release(ref uint32) {
	s := int(ref >> refOffBits)
	if a.track {
		u := ref & (1<<refOffBits - 1)
		a.bits[s][u>>6] &^= 1 << (u & 63)
		off := int(u) * recAlign
		n := int(binary.LittleEndian.Uint32(a.slabs[s][off:]))
		a.enc -= encSize(n, int64(binary.LittleEndian.Uint64(a.slabs[s][off+4:])))
	}
	a.live[s]--
	if a.live[s] > 0 || s == a.cur {
		return
	}
	if len(a.slabs[s]) > slabSize {
		// An oversized slab is not reused: let the GC have it (a view
		// that reads it holds its own reference). Its index stays taken,
		// which only matters after 2^17 oversized keys.
		a.slabs[s] = nil
		if a.track {
			a.bits[s] = nil
		}
		return
	}
	if a.pinned {
		a.pending = append(a.pending, s)
		return
	}
	a.free = append(a.free, s)
}

// bytes returns the memory the arena holds.
func (a *arena) bytes() int64 {
	var n int64
	for _, s := range a.slabs {
		n += int64(cap(s))
	}
	return n
}
