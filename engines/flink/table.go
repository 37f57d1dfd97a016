package flink

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/dedupsim/dedupsim/engines/internal/oatable"
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

// keyTable maps key bytes to entries without allocating per lookup: the
// slots are engines/internal/oatable's (open addressing with linear
// probing and backward-shift deletion, each slot a hash tag and the entry
// index + 1, no pointer, so the collector never scans them), the entries
// in a slice recycled through a free list. A key's home cell is the top
// bits of its tag, so slot order is hash order at every size, and a
// cursor over the slots (incremental cleanup's) keeps its place in hash
// order when the table doubles. Memory is the peak number of entries held
// at once, never the number of keys ever seen.
//
// The slots are also split into keyGroups equal segments (the table's
// counted segments), the key groups of Flink's heap backend (one
// CopyOnWriteStateMap each, its bucket array a segment); their occupied
// slots are counted, so that incremental cleanup skips an empty key group
// as Flink's visitor does.
type keyTable struct {
	oatable.Table
	entries []entry
	free    []uint32
}

// keyGroups is the key groups of a job at parallelism 1
// (KeyGroupRangeAssignment's default max parallelism).
const keyGroups = oatable.Segments

// Table sizes: a replay's table starts small; a scenario's starts as
// Flink's heap backend does, keyGroups maps of DEFAULT_CAPACITY (128)
// buckets, so that incremental cleanup, which walks bucket positions,
// walks as many.
const (
	minKeyTableBits   = 4
	flinkKeyTableBits = 14
)

func newKeyTable(bits uint32) keyTable {
	return keyTable{Table: oatable.New(bits)}
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
	for i := t.Home(tag); ; i = t.Next(i) {
		s := t.Slots[i]
		if s.Ref == 0 {
			return -1
		}
		if s.Tag == tag && bytes.Equal(t.entries[s.Ref-1].key, key) {
			return int(s.Ref - 1)
		}
	}
}

// findOrInsert returns the entry index of key, adding an empty entry
// (neither value present) when it is absent. It may move every slot and
// the entries slice: entry pointers taken before it are invalid after.
func (t *keyTable) findOrInsert(key []byte, h uint64) int {
	t.Grow()
	tag := uint32(h >> 32)
	i := t.Home(tag)
	for ; ; i = t.Next(i) {
		s := t.Slots[i]
		if s.Ref == 0 {
			break
		}
		if s.Tag == tag && bytes.Equal(t.entries[s.Ref-1].key, key) {
			return int(s.Ref - 1)
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
	t.Put(i, oatable.Slot{Tag: tag, Ref: ei + 1})
	return int(ei)
}

// removeAt frees the entry in slot i and shifts back the slots after it
// that would otherwise be unreachable (so slot i may now hold a later
// entry). The entry keeps its buffers for reuse.
func (t *keyTable) removeAt(i uint32) {
	ei := t.Slots[i].Ref - 1
	e := &t.entries[ei]
	e.used = false
	e.gen++
	e.indexed, e.expired = false, false
	e.main.present, e.wait.present = false, false
	t.free = append(t.free, ei)
	t.RemoveAt(i)
}

// slotOf returns the slot holding entry ei.
func (t *keyTable) slotOf(ei int) uint32 {
	return t.SlotOf(t.entries[ei].tag, uint32(ei+1))
}
