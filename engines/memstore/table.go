package memstore

// slot is one cell of the hash table: the high 32 bits of the key's hash
// (its tag) and the key's arena ref, 0 for an empty cell. Eight bytes and
// no pointer: the garbage collector never scans the table, and eight slots
// share a cache line.
type slot struct {
	tag uint32
	ref uint32
}

// table is an open-addressing hash set of arena keys, with linear probing
// and backward-shift deletion (no tombstones, so probe sequences stay as
// short as the load allows however many keys come and go).
//
// A key's home cell is the top bits of its tag, so the table can rehash on
// growth from the tags alone, without reading a key. Within a probe
// sequence a slot's tag is compared before its key: keys with the same
// home share their top log2(len(slots)) tag bits, and the other
// 32-log2(len(slots)) bits (7 at 2^25 cells) rule out almost every other
// key before its bytes are read. Equality is always decided on the bytes:
// two different keys are never merged.
//
// Why not a Go map: a map[string]V keyed by strings into the arena is
// scanned by the collector (a pointer per key), needs a lookup and then an
// insert (two hashes, two probes) for a new key, and its slots are 16
// bytes of string header plus the value. This table finds the insert
// position during the lookup and, on eviction, finds a key by its ref
// without reading the key.
type table struct {
	slots []slot // a power of two in length
	shift uint32 // 32 - log2(len(slots)): tag >> shift is the home cell
	mask  uint32 // len(slots) - 1
	n     int    // occupied slots
	limit int    // grow when n reaches limit
}

// minTableBits is log2 of the smallest table.
const minTableBits = 4

// maxLoad is the load factor at which the table doubles, as a fraction
// num/den. Linear probing's unsuccessful search reads about
// (1 + 1/(1-a)^2)/2 slots at load a: 8.5 at 3/4, one or two cache lines.
const maxLoadNum, maxLoadDen = 3, 4

func newTable() table {
	var t table
	t.resize(minTableBits)
	return t
}

// resize makes the table 2^bits slots and reinserts every key from its
// tag.
func (t *table) resize(bits uint32) {
	old := t.slots
	t.slots = make([]slot, 1<<bits)
	t.shift = 32 - bits
	t.mask = 1<<bits - 1
	t.limit = len(t.slots) / maxLoadDen * maxLoadNum
	for _, s := range old {
		if s.ref == 0 {
			continue
		}
		i := s.tag >> t.shift
		for t.slots[i].ref != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = s
	}
}

// grow doubles the table when it is at its load limit. It must run before
// a lookup whose free slot is to be filled, since it moves every slot.
func (t *table) grow() {
	if t.n >= t.limit {
		t.resize(32 - t.shift + 1)
	}
}

// remove deletes the slot holding ref, whose key has the given tag, and
// shifts back the slots after it that would otherwise be unreachable. It
// finds the slot by ref, without reading any key.
func (t *table) remove(tag, ref uint32) {
	i := tag >> t.shift
	for t.slots[i].ref != ref {
		if t.slots[i].ref == 0 {
			panic("memstore: evicted key is not in the table")
		}
		i = (i + 1) & t.mask
	}
	t.n--
	// Backward-shift deletion: slot i is now a hole; a later slot j of the
	// same run may fill it if its home is not in (i, j], cyclically (else
	// the move would put it before its home).
	j := i
	for {
		t.slots[i] = slot{}
		for {
			j = (j + 1) & t.mask
			s := t.slots[j]
			if s.ref == 0 {
				return
			}
			home := s.tag >> t.shift
			if (j-home)&t.mask >= (j-i)&t.mask {
				t.slots[i] = s
				i = j
				break
			}
		}
	}
}

// addGroup is the number of keys AddBatch hashes and looks up ahead of
// inserting them. The home-slot loads of a group are independent, so the
// processor overlaps their cache misses; 32 keys of a few dozen bytes and
// their slots stay in L1.
const addGroup = 32

// AddBatch implements engines.BatchAdder: Add for each key of a run, in
// order. (It lives with the table because what it adds to Add is the
// table's look-ahead.)
//
// In groups of addGroup keys, a first pass hashes every key and loads the
// cache line of its home slot, where its probe starts; those loads do not
// depend on each other, so their misses overlap. (It does not load the
// next line too, as eviction does: a lookup usually ends in its home
// line, a removal's backward shift often does not; BENCHMARKS.md,
// "Batched Add", has the measurement.) The
// second pass adds the keys one by one with Add's own code, finding the
// lines in cache. Results are Add's exactly: the first pass only reads,
// and a key added earlier in the group is visible to a later one. A table
// that grows during a group only makes the loaded lines useless, never
// the result wrong.
func (s *Store) AddBatch(keys []byte, ends []int32, expiresAt []int64, added []bool) error {
	var tags [addGroup]uint32
	start := int32(0)
	for g := 0; g < len(ends); g += addGroup {
		m := min(addGroup, len(ends)-g)
		t := &s.tab
		var sink uint32
		off := start
		for k := range m {
			end := ends[g+k]
			tag := s.tag(keys[off:end])
			tags[k] = tag
			sink += t.slots[tag>>t.shift].ref
			off = end
		}
		s.sink += sink
		off = start
		for k := range m {
			end := ends[g+k]
			ok, err := s.add(keys[off:end], tags[k], expiresAt[g+k])
			if err != nil {
				return err
			}
			added[g+k] = ok
			off = end
		}
		start = off
	}
	return nil
}
