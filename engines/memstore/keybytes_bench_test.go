package memstore

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// keyShape writes key number i of a benchmark stream into dst and returns
// it: distinct numbers give distinct keys.
type keyShape struct {
	name string
	put  func(dst []byte, i uint64) []byte
}

// mix64 is splitmix64's finalizer: a bijection, so distinct i give
// distinct UUIDs.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// putUUID writes the canonical text of a version 4 UUID made from i.
func putUUID(dst []byte, i uint64) []byte {
	const hex = "0123456789abcdef"
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], mix64(i))
	binary.BigEndian.PutUint64(b[8:], i)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	dst = dst[:36]
	o := 0
	for k, c := range b {
		if k == 4 || k == 6 || k == 8 || k == 10 {
			dst[o] = '-'
			o++
		}
		dst[o], dst[o+1] = hex[c>>4], hex[c&15]
		o += 2
	}
	return dst
}

var keyShapes = []keyShape{
	{"uuid36", putUUID},
	{"int8", func(dst []byte, i uint64) []byte { return binary.BigEndian.AppendUint64(dst[:0], i) }},
	// A composite key as the generator writes [event_id, event_time]: a
	// UUID then 8 big-endian bytes.
	{"uuid36+time8", func(dst []byte, i uint64) []byte {
		dst = putUUID(dst, i)
		return binary.BigEndian.AppendUint64(dst, 1_700_000_000_000_000+i*1000)
	}},
}

// threadCPU returns the calling thread's CPU time in nanoseconds (the
// goroutine must be locked to its thread).
func threadCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkKeyBytes is the profile of where a key's bytes go in a Store:
// it adds n distinct keys of a shape (with an expiry each, increasing as
// event times do, or none), then reads the heap after a GC. bytes/key is
// the heap growth over the empty store per key; table, arena and
// arena-used are the table's slots, the arena's slabs and the records
// actually written (padding included) per key; index+other is the rest
// (the expiry index's chunks and bucket lists). add-cpu-ns is the
// thread's CPU time per Add of a new key, dup-cpu-ns per Add of a key
// present (a lookup), both through AddBatch in runs of 1024 as the
// runner calls it.
func BenchmarkKeyBytes(b *testing.B) {
	for _, n := range []int{1e6, 1e7} {
		for _, sh := range keyShapes {
			for _, expiring := range []bool{true, false} {
				name := fmt.Sprintf("keys=%d/%s/expiry=%v", n, sh.name, expiring)
				b.Run(name, func(b *testing.B) {
					n := n
					if testing.Short() {
						n = 1e4
					}
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					for range b.N {
						keyBytesRun(b, n, sh, expiring)
					}
				})
			}
		}
	}
}

func keyBytesRun(b *testing.B, n int, sh keyShape, expiring bool) {
	const run = 1024
	keys := make([]byte, 0, run*64)
	ends := make([]int32, run)
	exps := make([]int64, run)
	added := make([]bool, run)
	tmp := make([]byte, 64)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := New()
	pass := func(wantAdded bool) int64 {
		start := threadCPU()
		for lo := 0; lo < n; lo += run {
			m := min(run, n-lo)
			keys = keys[:0]
			for k := range m {
				i := uint64(lo + k)
				keys = append(keys, sh.put(tmp, i)...)
				ends[k] = int32(len(keys))
				exps[k] = engines.NoExpiry
				if expiring {
					exps[k] = int64(i) * 1000
				}
			}
			if err := s.AddBatch(keys, ends[:m], exps[:m], added[:m]); err != nil {
				b.Fatal(err)
			}
			for k := range m {
				if added[k] != wantAdded {
					b.Fatalf("key %d: added %v, want %v", lo+k, added[k], wantAdded)
				}
			}
		}
		return threadCPU() - start
	}
	addCPU := pass(true)
	runtime.GC()
	runtime.ReadMemStats(&after)
	dupCPU := pass(false)
	used := int64(0)
	s.Range(func(k []byte, _ int64) bool { used += int64(recSize(len(k))); return true })
	used = storedBytes(s, used)
	fn := float64(n)
	heap := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / fn
	tab := float64(len(s.tab.Slots)*8) / fn
	ar := float64(s.arena.bytes()) / fn
	b.ReportMetric(heap, "bytes/key")
	b.ReportMetric(tab, "table-B/key")
	b.ReportMetric(float64(s.tab.Len())/float64(len(s.tab.Slots)), "load")
	b.ReportMetric(ar, "arena-B/key")
	b.ReportMetric(float64(used)/fn, "rec-B/key")
	b.ReportMetric(heap-tab-ar, "index+other-B/key")
	b.ReportMetric(float64(addCPU)/fn, "add-cpu-ns")
	b.ReportMetric(float64(dupCPU)/fn, "dup-cpu-ns")
	b.ReportMetric(0, "ns/op")
	runtime.KeepAlive(s)
	s.Close()
}

// BenchmarkKeyCPU times AddBatch on pre-generated keys (no key writing in
// the timed loop): n new keys, then the same n again (lookups that find
// them), as the thread's CPU time per row. Run the old and new code's
// binaries alternately and compare add-cpu-ns and dup-cpu-ns.
func BenchmarkKeyCPU(b *testing.B) {
	for _, sh := range keyShapes[:2] {
		b.Run(sh.name, func(b *testing.B) {
			const n, run = 1 << 20, 1024
			var keys []byte
			ends := make([]int32, n)
			tmp := make([]byte, 64)
			for i := range n {
				keys = append(keys, sh.put(tmp, uint64(i))...)
				ends[i] = int32(len(keys))
			}
			exps := make([]int64, run)
			for i := range exps {
				exps[i] = engines.NoExpiry
			}
			added := make([]bool, run)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var addNs, dupNs int64
			for range b.N {
				s := New()
				for p := range 2 {
					start := threadCPU()
					lo := int32(0)
					for i := 0; i < n; i += run {
						e := ends[i : i+run]
						base := lo
						var local [run]int32
						for k, v := range e {
							local[k] = v - base
						}
						if err := s.AddBatch(keys[base:e[run-1]], local[:], exps, added); err != nil {
							b.Fatal(err)
						}
						lo = e[run-1]
					}
					if p == 0 {
						addNs += threadCPU() - start
					} else {
						dupNs += threadCPU() - start
					}
				}
				s.Close()
			}
			b.ReportMetric(float64(addNs)/float64(b.N*n), "add-cpu-ns")
			b.ReportMetric(float64(dupNs)/float64(b.N*n), "dup-cpu-ns")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// storedBytes returns the arena bytes of the live records (padding
// included).
func storedBytes(s *Store, _ int64) int64 {
	var n int64
	for _, sl := range s.tab.Slots {
		if sl.Ref != 0 {
			n += int64(recSize(len(s.arena.key(sl.Ref))))
		}
	}
	return n
}
