package memstore

import (
	"math"
	"math/bits"
)

// expiryItem is one key in the expiry index: its expiry and where to find
// it (arena ref and hash tag, enough to remove it from the table without
// reading the key). Sixteen bytes and no pointer, so the index is
// invisible to the garbage collector and cheap to move between buckets.
type expiryItem struct {
	at  uint64 // expiry, order-preserving transform of the signed time
	ref uint32
	tag uint32
}

// orderKey maps a signed time to an unsigned one that sorts the same way.
func orderKey(t int64) uint64 { return uint64(t) ^ (1 << 63) }

// expiryIndex is a radix heap (a monotone priority queue) of key expiries.
//
// Dedup eviction only ever asks for "everything at or below the watermark",
// and the watermark never moves back, which is exactly what a radix heap is
// good at: Push is O(1), and each item is moved between buckets at most 16
// times over its life (base 16, see bucketOf), so evicting k keys costs
// O(k) amortized, however many keys stay. A binary heap would pay
// O(log n) cache misses per evicted key, which grows with the keys that
// stay.
//
// Buckets cover ascending, disjoint ranges, so popUpTo takes every bucket
// whose largest item is at or below the watermark whole, without moving
// its items, and redistributes only the one bucket the watermark cuts.
// (Popping one minimum at a time, the textbook way, redistributed a small
// bucket per evicted key and cost 2-3x more per key; see BENCHMARKS.md.)
//
// Invariant: every item in a bucket is >= last and sits in the bucket
// bucketOf gives it for the current last. last only advances to the
// minimum of a bucket that is being redistributed, which is at or below
// the watermark being applied, and every item of that bucket then lands
// in a lower bucket. An item pushed below last (only possible when a
// caller adds a key that an earlier watermark would already have expired)
// goes to a small straggler list checked on every Evict.
type expiryIndex struct {
	last uint64
	// nonEmpty has bit b set when bucket b is non-empty.
	nonEmpty [(numBuckets + 63) / 64]uint64
	buckets  [numBuckets]itemList
	minOf    [numBuckets]uint64
	maxOf    [numBuckets]uint64
	// stragglers are items below last; they all go at the next Evict.
	stragglers []expiryItem
	// spare holds empty chunks for reuse: items move between buckets
	// through recycled chunks, never through a growing slice.
	spare []*itemChunk
	size  int
}

// chunkItems is the items of one chunk: 4 KiB.
const chunkItems = 256

// itemChunk is a fixed block of items. Buckets are lists of chunks, not
// slices, because a bucket's size swings between zero and the whole
// window as the watermark advances: a slice would regrow (allocate, copy,
// zero fresh pages) every time a bucket reaches a new size, and keep the
// capacity of every bucket's largest size. Chunks cost one pointer per 256
// items and are recycled between buckets.
type itemChunk [chunkItems]expiryItem

// itemList is one bucket: full chunks, then a last chunk holding tail items.
type itemList struct {
	chunks []*itemChunk
	tail   int
}

func (x *expiryIndex) chunk() *itemChunk {
	if k := len(x.spare); k > 0 {
		c := x.spare[k-1]
		x.spare = x.spare[:k-1]
		return c
	}
	return new(itemChunk)
}

func (x *expiryIndex) add(l *itemList, it expiryItem) {
	if len(l.chunks) == 0 || l.tail == chunkItems {
		l.chunks = append(l.chunks, x.chunk())
		l.tail = 0
	}
	l.chunks[len(l.chunks)-1][l.tail] = it
	l.tail++
}

// take empties l and returns its chunks with the length of the last one.
// The returned slice is valid until the next add to l.
func (l *itemList) take() ([]*itemChunk, int) {
	cs, tail := l.chunks, l.tail
	l.chunks, l.tail = l.chunks[:0], 0
	return cs, tail
}

// items returns the items of chunk k of a list taken with take.
func items(cs []*itemChunk, tail, k int) []expiryItem {
	if k == len(cs)-1 {
		return cs[k][:tail]
	}
	return cs[k][:]
}

func newExpiryIndex() expiryIndex {
	var x expiryIndex
	for i := range x.minOf {
		x.minOf[i] = math.MaxUint64
	}
	return x
}

// Radix: items are bucketed by their highest base-16 digit that differs
// from last, and by their value of that digit. An item moves to a lower
// bucket each time its bucket is redistributed, so base 16 bounds the
// moves of an item by 16 digits where base 2 allowed 64 bits: in a
// window spanning 2^33 microseconds evicted 2^23 at a time, about 3 moves
// instead of 10, which is what kept eviction cost from growing with the
// window (BENCHMARKS.md, BenchmarkEvict).
const (
	digitBits  = 4
	digitVals  = 1 << digitBits
	numDigits  = 64 / digitBits
	eqBucket   = 0 // items equal to last
	numBuckets = 1 + numDigits*digitVals
)

// bucketOf returns the bucket of an item at or above last: 0 if equal to
// last, else 1 + 16*d + v for its highest differing digit d and its value
// v there. Buckets in increasing order hold increasing, disjoint ranges:
// items of (d, v) share last's digits above d and have digit v at d.
func (x *expiryIndex) bucketOf(at uint64) int {
	diff := at ^ x.last
	if diff == 0 {
		return eqBucket
	}
	d := (63 - bits.LeadingZeros64(diff)) / digitBits
	v := int(at>>(d*digitBits)) & (digitVals - 1)
	return 1 + d*digitVals + v
}

// lowest returns the lowest non-empty bucket, or -1.
func (x *expiryIndex) lowest() int {
	for w, bitsSet := range x.nonEmpty {
		if bitsSet != 0 {
			return w*64 + bits.TrailingZeros64(bitsSet)
		}
	}
	return -1
}

func (x *expiryIndex) push(it expiryItem) {
	x.size++
	if it.at < x.last {
		x.stragglers = append(x.stragglers, it)
		return
	}
	x.place(it)
}

// place puts an item at or above last into its bucket.
func (x *expiryIndex) place(it expiryItem) {
	b := x.bucketOf(it.at)
	x.add(&x.buckets[b], it)
	x.minOf[b] = min(x.minOf[b], it.at)
	x.maxOf[b] = max(x.maxOf[b], it.at)
	x.nonEmpty[b/64] |= 1 << (b % 64)
}

// popUpTo removes every item at or below w (transformed) and passes them
// to fn, a run at a time (a run is valid only during the call).
func (x *expiryIndex) popUpTo(w uint64, fn func([]expiryItem)) int {
	n := 0
	if len(x.stragglers) > 0 {
		// Partition: evicted stragglers first, kept ones after.
		st := x.stragglers
		k := 0
		for i, it := range st {
			if it.at <= w {
				st[i], st[k] = st[k], st[i]
				k++
			}
		}
		if k > 0 {
			fn(st[:k])
			n += k
			x.stragglers = st[:copy(st, st[k:])]
		}
	}
	// Buckets hold ascending, disjoint ranges: bucket i's items are all
	// below bucket i+1's. So every bucket whose largest item is at or
	// below w goes whole, in one run per chunk and without moving an
	// item; only the bucket that w cuts is redistributed, around its
	// minimum, and the loop goes on with the lower buckets that fills.
	for {
		i := x.lowest()
		if i < 0 {
			break
		}
		if x.minOf[i] > w {
			break
		}
		whole := x.maxOf[i] <= w
		if !whole {
			x.last = x.minOf[i]
		}
		x.minOf[i], x.maxOf[i] = math.MaxUint64, 0
		x.nonEmpty[i/64] &^= 1 << (i % 64)
		// When bucket i is redistributed, every item moves to a lower
		// bucket (its highest digit differing from the new last, its
		// minimum, is below bucket i's digit), so bucket i is not added
		// to while its chunks are read.
		// Each chunk is recycled as soon as it is read, so the lower
		// buckets fill the chunks just read, still in cache, instead of
		// cold or fresh memory: redistributing a bucket of millions of
		// items needs no more than a chunk per bucket of extra memory.
		cs, tail := x.buckets[i].take()
		for k := range cs {
			its := items(cs, tail, k)
			if whole {
				fn(its)
				n += len(its)
			} else {
				for _, it := range its {
					x.place(it)
				}
			}
			x.spare = append(x.spare, cs[k])
		}
	}
	x.size -= n
	return n
}
