package flink

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// value is one entry of a keyed ValueState: present, the row it holds
// (its ID, rowtime and value bytes) and the TTL clock of its last write.
type value struct {
	present bool
	id      int
	rowTime int64
	written int64
	// val is the row's value bytes (keep-last compares them), a buffer the
	// entry reuses from write to write.
	val []byte
	// updated says the stored row object's kind is UPDATE_AFTER: the heap
	// backend holds the row object itself, and
	// processLastRowOnProcTime sets its kind after state.update when it
	// emits it as +U. The planner's generated equaliser compares row
	// kinds, so such a row never equals an incoming (INSERT) row.
	updated bool
}

// entry is the state of one key: the function's "deduplicate-state" (a
// flag for proctime keep-first, the kept row otherwise) in main, and, for
// the insert-only rowtime keep-first, the waiting row (no TTL) with its
// timer's registration order seq. An entry is freed as soon as neither
// value is present: an absent key and an empty one behave alike.
type entry struct {
	key  []byte // a buffer the entry keeps when freed and reuses
	main value
	wait value
	seq  int64
	tag  uint32 // the key's hash tag, to find its slot without rehashing
	used bool
	// The expiry index's view of main (TTL on): gen tells an index item
	// of the current main from a stale one (bumped whenever main is
	// cleared or the entry freed); indexed says main has a current item,
	// whose expiry is itemAt; expired says the index has found main
	// expired (counted in Operator.expired) while it is still held.
	gen     uint32
	itemAt  uint64
	indexed bool
	expired bool
}

// slot is one cell of the key table: the high 32 bits of the key's hash
// (its tag) and the entry index + 1 (0 for an empty cell). No pointer, so
// the collector never scans the table.
type slot struct {
	tag uint32
	ref uint32
}

// keyTable maps key bytes to entries without allocating per lookup: open
// addressing with linear probing and backward-shift deletion over slots,
// the entries in a slice recycled through a free list. A key's home cell
// is the top bits of its tag, so slot order is hash order at every size,
// and a cursor over the slots (incremental cleanup's) keeps its place in
// hash order when the table doubles. Memory is the peak number of entries
// held at once, never the number of keys ever seen.
//
// The slots are also split into keyGroups equal segments, the key groups
// of Flink's heap backend (one CopyOnWriteStateMap each, its bucket array
// a segment); occ counts the occupied slots of each, so that incremental
// cleanup skips an empty key group as Flink's visitor does.
type keyTable struct {
	slots    []slot
	shift    uint32 // 32 - log2(len(slots))
	mask     uint32
	segShift uint32 // log2 of a segment's slots
	n        int
	limit    int
	entries  []entry
	free     []uint32
	occ      [keyGroups]int32
}

// keyGroups is the key groups of a job at parallelism 1
// (KeyGroupRangeAssignment's default max parallelism).
const keyGroups = 128

// Table sizes: a replay's table starts small; a scenario's starts as
// Flink's heap backend does, keyGroups maps of DEFAULT_CAPACITY (128)
// buckets, so that incremental cleanup, which walks bucket positions,
// walks as many.
const (
	minKeyTableBits   = 4
	flinkKeyTableBits = 14
)

func newKeyTable(bits uint32) keyTable {
	var t keyTable
	t.resize(bits)
	return t
}

// segOf returns the segment of slot i.
func (t *keyTable) segOf(i uint32) uint32 { return i >> t.segShift }

// set writes slot i, keeping the occupancy counts.
func (t *keyTable) set(i uint32, s slot) {
	if t.slots[i].ref != 0 {
		t.occ[t.segOf(i)]--
	}
	if s.ref != 0 {
		t.occ[t.segOf(i)]++
	}
	t.slots[i] = s
}

func (t *keyTable) resize(b uint32) {
	old := t.slots
	t.slots = make([]slot, 1<<b)
	t.shift = 32 - b
	t.mask = 1<<b - 1
	t.segShift = 0
	if b > 7 {
		t.segShift = b - 7
	}
	t.occ = [keyGroups]int32{}
	t.limit = len(t.slots) / 4 * 3
	for _, s := range old {
		if s.ref == 0 {
			continue
		}
		i := s.tag >> t.shift
		for t.slots[i].ref != 0 {
			i = (i + 1) & t.mask
		}
		t.set(i, s)
	}
}

// hashKey is a deterministic 64-bit hash of key (a seed fixes every
// output byte, and incremental cleanup follows hash order, so the hash
// must not vary between runs as hash/maphash does).
func hashKey(key []byte) uint64 {
	const p1, p2 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F
	h := uint64(len(key)) * p1
	for len(key) >= 8 {
		h = bits.RotateLeft64(h^binary.LittleEndian.Uint64(key)*p2, 31) * p1
		key = key[8:]
	}
	var w uint64
	for i, c := range key {
		w |= uint64(c) << (8 * i)
	}
	h = bits.RotateLeft64(h^w*p2, 31) * p1
	// fmix64 (MurmurHash3's finalizer): every input bit reaches the top
	// bits, which pick the home cell.
	h ^= h >> 33
	h *= 0xFF51AFD7ED558CCD
	h ^= h >> 33
	h *= 0xC4CEB9FE1A85EC53
	h ^= h >> 33
	return h
}

// find returns the entry index of key (hash h), or -1.
func (t *keyTable) find(key []byte, h uint64) int {
	tag := uint32(h >> 32)
	for i := tag >> t.shift; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s.ref == 0 {
			return -1
		}
		if s.tag == tag && bytes.Equal(t.entries[s.ref-1].key, key) {
			return int(s.ref - 1)
		}
	}
}

// findOrInsert returns the entry index of key, adding an empty entry
// (neither value present) when it is absent. It may move every slot and
// the entries slice: entry pointers taken before it are invalid after.
func (t *keyTable) findOrInsert(key []byte, h uint64) int {
	if t.n >= t.limit {
		t.resize(32 - t.shift + 1)
	}
	tag := uint32(h >> 32)
	i := tag >> t.shift
	for ; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s.ref == 0 {
			break
		}
		if s.tag == tag && bytes.Equal(t.entries[s.ref-1].key, key) {
			return int(s.ref - 1)
		}
	}
	var ei uint32
	if k := len(t.free); k > 0 {
		ei = t.free[k-1]
		t.free = t.free[:k-1]
	} else {
		t.entries = append(t.entries, entry{})
		ei = uint32(len(t.entries) - 1)
	}
	e := &t.entries[ei]
	e.key = append(e.key[:0], key...)
	e.tag = tag
	e.used = true
	t.set(i, slot{tag: tag, ref: ei + 1})
	t.n++
	return int(ei)
}

// removeAt frees the entry in slot i and shifts back the slots after it
// that would otherwise be unreachable (so slot i may now hold a later
// entry). The entry keeps its buffers for reuse.
func (t *keyTable) removeAt(i uint32) {
	ei := t.slots[i].ref - 1
	e := &t.entries[ei]
	e.used = false
	e.gen++
	e.indexed, e.expired = false, false
	e.main.present, e.wait.present = false, false
	t.free = append(t.free, ei)
	t.n--
	j := i
	for {
		t.set(i, slot{})
		for {
			j = (j + 1) & t.mask
			s := t.slots[j]
			if s.ref == 0 {
				return
			}
			home := s.tag >> t.shift
			if (j-home)&t.mask >= (j-i)&t.mask {
				t.set(i, s)
				i = j
				break
			}
		}
	}
}

// slotOf returns the slot holding entry ei.
func (t *keyTable) slotOf(ei int) uint32 {
	tag := t.entries[ei].tag
	for i := tag >> t.shift; ; i = (i + 1) & t.mask {
		if t.slots[i].ref == uint32(ei+1) {
			return i
		}
	}
}
