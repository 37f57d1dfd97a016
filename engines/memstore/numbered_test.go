package memstore

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
)

// beNumber reads an 8-byte big-endian key as its number, as generators'
// KeyNumbering does for int ids.
func beNumber(key []byte) (uint64, bool) {
	if len(key) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(key), true
}

// TestNumberedAgreesWithStore runs the same keys, numbered and not, into a
// Numbered store and a plain Store: every Add must agree, and so must Len.
func TestNumberedAgreesWithStore(t *testing.T) {
	num := NewNumbered(beNumber)
	plain := New()
	rng := rand.New(rand.NewPCG(5, 6))
	key := make([]byte, 0, 16)
	for i := range 200_000 {
		key = key[:0]
		switch r := rng.IntN(10); {
		case r < 7: // a number, often seen before
			key = binary.BigEndian.AppendUint64(key, rng.Uint64N(uint64(i/2+1)))
		case r < 8: // a large number
			key = binary.BigEndian.AppendUint64(key, rng.Uint64()|1<<63)
		default: // a key that is no number: another length
			key = binary.BigEndian.AppendUint64(key, rng.Uint64N(5000))
			key = append(key, byte(r))
		}
		a, err := num.Add(key, engines.NoExpiry)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := plain.Add(key, engines.NoExpiry)
		if a != b {
			t.Fatalf("add %d (%x): numbered %v, plain %v", i, key, a, b)
		}
	}
	if num.Len() != plain.Len() || num.rest.Len() == 0 || num.n == 0 {
		t.Fatalf("Len: numbered %d (%d numbers, %d others), plain %d", num.Len(), num.n, num.rest.Len(), plain.Len())
	}
	added := make([]bool, 3)
	keys := []byte("abcdefgh" + "abcdefgh" + "xyz")
	if err := num.AddBatch(keys, []int32{8, 16, 19}, []int64{engines.NoExpiry, engines.NoExpiry, engines.NoExpiry}, added); err != nil {
		t.Fatal(err)
	}
	if !added[0] || added[1] || !added[2] {
		t.Errorf("AddBatch of a number twice and a word: %v, want [true false true]", added)
	}
	if _, err := num.Add([]byte("abcdefgh"), 10); err == nil {
		t.Error("Add with an expiry: no error")
	}
}

// BenchmarkNumbered adds a stream of event numbers as dropDuplicates over
// generated ids sees them (mostly increasing, slightly reordered, 5% resent
// within the last 10,000 events) to a Numbered store and to the plain
// Store, beside a bare Go map of numbers over the same keys in the same
// run (ratio = ns/row over the map's). bytes/key is the heap growth per
// key held.
func BenchmarkNumbered(b *testing.B) {
	for _, size := range []int{1e6, 1e7} {
		run := func(keys []uint64, add func(k []byte) bool) float64 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			key := make([]byte, 8)
			held := 0
			for _, k := range keys {
				binary.BigEndian.PutUint64(key, k)
				if add(key) {
					held++
				}
			}
			runtime.ReadMemStats(&after)
			return float64(after.HeapAlloc-before.HeapAlloc) / float64(max(held, 1))
		}
		b.Run(fmt.Sprintf("keys=%d", size), func(b *testing.B) {
			for _, store := range []string{"numbered", "hashtable"} {
				b.Run(store, func(b *testing.B) {
					keys := numberedKeys(b, size)
					var perKey, basePerKey float64
					var ns, baseNs float64
					for range b.N {
						var s engines.Store = New()
						if store == "numbered" {
							s = NewNumbered(beNumber)
						}
						start := time.Now()
						perKey = run(keys, func(k []byte) bool { ok, _ := s.Add(k, engines.NoExpiry); return ok })
						ns += float64(time.Since(start))
						s.Close()
						m := map[uint64]struct{}{}
						start = time.Now()
						basePerKey = run(keys, func(k []byte) bool {
							v := binary.BigEndian.Uint64(k)
							if _, ok := m[v]; ok {
								return false
							}
							m[v] = struct{}{}
							return true
						})
						baseNs += float64(time.Since(start))
						runtime.KeepAlive(m)
					}
					rows := float64(b.N) * float64(len(keys))
					b.ReportMetric(ns/rows, "ns/row")
					b.ReportMetric(baseNs/rows, "base-ns/row")
					b.ReportMetric(ns/baseNs, "ratio")
					b.ReportMetric(perKey, "bytes/key")
					b.ReportMetric(basePerKey, "base-bytes/key")
				})
			}
		})
	}
}

// numberedKeys returns BenchmarkNumbered's stream of size event numbers
// (10,000 under -short or -benchtime=1x).
func numberedKeys(b *testing.B, size int) []uint64 {
	if b.N == 1 || testing.Short() {
		size = 1e4
	}
	keys := make([]uint64, size)
	rng := rand.New(rand.NewPCG(7, 8))
	next := uint64(0)
	for i := range keys {
		if i > 0 && rng.IntN(20) == 0 {
			keys[i] = next - 1 - rng.Uint64N(min(next, 10_000))
			continue
		}
		keys[i] = next + rng.Uint64N(4) // a few places out of order
		next++
	}
	return keys
}
