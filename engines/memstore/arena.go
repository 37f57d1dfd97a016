package memstore

import "unsafe"

// slabSize is the size of one arena slab. Keys are tens of bytes; a slab
// holds thousands of them, and a slab is released when its last key is
// evicted. Small enough that a few long-lived keys (a bad-clock row under a
// pair-keyed dedup) pin little memory.
const slabSize = 256 << 10

// arena stores key bytes in large slabs so that adding a key costs no
// allocation of its own. Keys are evicted roughly in the order they were
// added, so whole slabs empty out and are recycled through a free list.
type arena struct {
	slabs [][]byte
	live  []int32 // live keys per slab
	cur   int     // slab being filled, -1 before the first key
	free  []int   // empty slabs ready for reuse
}

func newArena() *arena { return &arena{cur: -1} }

// add copies key into the arena and returns where it is.
func (a *arena) add(key []byte) keyRef {
	n := len(key)
	if n > slabSize {
		// An oversized key gets a slab of its own.
		a.slabs = append(a.slabs, append(make([]byte, 0, n), key...))
		a.live = append(a.live, 1)
		return keyRef{slab: uint32(len(a.slabs) - 1), off: 0, n: uint32(n)}
	}
	if a.cur < 0 || len(a.slabs[a.cur])+n > cap(a.slabs[a.cur]) {
		a.nextSlab()
	}
	s := a.slabs[a.cur]
	off := len(s)
	a.slabs[a.cur] = append(s, key...)
	a.live[a.cur]++
	return keyRef{slab: uint32(a.cur), off: uint32(off), n: uint32(n)}
}

func (a *arena) nextSlab() {
	if k := len(a.free); k > 0 {
		a.cur = a.free[k-1]
		a.free = a.free[:k-1]
		a.slabs[a.cur] = a.slabs[a.cur][:0]
		return
	}
	a.slabs = append(a.slabs, make([]byte, 0, slabSize))
	a.live = append(a.live, 0)
	a.cur = len(a.slabs) - 1
}

// str returns the key at r as a string sharing the arena's memory. The
// string is valid until the key is released.
func (a *arena) str(r keyRef) string {
	if r.n == 0 {
		return ""
	}
	return unsafe.String(&a.slabs[r.slab][r.off], int(r.n))
}

// release drops one key from slab r.slab and recycles the slab once empty.
func (a *arena) release(r keyRef) {
	s := int(r.slab)
	a.live[s]--
	if a.live[s] > 0 || s == a.cur {
		return
	}
	if cap(a.slabs[s]) > slabSize {
		a.slabs[s] = nil // oversized: let the GC have it
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
