package partition

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every expected value below was printed by Spark (or by an engine that
// checks itself against Spark) and copied from the file named in its
// source; none comes from this package's own output.
//
// Sources, by the short names used in the tables:
//
//   - unsafeSuite: apache/spark
//     common/unsafe/src/test/java/org/apache/spark/unsafe/hash/Murmur3_x86_32Suite.java
//     (testKnownIntegerInputs, testKnownLongInputs; hasher seed 0).
//   - sqlDoc: apache/spark
//     sql/catalyst/src/main/scala/org/apache/spark/sql/catalyst/expressions/hash.scala,
//     the Murmur3Hash example of the SQL function reference
//     (SELECT hash('Spark', array(123), 2) -> -1321691492), and
//     sql/catalyst/.../expressions/arithmetic.scala, the Pmod examples
//     (pmod(10, 3) -> 1, pmod(-10, 3) -> 2).
//   - pysparkDoc: apache/spark python/pyspark/sql/functions (the hash
//     docstring, a doctest Spark's CI runs): hash('ABC') -> -757602832,
//     hash('ABC', 'DEF') -> 599895104.
//   - comet: apache/datafusion-comet
//     native/spark-expr/src/hash_funcs/murmur3.rs (tests test_i8, test_i32,
//     test_i64, test_f32, test_f64, test_str; seed 42, values generated
//     with Spark's Murmur3_x86_32 / Murmur3Hash(..., 42).eval()), and
//     core/src/execution/datafusion/spark_hash.rs (test_pmod: "expected
//     partition from Spark with n=200"; nulls keep 42).
//   - gluten: apache/incubator-gluten cpp-ch/local-engine/tests/gtest_hash.cpp
//     (SparkMurmurHash3_32 of the bytes {0x00, 0xc8}, seed 42, is
//     -424716282, where standard MurmurHash3_x86_32 gives -1346355085).
//   - japila: japila-books/spark-sql-internals docs/expressions/Murmur3Hash.md
//     (hash of an int column: 0 -> 933211791, null -> 42, 4 -> -397064898)
//     and docs/expressions/HashPartitioning.md (spark.range(5) ids in
//     pmod(hash(id), 200): 5, 69, 128, 107, 140), transcripts of spark-shell
//     output.

// u converts a hash written as an unsigned hex literal (as the Rust
// sources print them) to Spark's signed int.
func u(x uint32) int32 { return int32(x) }

func TestIntVectors(t *testing.T) {
	cases := []struct {
		source string
		seed   int32
		v      int32
		want   int32
	}{
		{"unsafeSuite", 0, 0, 593689054},
		{"unsafeSuite", 0, -42, -189366624},
		{"unsafeSuite", 0, 42, -1134849565},
		{"unsafeSuite", 0, math.MinInt32, -1718298732},
		{"unsafeSuite", 0, math.MaxInt32, -1653689534},
		{"comet test_i32", Seed, 1, u(0xdea578e3)},
		{"comet test_i32", Seed, 0, u(0x379fae8f)},
		{"comet test_i32", Seed, -1, u(0xa0590e3d)},
		{"comet test_i32", Seed, math.MaxInt32, u(0x07fb67e7)},
		{"comet test_i32", Seed, math.MinInt32, u(0x2b1f0fc6)},
		// ByteType widens to int with its sign.
		{"comet test_i8", Seed, math.MaxInt8, u(0x43b4d8ed)},
		{"comet test_i8", Seed, math.MinInt8, u(0x422a1365)},
		{"japila Murmur3Hash.md", Seed, 0, 933211791},
		{"japila Murmur3Hash.md", Seed, 4, -397064898},
	}
	for _, c := range cases {
		if got := Int(c.seed, c.v); got != c.want {
			t.Errorf("%s: Int(%d, %d) = %d, Spark gives %d", c.source, c.seed, c.v, got, c.want)
		}
	}
}

func TestLongVectors(t *testing.T) {
	cases := []struct {
		source string
		seed   int32
		v      int64
		want   int32
	}{
		{"unsafeSuite", 0, 0, 1669671676},
		{"unsafeSuite", 0, -42, -846261623},
		{"unsafeSuite", 0, 42, 1871679806},
		{"unsafeSuite", 0, math.MinInt64, 1366273829},
		{"unsafeSuite", 0, math.MaxInt64, -2106506049},
		{"comet test_i64", Seed, 1, u(0x99f0149d)},
		{"comet test_i64", Seed, 0, u(0x9c67b85d)},
		{"comet test_i64", Seed, -1, u(0xc8008529)},
		{"comet test_i64", Seed, math.MaxInt64, u(0xa05b5d7b)},
		{"comet test_i64", Seed, math.MinInt64, u(0xcd1e64fb)},
	}
	for _, c := range cases {
		if got := Long(c.seed, c.v); got != c.want {
			t.Errorf("%s: Long(%d, %d) = %d, Spark gives %d", c.source, c.seed, c.v, got, c.want)
		}
	}
}

func TestStringVectors(t *testing.T) {
	cases := []struct {
		source string
		s      string
		want   int32
	}{
		// Lengths 0 to 6 cover every tail length; "\U0001F601" is 4 UTF-8
		// bytes (no tail) and "天地" 6 bytes whose 2-byte tail is >= 0x80,
		// so it checks the sign extension of tail bytes.
		{"comet test_str", "", 142593372},
		{"comet test_str", "a", 1485273170},
		{"comet test_str", "ab", u(0xfa37157b)},
		{"comet test_str", "abc", 1322437556},
		{"comet test_str", "abcd", u(0xe860e5cc)},
		{"comet test_str", "abcde", 814637928},
		{"comet test_str", "hello", u(3286402344)},
		{"comet test_str", "bar", u(2486176763)},
		{"comet test_str", "\U0001F601", 885025535},
		{"comet test_str", "天地", u(2395000894)},
		{"pysparkDoc", "ABC", -757602832},
	}
	for _, c := range cases {
		if got := String(Seed, c.s); got != c.want {
			t.Errorf("%s: String(42, %q) = %d, Spark gives %d", c.source, c.s, got, c.want)
		}
		if got := Bytes(Seed, []byte(c.s)); got != c.want {
			t.Errorf("%s: Bytes(42, %q) = %d, Spark gives %d", c.source, c.s, got, c.want)
		}
	}
}

// TestBytesLegacyTail pins Spark's legacy tail on a 2-byte input whose
// second byte is negative as a Java byte: Spark's hashUnsafeBytes gives
// -424716282 where standard murmur3 x86_32 gives -1346355085 (gluten).
func TestBytesLegacyTail(t *testing.T) {
	if got := Bytes(Seed, []byte{0x00, 0xc8}); got != -424716282 {
		t.Errorf("Bytes(42, {0x00, 0xc8}) = %d, Spark gives -424716282 (standard murmur3 gives -1346355085)", got)
	}
}

// TestFoldVectors checks multi-column keys: each column is hashed with the
// previous result as its seed, starting from 42.
func TestFoldVectors(t *testing.T) {
	// sqlDoc: hash('Spark', array(123), 2). An array folds its elements in
	// order into the running hash, so array(123) is Int(h, 123); the
	// literals 123 and 2 are IntegerType.
	h := String(Seed, "Spark")
	h = Int(h, 123)
	h = Int(h, 2)
	if h != -1321691492 {
		t.Errorf("sqlDoc: hash('Spark', array(123), 2) = %d, Spark gives -1321691492", h)
	}
	// pysparkDoc: hash('ABC', 'DEF').
	if got := String(String(Seed, "ABC"), "DEF"); got != 599895104 {
		t.Errorf("pysparkDoc: hash('ABC', 'DEF') = %d, Spark gives 599895104", got)
	}
}

// TestNullLeavesHashUnchanged: hash.scala hashes null as the seed it was
// given. japila and comet show a null column's hash as 42; with a null
// between two columns the key hashes as the two columns alone.
func TestNullLeavesHashUnchanged(t *testing.T) {
	if got := Null(Seed); got != 42 {
		t.Errorf("japila/comet: hash(null) = %d, Spark gives 42", got)
	}
	if got := String(Null(String(Seed, "ABC")), "DEF"); got != 599895104 {
		t.Errorf("hash('ABC', null, 'DEF') = %d, want hash('ABC', 'DEF') = 599895104", got)
	}
}

func TestBool(t *testing.T) {
	// hash.scala: a boolean is hashed as the int 1 or 0; the int hashes are
	// comet's test_i32 values.
	if got := Bool(Seed, true); got != u(0xdea578e3) {
		t.Errorf("Bool(42, true) = %d, want hashInt(1, 42) = %d", got, u(0xdea578e3))
	}
	if got := Bool(Seed, false); got != u(0x379fae8f) {
		t.Errorf("Bool(42, false) = %d, want hashInt(0, 42) = %d", got, u(0x379fae8f))
	}
}

func TestFloatVectors(t *testing.T) {
	big := 99999999999.99999999999
	cases := []struct {
		v    float32
		want int32
	}{
		{1.0, u(0xe434cc39)},
		{0.0, u(0x379fae8f)},
		{float32(math.Copysign(0, -1)), u(0x379fae8f)},
		{-1.0, u(0xdc0da8eb)},
		{float32(big), u(0xcbdc340f)},
		{float32(-big), u(0xc0361c86)},
	}
	for _, c := range cases {
		if got := Float(Seed, c.v); got != c.want {
			t.Errorf("comet test_f32: Float(42, %g) = %d, Spark gives %d", c.v, got, c.want)
		}
	}
}

func TestDoubleVectors(t *testing.T) {
	big := 99999999999.99999999999
	cases := []struct {
		v    float64
		want int32
	}{
		{1.0, u(0xe4876492)},
		{0.0, u(0x9c67b85d)},
		{math.Copysign(0, -1), u(0x9c67b85d)},
		{-1.0, u(0x13d81357)},
		{big, u(0xb87e1595)},
		{-big, u(0xa0eef9f9)},
	}
	for _, c := range cases {
		if got := Double(Seed, c.v); got != c.want {
			t.Errorf("comet test_f64: Double(42, %g) = %d, Spark gives %d", c.v, got, c.want)
		}
	}
}

// TestNaNIsCanonical: Java's doubleToLongBits and floatToIntBits map every
// NaN to one bit pattern (0x7ff8000000000000, 0x7fc00000), so every NaN
// lands where the canonical NaN does, whatever its payload or sign.
func TestNaNIsCanonical(t *testing.T) {
	want64 := Long(Seed, 0x7ff8000000000000)
	for _, bitsv := range []uint64{0x7ff8000000000000, 0x7ff0000000000001, 0xfff8000000000000, 0x7fffffffffffffff} {
		if got := Double(Seed, math.Float64frombits(bitsv)); got != want64 {
			t.Errorf("Double(42, NaN bits %#x) = %d, want the canonical NaN's %d", bitsv, got, want64)
		}
	}
	want32 := Int(Seed, 0x7fc00000)
	for _, bitsv := range []uint32{0x7fc00000, 0x7f800001, 0xffc00000, 0x7fffffff} {
		if got := Float(Seed, math.Float32frombits(bitsv)); got != want32 {
			t.Errorf("Float(42, NaN bits %#x) = %d, want the canonical NaN's %d", bitsv, got, want32)
		}
	}
}

// TestTimestampAndDateTypes: hash.scala hashes TimestampType (micros) with
// hashLong and DateType (days) with hashInt.
func TestTimestampAndDateTypes(t *testing.T) {
	for _, micros := range []int64{0, 1, -1, 1_700_000_000_123_456, math.MinInt64} {
		if got, want := Timestamp(Seed, micros), Long(Seed, micros); got != want {
			t.Errorf("Timestamp(42, %d) = %d, want hashLong = %d", micros, got, want)
		}
	}
	// comet test_i64: the long 1 hashes to 0x99f0149d, so 1 microsecond does.
	if got := Timestamp(Seed, 1); got != u(0x99f0149d) {
		t.Errorf("Timestamp(42, 1) = %d, Spark's hashLong(1, 42) is %d", got, u(0x99f0149d))
	}
	if got := Date(Seed, 1); got != u(0xdea578e3) {
		t.Errorf("Date(42, 1) = %d, Spark's hashInt(1, 42) is %d", got, u(0xdea578e3))
	}
}

func TestOfVectors(t *testing.T) {
	cases := []struct {
		source string
		h      int32
		n      int
		want   int
	}{
		{"sqlDoc pmod", 10, 3, 1},
		{"sqlDoc pmod", -10, 3, 2},
		// comet test_pmod: the hashes of the longs 1, 0, -1, MaxInt64,
		// MinInt64 in 200 partitions.
		{"comet test_pmod", u(0x99f0149d), 200, 69},
		{"comet test_pmod", u(0x9c67b85d), 200, 5},
		{"comet test_pmod", u(0xc8008529), 200, 193},
		{"comet test_pmod", u(0xa05b5d7b), 200, 171},
		{"comet test_pmod", u(0xcd1e64fb), 200, 115},
	}
	for _, c := range cases {
		if got := Of(c.h, c.n); got != c.want {
			t.Errorf("%s: Of(%d, %d) = %d, Spark gives %d", c.source, c.h, c.n, got, c.want)
		}
	}
}

// TestPartitionOfLongKeys is HashPartitioning end to end: spark.range(5)
// ids (LongType) in pmod(hash(id), 200) (japila HashPartitioning.md).
func TestPartitionOfLongKeys(t *testing.T) {
	want := []int{5, 69, 128, 107, 140}
	for id, w := range want {
		if got := Of(Long(Seed, int64(id)), 200); got != w {
			t.Errorf("japila: partition of id %d in 200 = %d, Spark gives %d", id, got, w)
		}
	}
}

// TestOfIsPmod checks the pmod contract on hashes of both signs, including
// the extremes: the result is in [0, n) and congruent to h modulo n. Hand
// checks: -1 % 200 = -1 -> 199; MinInt32 % 200 = -48 -> 152;
// MaxInt32 % 200 = 47.
func TestOfIsPmod(t *testing.T) {
	for _, c := range []struct {
		h    int32
		n    int
		want int
	}{
		{-1, 200, 199},
		{math.MinInt32, 200, 152},
		{math.MaxInt32, 200, 47},
		{-200, 200, 0},
		{-757602832, 200, 168},
		{math.MinInt32, 1, 0},
		{math.MinInt32, math.MaxInt32, math.MaxInt32 - 1},
	} {
		if got := Of(c.h, c.n); got != c.want {
			t.Errorf("Of(%d, %d) = %d, want %d", c.h, c.n, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(12, 0))
	for i := 0; i < 10000; i++ {
		h := int32(rng.Uint32())
		n := 1 + rng.IntN(4096)
		p := Of(h, n)
		if p < 0 || p >= n || (int64(h)-int64(p))%int64(n) != 0 {
			t.Fatalf("Of(%d, %d) = %d, not pmod (seed 12, draw %d)", h, n, p, i)
		}
	}
}

func TestOfRejectsBadCounts(t *testing.T) {
	for _, n := range []int{0, -1, math.MaxInt32 + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Of(1, %d) did not panic", n)
				}
			}()
			Of(1, n)
		}()
	}
}

// TestNoAllocations: a key of a 36-character UUID and a timestamp is
// placed without allocating (the hot path rule).
func TestNoAllocations(t *testing.T) {
	id := "6f1c2a4e-9b3d-4c5e-8f7a-0123456789ab"
	idBytes := []byte(id)
	var sink int
	allocs := testing.AllocsPerRun(100, func() {
		h := String(Seed, id)
		h = Timestamp(h, 1_700_000_000_123_456)
		sink += Of(h, 200)
		h = Bytes(Seed, idBytes)
		h = Double(h, 1.5)
		sink += Of(h, 200)
	})
	if allocs != 0 {
		t.Errorf("placing a key allocates %.1f times, want 0", allocs)
	}
	_ = sink
}
