package pebblestore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/dedupsim/dedupsim/engines"
)

// overlay holds the keys added since the last flush, committed or not: the
// store's own memtable (see "Writes" in the package documentation). It is a
// hash table of entries whose keys are copied into slabs, so that adding
// a key allocates nothing once the overlay has grown to its size, and the
// garbage collector sees a pointer per slab, never one per key. An entry is
// never removed before the flush that empties the overlay: an evicted one
// stays, dead by the evict log, and a key added again after its eviction
// reuses it.
type overlay struct {
	slots []oslot // a power of two in length
	shift uint32  // 32 - log2(len(slots))
	mask  uint32
	ents  []oent
	// slabs hold the keys, overlaySlab bytes each, and big the keys
	// larger than a quarter slab, one each.
	slabs [][]byte
	big   [][]byte
	// cur is the slab being filled and used its bytes in use.
	cur, used int
	keyBytes  int64
	// order is sortedByKey's reusable buffer, forever splitByExpiry's.
	order   []sortItem
	forever []sortItem
}

// oslot is one cell of the table: the low 32 bits of the key's hash and
// the entry's index plus one (0 for an empty cell).
type oslot struct {
	tag uint32
	idx uint32
}

// oent is one entry: where its key is, its hash, its expiry and the evict
// epoch at which it was (last) added.
type oent struct {
	slab, off, klen uint32
	hash            uint64
	exp             int64
	epoch           uint64
}

const (
	overlaySlab      = 1 << 20
	overlayMinBits   = 4
	overlayLoadNum   = 3
	overlayLoadDenom = 4
)

func newOverlay() overlay {
	var o overlay
	o.resize(overlayMinBits)
	return o
}

// resize makes the table 2^bits cells and reinserts every entry by tag.
func (o *overlay) resize(bits uint32) {
	old := o.slots
	o.slots = make([]oslot, 1<<bits)
	o.shift = 32 - bits
	o.mask = 1<<bits - 1
	for _, s := range old {
		if s.idx == 0 {
			continue
		}
		i := s.tag >> o.shift
		for o.slots[i].idx != 0 {
			i = (i + 1) & o.mask
		}
		o.slots[i] = s
	}
}

// key returns entry i's key; it shares the slab's memory.
func (o *overlay) key(i int) []byte {
	e := &o.ents[i]
	if e.slab&bigSlab != 0 {
		return o.big[e.slab&^bigSlab]
	}
	return o.slabs[e.slab][e.off : e.off+e.klen]
}

// lookup returns the index of key's entry, of hash h, or -1.
func (o *overlay) lookup(h uint64, key []byte) int {
	tag := uint32(h)
	i := tag >> o.shift
	for {
		s := o.slots[i]
		if s.idx == 0 {
			return -1
		}
		if s.tag == tag && bytes.Equal(o.key(int(s.idx-1)), key) {
			return int(s.idx - 1)
		}
		i = (i + 1) & o.mask
	}
}

// insert adds an entry for key, of hash h, which the overlay does not
// hold, and returns its index.
func (o *overlay) insert(h uint64, key []byte, exp int64, epoch uint64) int {
	if (len(o.ents)+1)*overlayLoadDenom > len(o.slots)*overlayLoadNum {
		o.resize(32 - o.shift + 1)
	}
	slab, off := o.copyKey(key)
	idx := len(o.ents)
	o.ents = append(o.ents, oent{slab: slab, off: off, klen: uint32(len(key)), hash: h, exp: exp, epoch: epoch})
	tag := uint32(h)
	i := tag >> o.shift
	for o.slots[i].idx != 0 {
		i = (i + 1) & o.mask
	}
	o.slots[i] = oslot{tag: tag, idx: uint32(idx + 1)}
	o.keyBytes += int64(len(key))
	return idx
}

// bigSlab flags an entry's slab number as an index into big.
const bigSlab = 1 << 31

// copyKey copies key into a slab and returns where.
func (o *overlay) copyKey(key []byte) (uint32, uint32) {
	if len(key) > overlaySlab/4 {
		// A large key gets a slab of its own.
		o.big = append(o.big, bytes.Clone(key))
		return uint32(len(o.big)-1) | bigSlab, 0
	}
	if len(o.slabs) == 0 || o.used+len(key) > overlaySlab {
		if len(o.slabs) > 0 {
			o.cur++
		}
		if o.cur == len(o.slabs) {
			o.slabs = append(o.slabs, make([]byte, overlaySlab))
		}
		o.used = 0
	}
	off := o.used
	copy(o.slabs[o.cur][off:], key)
	o.used += len(key)
	return uint32(o.cur), uint32(off)
}

// len returns the number of entries.
func (o *overlay) len() int { return len(o.ents) }

// reset empties the overlay, keeping its memory for the next keys.
func (o *overlay) reset() {
	clear(o.slots)
	o.ents = o.ents[:0]
	o.big = nil
	o.cur, o.used = 0, 0
	o.keyBytes = 0
	clear(o.order)
	o.order = o.order[:0]
	o.forever = o.forever[:0]
}

// splitByExpiry splits items, in place and keeping their order, into the
// entries that expire and those that never do (engines.NoExpiry); the
// second slice is reused by the next call.
func (o *overlay) splitByExpiry(items []sortItem) (expiring, forever []sortItem) {
	expiring, forever = items[:0], o.forever[:0]
	for _, it := range items {
		if o.ents[it.idx].exp == engines.NoExpiry {
			forever = append(forever, it)
		} else {
			expiring = append(expiring, it)
		}
	}
	o.forever = forever
	return expiring, forever
}

// bytes returns the memory the overlay holds.
func (o *overlay) bytes() int64 {
	n := int64(len(o.slots))*8 + int64(cap(o.ents))*40
	for _, s := range o.slabs {
		n += int64(len(s))
	}
	for _, b := range o.big {
		n += int64(len(b))
	}
	return n
}

// sortItem is an entry in sortedByKey: the first eight bytes of its key,
// big-endian (zero-padded), and its index.
type sortItem struct {
	prefix uint64
	idx    int32
}

// sortedByKey returns the indices of the entries for which keep is true,
// in byte order of their keys. The slice is reused by the next call.
// Comparing the keys' first eight bytes as one integer decides almost
// every comparison of random ids without reading the keys again.
func (o *overlay) sortedByKey(keep func(i int) bool) []sortItem {
	out := o.order[:0]
	var pad [8]byte
	for i := range o.ents {
		if !keep(i) {
			continue
		}
		k := o.key(i)
		var p uint64
		if len(k) >= 8 {
			p = binary.BigEndian.Uint64(k)
		} else {
			pad = [8]byte{}
			copy(pad[:], k)
			p = binary.BigEndian.Uint64(pad[:])
		}
		out = append(out, sortItem{prefix: p, idx: int32(i)})
	}
	slices.SortFunc(out, func(a, b sortItem) int {
		if c := cmp.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		return bytes.Compare(o.key(int(a.idx)), o.key(int(b.idx)))
	})
	o.order = out
	return out
}
