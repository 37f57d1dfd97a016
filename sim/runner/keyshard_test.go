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
