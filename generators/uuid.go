package generators

import "encoding/binary"

// hexDigits are the lowercase hexadecimal digits of UUID text.
const hexDigits = "0123456789abcdef"

// uuidOffsets holds, for each of a UUID's 16 bytes, where its two digits
// start in the 36-character text (8-4-4-4-12 digits between dashes).
const uuidOffsets = "\x00\x02\x04\x06\x09\x0b\x0e\x10\x13\x15\x18\x1a\x1c\x1e\x20\x22"

// writeUUID writes the text form of a version 4 (random) UUID made from
// the 128 random bits hi and lo into dst, without allocating: the version
// nibble is set to 4 and the variant bits to 10, as RFC 9562 lays out a
// random UUID, so that 122 of the 128 bits stay random.
func writeUUID(dst *[36]byte, hi, lo uint64) {
	hi = hi&^(0xf<<12) | 0x4<<12 // version 4: the top nibble of time_hi_and_version
	lo = lo&^(0x3<<62) | 0x2<<62 // variant 10: the top bits of clock_seq
	for i := range 8 {
		b := byte(hi >> (56 - 8*i))
		o := uuidOffsets[i]
		dst[o], dst[o+1] = hexDigits[b>>4], hexDigits[b&0xf]
		b = byte(lo >> (56 - 8*i))
		o = uuidOffsets[8+i]
		dst[o], dst[o+1] = hexDigits[b>>4], hexDigits[b&0xf]
	}
	dst[8], dst[13], dst[18], dst[23] = '-', '-', '-', '-'
}

// uuidRounds is the number of Feistel rounds of uuidCipher: Luby and
// Rackoff's construction is a pseudorandom permutation from four rounds on;
// six leave a margin for a round function that is a mixer, not a cipher.
const uuidRounds = 6

// mask61 keeps the low 61 bits: one half of a UUID's 122 random bits.
const mask61 = 1<<61 - 1

// uuidCipher is a keyed permutation of the 122 random bits of a version 4
// UUID: a Feistel network over two 61-bit halves, its round keys drawn
// from the scenario seed. The generator makes each event's UUID by
// enciphering the event number (uuidFor), so that ids look and test as
// random as drawn ones while a state key decodes back to its number
// (Number): a store can then hold a generated key as one number, or one
// bit. It is a bijection on all 122-bit values, so no two events share a
// UUID, by construction.
type uuidCipher struct{ keys [uuidRounds]uint64 }

// newUUIDCipher returns the permutation of the scenario seed's ids.
func newUUIDCipher(seed uint64) *uuidCipher {
	x := seed ^ fnv1a(partIDs)
	c := &uuidCipher{}
	for i := range c.keys {
		c.keys[i] = splitMix64(&x)
	}
	return c
}

// round is the Feistel round function: SplitMix64's finalizer of one half
// and the round key, cut to 61 bits.
func round(half, key uint64) uint64 {
	z := (half ^ key) * 0xbf58476d1ce4e5b9
	z ^= z >> 31
	z *= 0x94d049bb133111eb
	z ^= z >> 29
	return z & mask61
}

// uuidFor writes the UUID of event number n into dst: the enciphered
// number's 122 bits laid out as a version 4 UUID's random bits (the top 60
// in the first half around the version nibble, the low 62 after the
// variant bits).
func (c *uuidCipher) uuidFor(dst *[36]byte, n uint64) {
	l, r := n>>61, n&mask61
	for _, k := range c.keys {
		l, r = r, l^round(r, k)
	}
	hi60 := l >> 1
	lo62 := (l&1)<<61 | r
	writeUUID(dst, (hi60>>12)<<16|hi60&0xfff, lo62)
}

// number returns the event number whose UUID is the 36 bytes of text,
// and false when text is not a UUID uuidFor writes for any number:
// not 36 bytes, not lowercase hexadecimal digits with dashes in the
// 8-4-4-4-12 layout, not version 4 with variant 10, or deciphering to a
// value above 64 bits. Distinct texts that decode give distinct numbers.
func (c *uuidCipher) number(text []byte) (uint64, bool) {
	if len(text) != uuidLen || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-' {
		return 0, false
	}
	g0, ok0 := hex8(binary.BigEndian.Uint64(text[0:8]))
	g1, ok1 := hex4(binary.BigEndian.Uint32(text[9:13]))
	g2, ok2 := hex4(binary.BigEndian.Uint32(text[14:18]))
	g3, ok3 := hex4(binary.BigEndian.Uint32(text[19:23]))
	g4, ok4 := hex8(binary.BigEndian.Uint64(text[24:32]))
	g5, ok5 := hex4(binary.BigEndian.Uint32(text[32:36]))
	if !(ok0 && ok1 && ok2 && ok3 && ok4 && ok5) {
		return 0, false
	}
	hi := uint64(g0)<<32 | uint64(g1)<<16 | uint64(g2)
	lo := uint64(g3)<<48 | uint64(g4)<<16 | uint64(g5)
	if hi>>12&0xf != 4 || lo>>62 != 2 {
		return 0, false
	}
	hi60 := (hi>>16)<<12 | hi&0xfff
	lo62 := lo & (1<<62 - 1)
	l, r := hi60<<1|lo62>>61, lo62&mask61
	for i := len(c.keys) - 1; i >= 0; i-- {
		l, r = r^round(l, c.keys[i]), l
	}
	if l >= 8 {
		return 0, false
	}
	return l<<61 | r, true
}

// The byte lanes of a word: ones has 1 in every byte, highs 0x80.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hex8 returns the value of eight lowercase hexadecimal digits packed
// big-endian in x (the first digit in the top byte), and false if any
// byte is not one of 0-9 a-f. It works on all eight bytes at once: for
// bytes below 0x80, adding 0x80-c to every lane sets a lane's top bit
// exactly when its byte is at least c, and no lane carries into the next.
func hex8(x uint64) (uint32, bool) {
	if x&highs != 0 {
		return 0, false
	}
	digit := (x + (0x80-'0')*ones) &^ (x + (0x80-'9'-1)*ones) & highs
	letter := (x + (0x80-'a')*ones) &^ (x + (0x80-'f'-1)*ones) & highs
	if digit|letter != highs {
		return 0, false
	}
	// A digit's value is its low nibble; a letter's is its low nibble
	// plus 9 (a is 0x61). Then pack the eight nibbles into 32 bits.
	v := x&(0x0f*ones) + (letter>>7)*9
	v = (v>>4 | v) & 0x00ff00ff00ff00ff
	v = (v>>8 | v) & 0x0000ffff0000ffff
	v = (v>>16 | v) & 0xffffffff
	return uint32(v), true
}

// hex4 is hex8 for four digits packed big-endian in x.
func hex4(x uint32) (uint32, bool) {
	return hex8(uint64(x) | '0'*0x01010101<<32)
}
