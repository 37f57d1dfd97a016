package pebblestore

// bloom is a split block Bloom filter (the layout of Parquet's): blocks of
// eight 32-bit words, 32 bytes, so that a key's bits lie in one cache line;
// a key sets one bit in each word of the block its hash picks. It never
// answers no for a key it holds; for other keys it answers yes with a
// probability that depends on its bits per key: measured by
// TestBloomFalsePositives at bloomBitsPerKey, under 0.2%.
type bloom struct {
	blocks [][8]uint32
	n      int // keys added
}

// bloomBitsPerKey is the filters' size: 20 bits (2.5 bytes) per key.
const bloomBitsPerKey = 20

// bloomSalt are Parquet's odd constants: word i's bit is bit
// (key*salt[i])>>27.
var bloomSalt = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

// newBloom returns a filter sized for keys keys.
func newBloom(keys int) bloom {
	nb := max(1, (keys*bloomBitsPerKey+255)/256)
	return bloom{blocks: make([][8]uint32, nb)}
}

// block returns the block of hash h: its high 32 bits, scaled.
func (b *bloom) block(h uint64) *[8]uint32 {
	return &b.blocks[(h>>32)*uint64(len(b.blocks))>>32]
}

// add adds the key of hash h.
func (b *bloom) add(h uint64) {
	blk := b.block(h)
	k := uint32(h)
	for i, s := range bloomSalt {
		blk[i] |= 1 << ((k * s) >> 27)
	}
	b.n++
}

// has reports whether the key of hash h may have been added.
func (b *bloom) has(h uint64) bool {
	blk := b.block(h)
	k := uint32(h)
	for i, s := range bloomSalt {
		if blk[i]&(1<<((k*s)>>27)) == 0 {
			return false
		}
	}
	return true
}

// bytes returns the filter's memory.
func (b *bloom) bytes() int64 { return int64(len(b.blocks)) * 32 }

// growingBloom is the filter of the keys that never expire, whose number
// only grows: a chain of blooms, each four times the capacity of the one
// before, so that a store of n keys has about log4(n / 16384) of them.
type growingBloom struct {
	segs []bloom
	cap  int // capacity of the last segment
}

const growingFirst = 1 << 14

// add adds the key of hash h.
func (g *growingBloom) add(h uint64) {
	if len(g.segs) == 0 || g.segs[len(g.segs)-1].n >= g.cap {
		if g.cap == 0 {
			g.cap = growingFirst
		} else {
			g.cap *= 4
		}
		g.segs = append(g.segs, newBloom(g.cap))
	}
	g.segs[len(g.segs)-1].add(h)
}

// has reports whether the key of hash h may have been added.
func (g *growingBloom) has(h uint64) bool {
	for i := range g.segs {
		if g.segs[i].has(h) {
			return true
		}
	}
	return false
}

// bytes returns the chain's memory.
func (g *growingBloom) bytes() int64 {
	var n int64
	for i := range g.segs {
		n += g.segs[i].bytes()
	}
	return n
}
