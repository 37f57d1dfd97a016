package spark

import (
	"bytes"
	"hash/maphash"
)

// keySet is the set of keys one batch's TTL eviction removed, asked once
// per key a row of the batch sets: was it one of them (a refresh)? It
// reuses its memory from batch to batch (the keys in one buffer, a map of
// hashes to chains of indexes), so a steady batch allocates nothing.
type keySet struct {
	seed maphash.Seed
	buf  []byte
	ends []int32
	// head maps a key's hash to its last index; next chains the indexes
	// of keys with the same hash (-1 ends a chain); taken marks the keys
	// a row set again.
	head  map[uint64]int32
	next  []int32
	taken []bool
}

func newKeySet() keySet {
	return keySet{seed: maphash.MakeSeed(), head: map[uint64]int32{}}
}

// reset empties the set, keeping its memory.
func (s *keySet) reset() {
	s.buf, s.ends, s.next, s.taken = s.buf[:0], s.ends[:0], s.next[:0], s.taken[:0]
	clear(s.head)
}

// len returns the number of keys in the set.
func (s *keySet) len() int { return len(s.ends) }

// add inserts key (the caller adds each key once).
func (s *keySet) add(key []byte) {
	h := maphash.Bytes(s.seed, key)
	i := int32(len(s.ends))
	s.buf = append(s.buf, key...)
	s.ends = append(s.ends, int32(len(s.buf)))
	prev, ok := s.head[h]
	if !ok {
		prev = -1
	}
	s.head[h] = i
	s.next = append(s.next, prev)
	s.taken = append(s.taken, false)
}

// take reports whether key is in the set and not taken yet, and marks it
// taken.
func (s *keySet) take(key []byte) bool {
	i, ok := s.head[maphash.Bytes(s.seed, key)]
	if !ok {
		return false
	}
	for ; i >= 0; i = s.next[i] {
		start := int32(0)
		if i > 0 {
			start = s.ends[i-1]
		}
		if bytes.Equal(s.buf[start:s.ends[i]], key) {
			if s.taken[i] {
				return false
			}
			s.taken[i] = true
			return true
		}
	}
	return false
}
