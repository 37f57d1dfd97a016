package memstore

import (
	"math"
	"math/bits"
)

// keyRef locates a key's bytes in the arena without holding a pointer, so
// that the expiry index is invisible to the garbage collector.
type keyRef struct {
	slab uint32
	off  uint32
	n    uint32
}

type expiryItem struct {
	at  uint64 // expiry, order-preserving transform of the signed time
	ref keyRef
}

// orderKey maps a signed time to an unsigned one that sorts the same way.
func orderKey(t int64) uint64 { return uint64(t) ^ (1 << 63) }

// expiryIndex is a radix heap (a monotone priority queue) of key expiries.
//
// Dedup eviction only ever asks for "everything at or below the watermark",
// and the watermark never moves back, which is exactly what a radix heap is
// good at: Push is O(1), and each item is moved between buckets at most 64
// times over its life, so evicting k keys costs O(k) amortized, however many
// keys stay. A binary heap would pay O(log n) cache misses per evicted key,
// which grows with the keys that stay.
//
// Invariant: every item in bucket i >= 1 is >= last and its highest bit
// that differs from last is bit i-1; bucket 0 holds items equal to last.
// last only advances to the minimum of a bucket that is being evicted, so it
// never exceeds a watermark already applied. An item pushed below last (only
// possible when a caller adds a key that an earlier watermark would already
// have expired) goes to a small straggler list checked on every Evict.
type expiryIndex struct {
	last       uint64
	nonEmpty   uint64 // bit i set when bucket i+1 is non-empty
	buckets    [65][]expiryItem
	minOf      [65]uint64
	stragglers []expiryItem
	size       int
}

func newExpiryIndex() *expiryIndex {
	x := &expiryIndex{}
	for i := range x.minOf {
		x.minOf[i] = math.MaxUint64
	}
	return x
}

func (x *expiryIndex) bucketOf(at uint64) int {
	if at == x.last {
		return 0
	}
	return 64 - bits.LeadingZeros64(at^x.last)
}

func (x *expiryIndex) push(it expiryItem) {
	x.size++
	if it.at < x.last {
		x.stragglers = append(x.stragglers, it)
		return
	}
	b := x.bucketOf(it.at)
	x.buckets[b] = append(x.buckets[b], it)
	if it.at < x.minOf[b] {
		x.minOf[b] = it.at
	}
	if b > 0 {
		x.nonEmpty |= 1 << (b - 1)
	}
}

// popUpTo calls fn for every item at or below w (transformed) and removes it.
func (x *expiryIndex) popUpTo(w uint64, fn func(keyRef)) int {
	n := 0
	if len(x.stragglers) > 0 {
		kept := x.stragglers[:0]
		for _, it := range x.stragglers {
			if it.at <= w {
				fn(it.ref)
				n++
			} else {
				kept = append(kept, it)
			}
		}
		x.stragglers = kept
	}
	for {
		if b0 := x.buckets[0]; len(b0) > 0 {
			if x.last > w {
				break
			}
			for _, it := range b0 {
				fn(it.ref)
			}
			n += len(b0)
			x.buckets[0] = b0[:0]
			x.minOf[0] = math.MaxUint64
			continue
		}
		if x.nonEmpty == 0 {
			break
		}
		i := bits.TrailingZeros64(x.nonEmpty) + 1
		if x.minOf[i] > w {
			break
		}
		x.last = x.minOf[i]
		items := x.buckets[i]
		x.buckets[i] = items[:0]
		x.minOf[i] = math.MaxUint64
		x.nonEmpty &^= 1 << (i - 1)
		for _, it := range items {
			b := x.bucketOf(it.at)
			x.buckets[b] = append(x.buckets[b], it)
			if it.at < x.minOf[b] {
				x.minOf[b] = it.at
			}
			if b > 0 {
				x.nonEmpty |= 1 << (b - 1)
			}
		}
	}
	x.size -= n
	return n
}
