package partition

import "math/bits"

// The mixing steps of Spark's Murmur3_x86_32
// (common/unsafe/src/main/java/org/apache/spark/unsafe/hash/Murmur3_x86_32.java),
// which is Guava's 32-bit murmur3. Java's int arithmetic wraps like uint32's,
// and >>> is the unsigned shift, so uint32 reproduces it bit for bit.

const (
	c1 = 0xcc9e2d51
	c2 = 0x1b873593
)

func mixK1(k1 uint32) uint32 {
	k1 *= c1
	k1 = bits.RotateLeft32(k1, 15)
	k1 *= c2
	return k1
}

func mixH1(h1, k1 uint32) uint32 {
	h1 ^= k1
	h1 = bits.RotateLeft32(h1, 13)
	h1 = h1*5 + 0xe6546b64
	return h1
}

func fmix(h1, length uint32) uint32 {
	h1 ^= length
	h1 ^= h1 >> 16
	h1 *= 0x85ebca6b
	h1 ^= h1 >> 13
	h1 *= 0xc2b2ae35
	h1 ^= h1 >> 16
	return h1
}

// hashInt is Murmur3_x86_32.hashInt(input, seed).
func hashInt(input, seed uint32) uint32 {
	return fmix(mixH1(seed, mixK1(input)), 4)
}

// hashLong is Murmur3_x86_32.hashLong(input, seed): the low word, then the
// high word, finalized with length 8.
func hashLong(input uint64, seed uint32) uint32 {
	h1 := mixH1(seed, mixK1(uint32(input)))
	h1 = mixH1(h1, mixK1(uint32(input>>32)))
	return fmix(h1, 8)
}

// hashBytes is Murmur3_x86_32.hashUnsafeBytes(b, offset, len, seed), the
// variant Murmur3Hash uses for strings and binary. The aligned part is read
// as little-endian 32-bit words (Platform.getInt on the little-endian
// machines Spark runs on). The tail differs from standard murmur3 (Spark's
// hashUnsafeBytes2): each remaining byte is sign-extended to an int and goes
// through a full mixK1/mixH1 round of its own, instead of the remaining
// bytes being packed into one word that is xored in without the h1 rotation.
func hashBytes[T string | []byte](b T, seed uint32) uint32 {
	n := len(b)
	aligned := n - n%4
	h1 := seed
	for i := 0; i < aligned; i += 4 {
		w := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
		h1 = mixH1(h1, mixK1(w))
	}
	for i := aligned; i < n; i++ {
		h1 = mixH1(h1, mixK1(uint32(int32(int8(b[i])))))
	}
	return fmix(h1, uint32(n))
}
