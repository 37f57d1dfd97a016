package partition

import (
	"fmt"
	"math"
)

// Seed is the hash a key starts from: HashPartitioning builds
// Murmur3Hash(keys) with its default seed, 42.
const Seed int32 = 42

// Int folds a 32-bit int column into h: Spark's IntegerType, and also
// ShortType and ByteType (pass the value sign-extended, as Java widens it)
// and DateType (days since the epoch). It is Murmur3_x86_32.hashInt(v, h).
func Int(h int32, v int32) int32 {
	return int32(hashInt(uint32(v), uint32(h)))
}

// Long folds a 64-bit int column (Spark's LongType) into h. It is
// Murmur3_x86_32.hashLong(v, h).
func Long(h int32, v int64) int32 {
	return int32(hashLong(uint64(v), uint32(h)))
}

// Timestamp folds a TimestampType or TimestampNTZType column into h. Spark
// stores both as microseconds since the epoch and hashes them as a long.
func Timestamp(h int32, micros int64) int32 {
	return Long(h, micros)
}

// Date folds a DateType column into h. Spark stores a date as days since
// the epoch and hashes it as an int.
func Date(h int32, days int32) int32 {
	return Int(h, days)
}

// Bool folds a BooleanType column into h: true as the int 1, false as 0.
func Bool(h int32, v bool) int32 {
	if v {
		return Int(h, 1)
	}
	return Int(h, 0)
}

// Float folds a FloatType column into h as Spark does: -0.0 hashes as the
// int 0 (the same as 0.0), every NaN as the canonical NaN bits 0x7fc00000
// (Java's floatToIntBits), and any other value as its IEEE 754 bits.
func Float(h int32, v float32) int32 {
	switch {
	case v == 0: // 0.0 and -0.0
		return Int(h, 0)
	case v != v: // NaN
		return Int(h, 0x7fc00000)
	}
	return Int(h, int32(math.Float32bits(v)))
}

// Double folds a DoubleType column into h as Spark does: -0.0 hashes as the
// long 0 (the same as 0.0), every NaN as the canonical NaN bits
// 0x7ff8000000000000 (Java's doubleToLongBits), and any other value as its
// IEEE 754 bits. Streaming deduplication does not normalize floating-point
// keys before the exchange, so these are the rules that place them.
func Double(h int32, v float64) int32 {
	switch {
	case v == 0: // 0.0 and -0.0
		return Long(h, 0)
	case v != v: // NaN
		return Long(h, 0x7ff8000000000000)
	}
	return Long(h, int64(math.Float64bits(v)))
}

// String folds a StringType column into h: the hash of its UTF-8 bytes,
// computed like Bytes. Go strings are the bytes Spark's UTF8String holds
// when they are valid UTF-8; the function never converts or allocates.
func String(h int32, s string) int32 {
	return int32(hashBytes(s, uint32(h)))
}

// Bytes folds a BinaryType column, or a string given as its UTF-8 bytes,
// into h. It is Murmur3_x86_32.hashUnsafeBytes, which Murmur3Hash uses for
// both types: the bytes in little-endian 4-byte words, then each of the 0 to
// 3 remaining bytes, sign-extended, mixed as a word of its own. That tail is
// Spark's own and differs from standard murmur3 x86_32, so a hash library
// gives other partitions for any length that is not a multiple of 4.
func Bytes(h int32, b []byte) int32 {
	return int32(hashBytes(b, uint32(h)))
}

// Null folds a null column into h: Spark leaves the hash unchanged, so a
// null contributes nothing and (a, null) hashes as (a).
func Null(h int32) int32 {
	return h
}

// Of returns the partition of a key whose folded hash is h among n
// partitions: Spark's pmod(h, n) on ints, r = h % n, plus n when r is
// negative, so the result is in [0, n) for every h. Java's % truncates
// toward zero as Go's does. For example Of(-757602832, 200) is 168
// (-757602832 % 200 = -32). It panics unless 1 <= n <= math.MaxInt32
// (Spark's partition count is a positive int).
func Of(h int32, n int) int {
	if n < 1 || n > math.MaxInt32 {
		panic(fmt.Sprintf("partition.Of: partition count %d is not between 1 and %d", n, math.MaxInt32))
	}
	r := int(h) % n
	if r < 0 {
		r = (r + n) % n
	}
	return r
}
