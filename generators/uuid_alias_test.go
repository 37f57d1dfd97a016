package generators

import "testing"

// encipherHalves is uuidFor on the two 61-bit halves l, r of a 122-bit
// value, not only the values of 64-bit numbers (whose l, n>>61, is at
// most 7): the same Feistel rounds, the same layout.
func (c *uuidCipher) encipherHalves(dst *[36]byte, l, r uint64) {
	for _, k := range c.keys {
		l, r = r, l^round(r, k)
	}
	hi60 := l >> 1
	lo62 := (l&1)<<61 | r
	writeUUID(dst, (hi60>>12)<<16|hi60&0xfff, lo62)
}

// TestUUIDAboveSixtyFourBitsDecodesToNothing: a version 4 UUID whose
// deciphered 122-bit value is above 2^64 - 1 (its left half l >= 8) is
// no event's: number must refuse it. Were l = 8 accepted, l<<61 would
// wrap to 0 and the UUID would decode to r, the number of another UUID
// (an alias: two texts, one key). By hand: the values with l = 8, 9 and
// 2^61 - 1 are 8·2^61 + r >= 2^64 for every r.
func TestUUIDAboveSixtyFourBitsDecodesToNothing(t *testing.T) {
	c := newUUIDCipher(42)
	var id, own [36]byte
	for _, l := range []uint64{8, 9, 1<<61 - 1} {
		for _, r := range []uint64{0, 1, 12345, mask61} {
			c.encipherHalves(&id, l, r)
			if n, ok := c.number(id[:]); ok {
				c.uuidFor(&own, n)
				t.Errorf("%s (l %d, r %d) decodes to event %d, whose own UUID is %s", id[:], l, r, n, own[:])
			}
		}
	}
	// The helper is uuidFor for l <= 7: the halves of a 64-bit number.
	c.encipherHalves(&id, 7, 99)
	c.uuidFor(&own, 7<<61|99)
	if id != own {
		t.Fatalf("encipherHalves(7, 99) = %s, uuidFor = %s", id[:], own[:])
	}
	if n, ok := c.number(id[:]); !ok || n != 7<<61|99 {
		t.Fatalf("%s decodes to %d, %v; want %d", id[:], n, ok, uint64(7<<61|99))
	}
}
