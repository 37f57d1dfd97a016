package generators

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestUUIDsDecodeToTheirEventNumbers(t *testing.T) {
	c := newUUIDCipher(42)
	rng := rand.New(rand.NewPCG(1, 2))
	var id [36]byte
	check := func(n uint64) {
		c.uuidFor(&id, n)
		got, ok := c.number(id[:])
		if !ok || got != n {
			t.Fatalf("number(uuidFor(%d) = %s) = %d, %v", n, id[:], got, ok)
		}
	}
	for n := range uint64(100_000) {
		check(n)
	}
	for range 100_000 {
		check(rng.Uint64())
	}
	check(math.MaxUint64)
	// Another seed's cipher reads the same text as another number (or
	// none): the ids of two seeds differ.
	c.uuidFor(&id, 7)
	if n, ok := newUUIDCipher(43).number(id[:]); ok && n == 7 {
		t.Errorf("seeds 42 and 43 give event 7 the same UUID %s", id[:])
	}
}

// TestUUIDNumberIsExactOnAnyText checks that number accepts only the texts
// uuidFor writes: any accepted text is written back byte for byte from its
// number, so two different accepted texts can never share a number.
func TestUUIDNumberIsExactOnAnyText(t *testing.T) {
	c := newUUIDCipher(42)
	rng := rand.New(rand.NewPCG(3, 4))
	var id, back [36]byte
	accepted := 0
	for i := range 200_000 {
		// Random version 4 UUIDs (as the generator drew them before), and
		// numbers' UUIDs with one character changed.
		if i%2 == 0 {
			writeUUID(&id, rng.Uint64(), rng.Uint64())
		} else {
			c.uuidFor(&id, rng.Uint64N(1<<40))
			id[rng.IntN(36)] = "0123456789abcdefABCDEF-x"[rng.IntN(24)]
		}
		n, ok := c.number(id[:])
		if !ok {
			continue
		}
		accepted++
		c.uuidFor(&back, n)
		if back != id {
			t.Fatalf("%s decodes to %d, whose UUID is %s", id[:], n, back[:])
		}
	}
	if accepted == 0 {
		t.Fatal("no text decoded: the test exercised nothing")
	}
	for _, bad := range []string{
		"", "00000000-0000-4000-8000-00000000000", // short
		strings.ToUpper("0c7a1b2e-5d4f-4a3b-9c8d-7e6f5a4b3c2d"), // uppercase
		"0c7a1b2e-5d4f-3a3b-9c8d-7e6f5a4b3c2d",                  // version 3
		"0c7a1b2e-5d4f-4a3b-cc8d-7e6f5a4b3c2d",                  // variant 110
		"0c7a1b2e+5d4f-4a3b-9c8d-7e6f5a4b3c2d",                  // no dash
	} {
		if n, ok := c.number([]byte(bad)); ok {
			t.Errorf("%q decodes to %d", bad, n)
		}
	}
}

// TestUUIDsOfConsecutiveEventsLookRandom checks the statistics a drawn
// UUID has: every random bit set half the time (the 16 values of each hex
// digit about equally often), and consecutive events' UUIDs differing in
// about half of their 122 random bits.
func TestUUIDsOfConsecutiveEventsLookRandom(t *testing.T) {
	const n = 200_000
	c := newUUIDCipher(1)
	var counts [36][16]int
	var id, prev [36]byte
	dist := 0.0
	for i := range uint64(n) {
		c.uuidFor(&id, i)
		for p := range 36 {
			if v, ok := hexValue(id[p]); ok {
				counts[p][v]++
			}
		}
		if i > 0 {
			d := 0
			for p := range 36 {
				a, _ := hexValue(id[p])
				b, _ := hexValue(prev[p])
				d += bits.OnesCount8(a ^ b)
			}
			dist += float64(d)
		}
		prev = id
	}
	// The fixed digits: version (14) and variant (19, two random bits).
	for p := range 36 {
		switch p {
		case 8, 13, 18, 23, 14, 19:
			continue
		}
		// Chi-square with 15 degrees of freedom: 37.7 is its 0.999 quantile
		// (31 positions tested, so about a 3% chance of a false failure
		// for truly random digits if it were 0.999 each; 44.3 is 0.9999).
		chi := 0.0
		for _, k := range counts[p] {
			d := float64(k) - n/16.0
			chi += d * d / (n / 16.0)
		}
		if chi > 44.3 {
			t.Errorf("hex digit %d: chi-square %.1f over 15 degrees of freedom: %v", p, chi, counts[p])
		}
	}
	// 122 random bits, each differing with probability 1/2 between two
	// unrelated UUIDs: a mean Hamming distance of 61 (bits of the version
	// nibble and the variant's fixed bit never differ).
	if mean := dist / (n - 1); math.Abs(mean-61) > 0.2 {
		t.Errorf("consecutive UUIDs differ in %.2f bits on average, want 61", mean)
	}
}

func TestKeyNumbering(t *testing.T) {
	cfg := func(ids IDForm) Config {
		c := mixed(9)
		c.Workload.IDs = ids
		return *c
	}
	if KeyNumbering(cfg(UUIDs), []int{ColEventID, ColEventTime}) != nil {
		t.Error("a key of event_id and event_time has a numbering")
	}
	if KeyNumbering(cfg(UUIDs), []int{ColCustomerID}) != nil {
		t.Error("a key of customer_id has a numbering")
	}
	for _, ids := range []IDForm{UUIDs, Ints} {
		c := cfg(ids)
		num := KeyNumbering(c, []int{ColEventID})
		g := mustNew(t, &c)
		var r Row
		var key []byte
		for i := 0; i < 1000 && g.Next(&r); i++ {
			key = appendKey(key[:0], &r, g.IDs(), []int{ColEventID})
			if n, ok := num(key); !ok || n != r.Truth.Event {
				t.Fatalf("ids %s: key %x of event %d decodes to %d, %v", ids, key, r.Truth.Event, n, ok)
			}
		}
	}
}

// hexValue returns the value of a lowercase hexadecimal digit.
func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// TestHex8 checks the word-at-a-time hex parser against strconv on every
// byte value at every position of a valid group of digits.
func TestHex8(t *testing.T) {
	for _, group := range []string{"0123abcd", "fedcba98", "00000000", "ffffffff", "9a0f9a0f"} {
		for pos := range 8 {
			for c := range 256 {
				b := []byte(group)
				b[pos] = byte(c)
				got, ok := hex8(binary.BigEndian.Uint64(b))
				want, err := strconv.ParseUint(string(b), 16, 32)
				valid := err == nil && !strings.ContainsAny(string(b), "ABCDEF+-_xX")
				if ok != valid || ok && uint64(got) != want {
					t.Fatalf("hex8(%q) = %x, %v; want %x, %v", b, got, ok, want, valid)
				}
			}
		}
	}
	if v, ok := hex4(binary.BigEndian.Uint32([]byte("beef"))); !ok || v != 0xbeef {
		t.Errorf("hex4(beef) = %x, %v", v, ok)
	}
	if _, ok := hex4(binary.BigEndian.Uint32([]byte("bEef"))); ok {
		t.Error("hex4(bEef) accepted")
	}
}
