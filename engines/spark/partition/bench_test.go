package partition

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"
)

// benchKeys returns n deterministic keys shaped like dedupsim's: a
// 36-character UUID text and an event time in microseconds.
func benchKeys(n int) ([][36]byte, []int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([][36]byte, n)
	times := make([]int64, n)
	const hex = "0123456789abcdef"
	for i := range ids {
		for j := range ids[i] {
			switch j {
			case 8, 13, 18, 23:
				ids[i][j] = '-'
			default:
				ids[i][j] = hex[rng.IntN(16)]
			}
		}
		times[i] = 1_700_000_000_000_000 + rng.Int64N(86_400_000_000)
	}
	return ids, times
}

// BenchmarkPartition measures placing one key (UUID string + timestamp) in
// 200 partitions, against a bare baseline in the same run: Go's runtime
// hash (hash/maphash) of the same 44 bytes, reduced with %.
func BenchmarkPartition(b *testing.B) {
	ids, times := benchKeys(1024)
	b.Run("key=uuid+timestamp/hash=spark", func(b *testing.B) {
		b.ReportAllocs()
		sink := 0
		i := 0
		for b.Loop() {
			k := i & 1023
			h := Bytes(Seed, ids[k][:])
			h = Timestamp(h, times[k])
			sink += Of(h, 200)
			i++
		}
		sinkInt = sink
	})
	b.Run("key=uuid+timestamp/hash=maphash-baseline", func(b *testing.B) {
		b.ReportAllocs()
		seed := maphash.MakeSeed()
		var buf [44]byte
		sink := 0
		i := 0
		for b.Loop() {
			k := i & 1023
			copy(buf[:36], ids[k][:])
			binary.LittleEndian.PutUint64(buf[36:], uint64(times[k]))
			sink += int(maphash.Bytes(seed, buf[:]) % 200)
			i++
		}
		sinkInt = sink
	})
	for _, n := range []int{0, 3, 36, 256} {
		b.Run(fmt.Sprintf("key=string/len=%d/hash=spark", n), func(b *testing.B) {
			s := string(make([]byte, n))
			b.ReportAllocs()
			b.SetBytes(int64(n))
			var sink int32
			for b.Loop() {
				sink += String(Seed, s)
			}
			sinkInt32 = sink
		})
	}
}

var (
	sinkInt   int
	sinkInt32 int32
)
