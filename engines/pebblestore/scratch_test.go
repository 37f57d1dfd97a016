package pebblestore

import (
	"encoding/binary"
	"fmt"
	"testing"
	"unsafe"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
)

func scratchKey(buf []byte, i uint64) []byte {
	buf = buf[:0]
	buf = append(buf, 'k')
	x := i * 0x9E3779B97F4A7C15
	for j := 0; j < 36; j++ {
		buf = append(buf, "0123456789abcdef"[x&15])
		x = x>>4 | x<<60
		if j == 15 {
			x ^= i
		}
	}
	return buf
}

func BenchmarkScratch(b *testing.B) {
	for _, mt := range []uint64{4, 16, 64} {
		for _, mode := range []string{"overlay", "bare"} {
			for _, n := range []int{100000, 1000000} {
				b.Run(fmt.Sprintf("mt=%d/mode=%s/keys=%d", mt, mode, n), func(b *testing.B) {
					o := &pebble.Options{MemTableSize: mt << 20, Cache: pebble.NewCache(128 << 20), FormatMajorVersion: pebble.FormatNewest}
					defer o.Cache.Unref()
					o.Levels = make([]pebble.LevelOptions, 7)
					for l := range o.Levels {
						o.Levels[l].Compression = pebble.NoCompression
						o.Levels[l].FilterPolicy = bloom.FilterPolicy(10)
						o.Levels[l].FilterType = pebble.TableFilter
					}
					db, err := pebble.Open(b.TempDir(), o)
					if err != nil {
						b.Fatal(err)
					}
					defer db.Close()
					const batch = 10000
					var kb, xb []byte
					var val [8]byte
					ov := map[string]int64{}
					arena := make([]byte, 0, 1<<20)
					b.ResetTimer()
					b.ReportAllocs()
					for iter := 0; iter < b.N; iter++ {
						var bt *pebble.Batch
						if mode == "indexed" {
							bt = db.NewIndexedBatch()
						} else {
							bt = db.NewBatch()
						}
						for i := 0; i < n; i++ {
							kb = scratchKey(kb, uint64(i%(n*3/4)))
							exp := int64(i)
							present := false
							switch mode {
							case "indexed":
								_, c, err := bt.Get(kb)
								if err == nil {
									c.Close()
									present = true
								}
							case "overlay":
								if _, ok := ov[unsafe.String(unsafe.SliceData(kb), len(kb))]; ok {
									present = true
								} else {
									_, c, err := db.Get(kb)
									if err == nil {
										c.Close()
										present = true
									}
								}
							case "bare":
								_, c, err := db.Get(kb)
								if err == nil {
									c.Close()
									present = true
								}
							}
							if present {
								continue
							}
							binary.BigEndian.PutUint64(val[:], uint64(exp))
							bt.Set(kb, val[:], nil)
							if mode != "bare" {
								xb = append(xb[:0], 'x')
								xb = binary.BigEndian.AppendUint64(xb, uint64(exp))
								xb = append(xb, kb[1:]...)
								bt.Set(xb, nil, nil)
							}
							if mode == "overlay" {
								if len(arena)+len(kb) > cap(arena) {
									arena = make([]byte, 0, 1<<20)
								}
								off := len(arena)
								arena = append(arena, kb...)
								ov[unsafe.String(&arena[off], len(kb))] = exp
							}
							if i%batch == batch-1 {
								if err := bt.Commit(pebble.NoSync); err != nil {
									b.Fatal(err)
								}
								bt.Close()
								if mode == "indexed" {
									bt = db.NewIndexedBatch()
								} else {
									bt = db.NewBatch()
								}
								clear(ov)
							}
						}
						bt.Commit(pebble.NoSync)
						bt.Close()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
				})
			}
		}
	}
}
