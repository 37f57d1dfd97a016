// Package expiry is the expiry index of the state stores: the keys of a
// store ordered by expiry, answering the one question dedup eviction asks,
// "remove everything at or below the watermark", at a cost proportional to
// what it removes. The memory store keeps each key's arena ref and hash
// tag in an item, so that it can remove the key from its table without
// reading it; the Pebble store keeps expiries only, to count its
// evictions exactly.
package expiry

import (
	"math"
	"math/bits"
)

// Item is one key in the expiry index: its expiry and where its owner finds
// it (the memory store's arena ref and hash tag, enough to remove it from
// its table without reading the key). Sixteen bytes and no pointer, so the index is
// invisible to the garbage collector and cheap to move between buckets.
type Item struct {
	At  uint64 // expiry, order-preserving transform of the signed time (OrderKey)
	Ref uint32
	Tag uint32
}

// OrderKey maps a signed time to an unsigned one that sorts the same way.
func OrderKey(t int64) uint64 { return uint64(t) ^ (1 << 63) }

// Index answers the one question dedup eviction asks: "remove
// everything at or below the watermark", with a watermark that (almost
// always) moves forward. It is a calendar queue over the live span with a
// radix heap on either side:
//
//   - ring: buckets of fixed event-time width 2^shift microseconds, one per
//     bucket number lo, lo+1, ..., lo+len(ring)-1 (bucket number = at >>
//     shift), kept in a ring so that advancing lo reuses the buckets it
//     passes. An item is written once, into its bucket, and read once, when
//     its bucket is evicted whole: no item moves between buckets, however
//     wide the live span. Only the one bucket the watermark cuts is read
//     item by item, and compacted in place.
//   - near: a radix heap of the items below the ring (bucket < lo): keys
//     added with an expiry the watermark has already passed (rows between
//     the late filter's watermark and the eviction watermark), or below a
//     watermark that moved back.
//   - far: a radix heap of the items beyond the ring (bucket >= lo +
//     len(ring)): far-future expiries (a bad clock). They move into the
//     ring as it advances.
//
// Why not a radix heap alone: it moves an item once per base-16 digit
// between the span one Evict clears and the span the state covers, so 2-3
// times per key at 1e7 live keys, and those moves dominate eviction
// (docs/benchmarks-history.md, "Round 3"). The ring moves almost none.
//
// Sizing, adapted as keys come, with no knob: the ring has at most
// len(ring) >= 1 bucket per ringTarget keys (so a bucket holds hundreds of
// keys on average, and the partly filled last chunk of each bucket wastes
// a few bytes per key), and its width covers the live span: a key beyond
// the ring first grows it (when the key count allows more buckets), else
// coarsens it (doubles the bucket width, merging bucket pairs) when the
// key is just beyond, or when more keys are beyond the ring than in it;
// otherwise it goes to far. The bucket width never shrinks except when the
// index empties; a finer width would only make the cut bucket smaller.
//
// Exactness does not depend on that placement: Evict(w) takes every item
// <= w from near and far (radix heaps, exact), every ring bucket below w's
// bucket whole, and the items <= w of w's own bucket.
type Index struct {
	pool *chunkPool
	near radix
	far  radix

	ring  []itemList // bucket b is ring[b & (len(ring)-1)], for b in [lo, lo+len(ring))
	lo    uint64     // lowest bucket number of the ring
	shift uint       // log2 of the bucket width in microseconds
	// anchored is false until the first item places the ring.
	anchored bool
	inRing   int // items in the ring
	size     int // items in the index

	// scratch collects the expired items of a cut bucket into runs.
	scratch [chunkItems]Item
	// routeFn is x.route, bound once so that pulling from far does not
	// allocate a closure.
	routeFn func([]Item)
}

const (
	// minShift is the finest bucket width, 2^10 us (about a millisecond):
	// a new or emptied index starts there and coarsens to fit its span.
	minShift = 10
	// minRing and maxRing bound the number of ring buckets. maxRing
	// buckets of item lists take 2 MiB, for a state of at least
	// maxRing*ringTarget (33 million) keys.
	minRing = 64
	maxRing = 1 << 16
	// ringTarget is the keys per ring bucket the ring aims at: fewer
	// buckets than keys/ringTarget. Big enough that the partial last chunk
	// of a bucket costs a few bytes per key (half a 4 KiB chunk per 512
	// keys: 4 B/key), small enough that the bucket an Evict cuts is a small
	// share of what it evicts.
	ringTarget = 512
)

// New returns an empty index. Use it at its final address: the first Push
// binds a method value to it.
func New() Index {
	p := &chunkPool{}
	x := Index{pool: p, near: newRadix(p), far: newRadix(p), shift: minShift}
	x.ring = make([]itemList, minRing)
	return x
}

// bind sets routeFn; it must run on the index at its final address (the
// Store's field), since the closure captures the pointer.
func (x *Index) bind() {
	if x.routeFn == nil {
		x.routeFn = x.route
	}
}

// horizon returns the largest expiry the ring covers (saturated).
func (x *Index) horizon() uint64 {
	end := x.lo + uint64(len(x.ring))
	if end > math.MaxUint64>>x.shift {
		return math.MaxUint64
	}
	return end<<x.shift - 1
}

// Push adds an item.
func (x *Index) Push(it Item) {
	x.bind()
	if x.size == 0 {
		// Empty: place the ring at this item, at the finest width. (The
		// ring's buckets are all empty, near and far too.)
		x.anchored = true
		x.shift = minShift
		x.lo = it.At >> x.shift
	}
	x.size++
	b := it.At >> x.shift
	if b < x.lo {
		x.near.push(it)
		return
	}
	if b-x.lo >= uint64(len(x.ring)) && !x.makeRoom(it.At) {
		x.far.push(it)
		if x.far.size > x.inRing && x.shift < 63 {
			// More keys beyond the ring than in it: the ring is too narrow
			// for the data, not looking at an outlier.
			for x.far.size > x.inRing && x.shift < 63 {
				x.coarsen()
			}
		}
		return
	}
	b = it.At >> x.shift
	x.pool.add(&x.ring[b&uint64(len(x.ring)-1)], it)
	x.inRing++
}

// makeRoom grows or coarsens the ring so that it covers at, and reports
// whether it does.
func (x *Index) makeRoom(at uint64) bool {
	for {
		off := at>>x.shift - x.lo
		l := uint64(len(x.ring))
		if off < l {
			return true
		}
		switch {
		case 2*l <= maxRing && 2*l*ringTarget <= uint64(x.size):
			x.grow()
		case off < 2*l && x.shift < 63:
			// Just beyond: the live span outgrew the ring.
			x.coarsen()
		default:
			return false
		}
	}
}

// grow doubles the ring, same width: bucket headers move, items do not.
func (x *Index) grow() {
	old := x.ring
	l := uint64(len(old))
	x.ring = make([]itemList, 2*l)
	for b := x.lo; b < x.lo+l; b++ {
		x.ring[b&(2*l-1)] = old[b&(l-1)]
	}
	x.pullFar()
}

// coarsen doubles the bucket width: bucket pairs (2k, 2k+1) merge into
// bucket k. The first bucket of a pair keeps its chunks; the items of the
// second are appended to it. Rare: it happens while the live span grows.
func (x *Index) coarsen() {
	old := x.ring
	l := uint64(len(old))
	x.ring = make([]itemList, l)
	for b := x.lo; b < x.lo+l; b++ {
		src := &old[b&(l-1)]
		dst := &x.ring[(b>>1)&(l-1)]
		if len(dst.chunks) == 0 {
			*dst = *src
			continue
		}
		cs, tail := src.take()
		for k := range cs {
			for _, it := range items(cs, tail, k) {
				x.pool.add(dst, it)
			}
			x.pool.put(cs[k])
		}
	}
	x.shift++
	x.lo >>= 1
	x.pullFar()
}

// pullFar moves the far items that the ring now covers into it.
func (x *Index) pullFar() {
	if x.far.size > 0 {
		x.far.popUpTo(x.horizon(), x.routeFn)
	}
}

// route places items pulled from far: into the ring, or near if below it.
func (x *Index) route(its []Item) {
	mask := uint64(len(x.ring) - 1)
	for _, it := range its {
		b := it.At >> x.shift
		if b < x.lo {
			x.near.push(it)
			continue
		}
		x.pool.add(&x.ring[b&mask], it)
		x.inRing++
	}
}

// Len returns the number of items.
func (x *Index) Len() int { return x.size }

// PopUpTo removes every item at or below w (transformed) and passes them
// to fn, a run at a time (a run is valid only during the call).
func (x *Index) PopUpTo(w uint64, fn func([]Item)) int {
	x.bind()
	n := x.near.popUpTo(w, fn)
	n += x.far.popUpTo(w, fn)
	wb := w >> x.shift
	if x.anchored && wb >= x.lo {
		l := uint64(len(x.ring))
		mask := l - 1
		if x.inRing > 0 {
			// Buckets below w's bucket go whole, in one run per chunk.
			end := x.lo + l
			if wb < end {
				end = wb
			}
			for b := x.lo; b < end && x.inRing > 0; b++ {
				cs, tail := x.ring[b&mask].take()
				for k := range cs {
					its := items(cs, tail, k)
					fn(its)
					n += len(its)
					x.inRing -= len(its)
					x.pool.put(cs[k])
				}
			}
			if wb < x.lo+l {
				n += x.cut(&x.ring[wb&mask], w, fn)
			}
		}
		// w's bucket, now holding only items above w, is the ring's
		// lowest; the ring's end moves up by as much.
		x.lo = wb
		x.pullFar()
	}
	x.size -= n
	return n
}

// cut evicts the items <= w of one bucket, in runs of up to a chunk, and
// compacts the others in place (a sequential pass over chunks in cache).
func (x *Index) cut(l *itemList, w uint64, fn func([]Item)) int {
	cs, tail := l.chunks, l.tail
	if len(cs) == 0 {
		return 0
	}
	n, run := 0, 0
	kept, wc := 0, 0 // items kept; write position: chunk wc, index kept%chunkItems
	for k := range cs {
		for _, it := range items(cs, tail, k) {
			if it.At <= w {
				x.scratch[run] = it
				run++
				if run == chunkItems {
					fn(x.scratch[:run])
					n += run
					run = 0
				}
				continue
			}
			cs[wc][kept%chunkItems] = it
			kept++
			if kept%chunkItems == 0 {
				wc++
			}
		}
	}
	if run > 0 {
		fn(x.scratch[:run])
		n += run
	}
	x.inRing -= n
	// Keep ceil(kept/chunkItems) chunks; recycle the rest.
	keep := (kept + chunkItems - 1) / chunkItems
	for k := keep; k < len(cs); k++ {
		x.pool.put(cs[k])
	}
	l.chunks = cs[:keep]
	l.tail = kept - (keep-1)*chunkItems
	if keep == 0 {
		l.tail = 0
	}
	return n
}

// chunkItems is the items of one chunk: 4 KiB.
const chunkItems = 256

// itemChunk is a fixed block of items. Buckets are lists of chunks, not
// slices, because a bucket's size swings between zero and many thousands
// as the watermark advances: a slice would regrow (allocate, copy, zero
// fresh pages) every time a bucket reaches a new size, and keep the
// capacity of every bucket's largest size. Chunks cost one pointer per 256
// items and are recycled between buckets.
type itemChunk [chunkItems]Item

// itemList is one bucket: full chunks, then a last chunk holding tail items.
type itemList struct {
	chunks []*itemChunk
	tail   int
}

// chunkPool holds empty chunks for reuse, shared by the ring and both
// radix heaps: items move between structures through recycled chunks,
// never through a growing slice.
type chunkPool struct {
	spare []*itemChunk
}

func (p *chunkPool) get() *itemChunk {
	if k := len(p.spare); k > 0 {
		c := p.spare[k-1]
		p.spare = p.spare[:k-1]
		return c
	}
	return new(itemChunk)
}

func (p *chunkPool) put(c *itemChunk) { p.spare = append(p.spare, c) }

// add appends it to l.
func (p *chunkPool) add(l *itemList, it Item) {
	if len(l.chunks) == 0 || l.tail == chunkItems {
		l.chunks = append(l.chunks, p.get())
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
func items(cs []*itemChunk, tail, k int) []Item {
	if k == len(cs)-1 {
		return cs[k][:tail]
	}
	return cs[k][:]
}

// radix is a radix heap (a monotone priority queue) of expiries: the
// near and far sides of the expiry index, which hold few items in steady
// state (see Index).
//
// Push is O(1), and each item is moved between buckets at most 16 times
// over its life (base 16, see bucketOf). Buckets cover ascending, disjoint
// ranges, so popUpTo takes every bucket whose largest item is at or below
// the watermark whole, without moving its items, and redistributes only
// the one bucket the watermark cuts.
//
// Invariant: every item in a bucket is >= last and sits in the bucket
// bucketOf gives it for the current last. last only advances to the
// minimum of a bucket that is being redistributed, which is at or below
// the watermark being applied, and every item of that bucket then lands
// in a lower bucket. An item pushed below last (only possible when a
// caller adds a key that an earlier watermark would already have expired)
// goes to a small straggler list checked on every Evict.
type radix struct {
	pool *chunkPool
	last uint64
	// nonEmpty has bit b set when bucket b is non-empty.
	nonEmpty [(numBuckets + 63) / 64]uint64
	buckets  [numBuckets]itemList
	minOf    [numBuckets]uint64
	maxOf    [numBuckets]uint64
	// stragglers are items below last; they all go at the next Evict.
	stragglers []Item
	size       int
}

// Radix: items are bucketed by their highest base-16 digit that differs
// from last, and by their value of that digit. An item moves to a lower
// bucket each time its bucket is redistributed, so base 16 bounds the
// moves of an item by 16 digits where base 2 allowed 64 bits.
const (
	digitBits  = 4
	digitVals  = 1 << digitBits
	numDigits  = 64 / digitBits
	eqBucket   = 0 // items equal to last
	numBuckets = 1 + numDigits*digitVals
)

func newRadix(p *chunkPool) radix {
	x := radix{pool: p}
	for i := range x.minOf {
		x.minOf[i] = math.MaxUint64
	}
	return x
}

// bucketOf returns the bucket of an item at or above last: 0 if equal to
// last, else 1 + 16*d + v for its highest differing digit d and its value
// v there. Buckets in increasing order hold increasing, disjoint ranges:
// items of (d, v) share last's digits above d and have digit v at d.
func (x *radix) bucketOf(at uint64) int {
	diff := at ^ x.last
	if diff == 0 {
		return eqBucket
	}
	d := (63 - bits.LeadingZeros64(diff)) / digitBits
	v := int(at>>(d*digitBits)) & (digitVals - 1)
	return 1 + d*digitVals + v
}

// lowest returns the lowest non-empty bucket, or -1.
func (x *radix) lowest() int {
	for w, bitsSet := range x.nonEmpty {
		if bitsSet != 0 {
			return w*64 + bits.TrailingZeros64(bitsSet)
		}
	}
	return -1
}

func (x *radix) push(it Item) {
	x.size++
	if it.At < x.last {
		x.stragglers = append(x.stragglers, it)
		return
	}
	x.place(it)
}

// place puts an item at or above last into its bucket.
func (x *radix) place(it Item) {
	b := x.bucketOf(it.At)
	x.pool.add(&x.buckets[b], it)
	x.minOf[b] = min(x.minOf[b], it.At)
	x.maxOf[b] = max(x.maxOf[b], it.At)
	x.nonEmpty[b/64] |= 1 << (b % 64)
}

// popUpTo removes every item at or below w and passes them to fn, a run at
// a time (a run is valid only during the call). fn must not push to x.
func (x *radix) popUpTo(w uint64, fn func([]Item)) int {
	if x.size == 0 {
		return 0
	}
	n := 0
	if len(x.stragglers) > 0 {
		// Partition: evicted stragglers first, kept ones after.
		st := x.stragglers
		k := 0
		for i, it := range st {
			if it.At <= w {
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
		// to while its chunks are read. Each chunk is recycled as soon as
		// it is read, so the lower buckets fill the chunks just read,
		// still in cache.
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
			x.pool.put(cs[k])
		}
	}
	x.size -= n
	return n
}
