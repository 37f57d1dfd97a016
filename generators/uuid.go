package generators

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
