package curve

import (
	"math"
	"slices"
)

// shared counts, for every tracked delay at once, the stored keys that
// every delay of the curve stores alike (an event's first emitted copy,
// not late at any delay: most keys). Such a key, stored with event time
// y (ms, rounded up), goes at delay D once E_j >= y + c D: one count per
// y serves every delay, each delay sweeping its own pointer, E - c D,
// over the counts; a key costs one increment, not one per delay.
type shared struct {
	cdms []int64 // c x delay (ms), increasing
	// cnt counts keys by y in [lo, lo+len(cnt)), per millisecond and
	// per block of blockMs; over holds the others.
	cnt []int32
	blk []int64
	lo  int64
	set bool
	// over holds the keys whose y lies outside the ring.
	over map[int64]int32
	// ptr[i] is the largest y that delay i has evicted (MinInt64: none);
	// removed[i] counts the keys it evicted, due[i] those stored at or
	// below its pointer, which its next eviction removes.
	ptr, removed, due []int64
	added             int64
}

func newShared(cdms []int64, span int64) *shared {
	n := int64(blockMs)
	for n < span {
		n <<= 1
	}
	s := &shared{cdms: cdms, cnt: make([]int32, n), blk: make([]int64, n/blockMs), over: map[int64]int32{},
		ptr: make([]int64, len(cdms)), removed: make([]int64, len(cdms)), due: make([]int64, len(cdms))}
	for i := range s.ptr {
		s.ptr[i] = math.MinInt64
	}
	return s
}

// live returns delay i's keys in state.
func (s *shared) live(i int) int64 { return s.added - s.removed[i] }

// add stores a key of event time y at every delay.
func (s *shared) add(y int64) {
	s.added++
	// The pointers fall as the delay grows: the delays that passed y
	// already are a prefix.
	for i := range s.ptr {
		if y > s.ptr[i] {
			break
		}
		s.due[i]++
	}
	if last := len(s.ptr) - 1; y <= s.ptr[last] {
		return // every delay removes it at its next eviction
	}
	if !s.set {
		s.lo, s.set = y, true
	}
	n := int64(len(s.cnt))
	if y >= s.lo && y-s.lo < n {
		k := y & (n - 1)
		s.cnt[k]++
		s.blk[k/blockMs]++
		return
	}
	s.over[y]++
}

// sum returns the keys counted at y in (a, b], within the ring.
func (s *shared) sum(a, b int64) int64 {
	a = max(a, s.lo-1)
	b = min(b, s.lo+int64(len(s.cnt))-1)
	mask := int64(len(s.cnt) - 1)
	var t int64
	for y := a + 1; y <= b; {
		k := y & mask
		if k%blockMs == 0 && y+blockMs-1 <= b {
			t += s.blk[k/blockMs]
			y += blockMs
			continue
		}
		t += int64(s.cnt[k])
		y++
	}
	return t
}

// evict removes, at every delay, the keys with y + c D <= e.
func (s *shared) evict(e int64) {
	for i := range s.ptr {
		s.removed[i] += s.due[i]
		s.due[i] = 0
	}
	if !s.set {
		for i, c := range s.cdms {
			s.ptr[i] = max(s.ptr[i], e-c)
		}
		return
	}
	old := slices.Clone(s.ptr)
	for i, c := range s.cdms {
		np := e - c
		if np <= s.ptr[i] {
			continue
		}
		s.removed[i] += s.sum(s.ptr[i], np)
		s.ptr[i] = np
	}
	for y, c := range s.over {
		for i := range s.ptr {
			if y > old[i] && y <= s.ptr[i] {
				s.removed[i] += int64(c)
			}
		}
	}
	// Every delay passed the counts up to the slowest pointer: clear
	// them and move the ring's start.
	slowest := s.ptr[len(s.ptr)-1]
	n := int64(len(s.cnt))
	mask := n - 1
	for s.lo <= slowest {
		k := s.lo & mask
		if k%blockMs == 0 && s.lo+blockMs-1 <= slowest {
			clear(s.cnt[k : k+blockMs])
			s.blk[k/blockMs] = 0
			s.lo += blockMs
			continue
		}
		s.blk[k/blockMs] -= int64(s.cnt[k])
		s.cnt[k] = 0
		s.lo++
	}
	for y, c := range s.over {
		switch {
		case y <= slowest:
			delete(s.over, y)
		case y >= s.lo && y-s.lo < n:
			k := y & mask
			s.cnt[k] += c
			s.blk[k/blockMs] += int64(c)
			delete(s.over, y)
		}
	}
}
