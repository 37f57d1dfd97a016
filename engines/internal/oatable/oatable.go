// Package oatable is the open-addressing hash table the in-memory state
// stores share (engines/memstore's keys, engines/flink's keyed state):
// 8-byte, pointer-free slots of a hash tag and a reference, linear
// probing from the tag's home cell, growth at 3/4 load by rehashing the
// tags alone, and backward-shift deletion (no tombstones, so probe
// sequences stay as short as the load allows however many keys come and
// go).
//
// The table holds no keys: a slot's Ref (never 0, which marks an empty
// slot) names the caller's record of the key, and the caller compares
// keys in its own probe loop, from Home and Next:
//
//	for i := t.Home(tag); ; i = t.Next(i) {
//		s := t.Slots[i]
//		if s.Ref == 0 {
//			// absent: t.Put(i, Slot{tag, ref}) inserts it here
//		}
//		if s.Tag == tag && equal(s.Ref, key) {
//			// found in slot i
//		}
//	}
//
// A key's home cell is the top bits of its tag, so the table can rehash
// on growth without reading a key, and slot order is hash order at every
// size (a cursor over the slots keeps its place in hash order when the
// table doubles). Within a probe sequence a slot's tag rules out almost
// every other key before its bytes are read; equality is always decided
// on the bytes.
//
// The slots are also split into Segments equal segments, whose occupied
// slots are counted (Occupied): Flink's incremental cleanup skips an
// empty key group as Flink's visitor does.
package oatable

// Slot is one cell: the high 32 bits of the key's hash (its tag) and the
// caller's reference to the key, 0 for an empty cell.
type Slot struct {
	Tag uint32
	Ref uint32
}

// Segments is the number of segments whose occupied slots are counted.
const Segments = 128

// segBits is log2(Segments).
const segBits = 7

// maxLoadNum/maxLoadDen is the load at which the table doubles. Linear
// probing's unsuccessful search reads about (1 + 1/(1-a)^2)/2 slots at
// load a: 8.5 at 3/4, one or two cache lines.
const maxLoadNum, maxLoadDen = 3, 4

// Table is the table. Its zero value is not usable; see New. Slots may be
// read directly (a probe loop, a scan); only the methods write it.
type Table struct {
	// Slots is a power of two in length.
	Slots []Slot
	shift uint32 // 32 - log2(len(Slots)): tag >> shift is the home cell
	mask  uint32 // len(Slots) - 1
	// segShift is log2 of a segment's slots (0 while the table has
	// fewer slots than Segments).
	segShift uint32
	n        int // occupied slots
	limit    int // grow when n reaches limit
	occ      [Segments]int32
}

// New returns an empty table of 2^bits slots (bits from 1 to 31).
func New(bits uint32) Table {
	var t Table
	t.resize(bits)
	return t
}

// Len returns the number of occupied slots.
func (t *Table) Len() int { return t.n }

// Home returns the home cell of tag, where its probe starts.
func (t *Table) Home(tag uint32) uint32 { return tag >> t.shift }

// Next returns the cell after i, wrapping around.
func (t *Table) Next(i uint32) uint32 { return (i + 1) & t.mask }

// Mask returns len(Slots) - 1.
func (t *Table) Mask() uint32 { return t.mask }

// SegmentShift returns log2 of a segment's slots: slot i is in segment
// i >> SegmentShift.
func (t *Table) SegmentShift() uint32 { return t.segShift }

// SegmentOf returns the segment of slot i.
func (t *Table) SegmentOf(i uint32) uint32 { return i >> t.segShift }

// Occupied returns the occupied slots of segment seg.
func (t *Table) Occupied(seg uint32) int32 { return t.occ[seg] }

// resize makes the table 2^bits slots and reinserts every slot from its
// tag.
func (t *Table) resize(bits uint32) {
	old := t.Slots
	t.Slots = make([]Slot, 1<<bits)
	t.shift = 32 - bits
	t.mask = 1<<bits - 1
	t.segShift = 0
	if bits > segBits {
		t.segShift = bits - segBits
	}
	t.occ = [Segments]int32{}
	t.limit = len(t.Slots) / maxLoadDen * maxLoadNum
	for _, s := range old {
		if s.Ref == 0 {
			continue
		}
		i := s.Tag >> t.shift
		for t.Slots[i].Ref != 0 {
			i = (i + 1) & t.mask
		}
		t.occ[i>>t.segShift]++
		t.Slots[i] = s
	}
}

// Grow doubles the table when it is at its load limit. It must run before
// a probe whose free slot is to be filled (Put), since it moves every
// slot.
func (t *Table) Grow() {
	if t.n >= t.limit {
		t.resize(32 - t.shift + 1)
	}
}

// Put fills the empty slot i, where a probe for s.Tag ended, with s
// (s.Ref != 0).
func (t *Table) Put(i uint32, s Slot) {
	t.occ[i>>t.segShift]++
	t.Slots[i] = s
	t.n++
}

// SlotOf returns the slot holding ref, whose key has the given tag,
// found by ref without reading any key. It panics when ref is not in
// the table.
func (t *Table) SlotOf(tag, ref uint32) uint32 {
	i := tag >> t.shift
	for t.Slots[i].Ref != ref {
		if t.Slots[i].Ref == 0 {
			panic("oatable: the ref is not in the table")
		}
		i = (i + 1) & t.mask
	}
	return i
}

// Remove deletes the slot holding ref (SlotOf) and shifts back the slots
// after it that would otherwise be unreachable.
func (t *Table) Remove(tag, ref uint32) { t.RemoveAt(t.SlotOf(tag, ref)) }

// RemoveAt empties the occupied slot i and shifts back the slots after it
// that would otherwise be unreachable, so slot i may now hold a later
// slot's key.
func (t *Table) RemoveAt(i uint32) {
	t.n--
	t.occ[i>>t.segShift]--
	// Backward-shift deletion: slot i is now a hole; a later slot j of the
	// same run may fill it if its home is not in (i, j], cyclically (else
	// the move would put it before its home). A move counts only when it
	// crosses into another segment.
	j := i
	for {
		t.Slots[i] = Slot{}
		for {
			j = (j + 1) & t.mask
			s := t.Slots[j]
			if s.Ref == 0 {
				return
			}
			home := s.Tag >> t.shift
			if (j-home)&t.mask >= (j-i)&t.mask {
				t.Slots[i] = s
				if si, sj := i>>t.segShift, j>>t.segShift; si != sj {
					t.occ[si]++
					t.occ[sj]--
				}
				i = j
				break
			}
		}
	}
}
