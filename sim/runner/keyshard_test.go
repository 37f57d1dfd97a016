package runner

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
)

// TestShardOfEventIDSpreads: the parts of 100,000 ids (random UUID text,
// and consecutive integers) are within 3% of 1/N for
// N = 2, 3, 4 and 7, and a row's part depends on its event_id only.
func TestShardOfEventIDSpreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows = 100_000
	for _, ids := range []generators.IDKind{generators.UUIDIDs, generators.IntIDs} {
		for _, n := range []int{2, 3, 4, 7} {
			counts := make([]int, n)
			for e := range rows {
				var r generators.Row
				if ids == generators.UUIDIDs {
					hi, lo := rng.Uint64(), rng.Uint64()
					copy(r.EventID[:], fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", hi>>32, hi>>16&0xffff, hi&0xfff, lo>>48&0xfff, lo&0xffffffffffff))
				} else {
					r.EventNum = int64(e)
				}
				k := ShardOfEventID(&r, ids, n)
				r.CustomerID, r.EventTime, r.Truth.Event = 7, 9, 11
				if ShardOfEventID(&r, ids, n) != k {
					t.Fatalf("ids %d, N=%d: the part of event %d depends on other columns", ids, n, e)
				}
				counts[k]++
			}
			for k, c := range counts {
				if share := float64(c) * float64(n) / rows; share < 0.97 || share > 1.03 {
					t.Errorf("ids %d, N=%d: part %d holds %d of %d ids (%.3f of a fair share)", ids, n, k, c, rows, share)
				}
			}
		}
	}
}

// BenchmarkShardOfEventID is the per-row cost a part of a run split by
// key adds to each of its jobs to find a row's part, against a bare loop
// over the same rows that reads their event_id (the baseline, in the same
// run): -benchtime 1000000x, ns/op is ns per row.
func BenchmarkShardOfEventID(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]generators.Row, 4096)
	for i := range rows {
		hi, lo := rng.Uint64(), rng.Uint64()
		copy(rows[i].EventID[:], fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", hi>>32, hi>>16&0xffff, hi&0xfff, lo>>48&0xfff, lo&0xffffffffffff))
	}
	var sink int
	b.Run("bare", func(b *testing.B) {
		for i := range b.N {
			sink += int(rows[i&4095].EventID[i&31])
		}
	})
	b.Run("uuid", func(b *testing.B) {
		for i := range b.N {
			sink += ShardOfEventID(&rows[i&4095], generators.UUIDIDs, 4)
		}
	})
	b.Run("int", func(b *testing.B) {
		for i := range b.N {
			rows[i&4095].EventNum = int64(i)
			sink += ShardOfEventID(&rows[i&4095], generators.IntIDs, 4)
		}
	})
	_ = sink
}
