package memstore

// The keys' hash table is engines/internal/oatable's: 8-byte,
// pointer-free slots of a hash tag and an arena ref (the collector never
// scans the table, and eight slots share a cache line), linear probing,
// backward-shift deletion.
//
// Why not a Go map: a map[string]V keyed by strings into the arena is
// scanned by the collector (a pointer per key), needs a lookup and then an
// insert (two hashes, two probes) for a new key, and its slots are 16
// bytes of string header plus the value. This table finds the insert
// position during the lookup and, on eviction, finds a key by its ref
// without reading the key. The tag also rules out almost every other key
// of a probe sequence before its bytes are read (keys with the same home
// share their top log2(len(slots)) tag bits, and the other
// 32-log2(len(slots)) bits, 7 at 2^25 cells, tell them apart).

// minTableBits is log2 of the smallest table.
const minTableBits = 4

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
			sink += t.Slots[t.Home(tag)].Ref
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
