package expiry

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestExpiryIndexMatchesSortedModel drives the expiry index alone with
// streams shaped to reach every path of its layout, and checks each
// popUpTo against a model (a plain slice, scanned): the ring growing and
// coarsening while the live span grows, watermarks that cut buckets or
// jump past the whole ring, far-future items that must move into the
// ring later, items below the ring, watermarks that move back, and the
// index emptying and re-anchoring at another time.
func TestExpiryIndexMatchesSortedModel(t *testing.T) {
	type phase struct {
		name string
		// next returns the next expiry given the item count so far and
		// the current watermark.
		next func(rng *rand.Rand, i int, wm int64) int64
		// step is how far the watermark moves per evict (may be < 0).
		step func(rng *rand.Rand) int64
	}
	phases := []phase{
		{"in-order-jitter", func(rng *rand.Rand, i int, wm int64) int64 {
			return int64(i)*1000 + rng.Int64N(5000)
		}, func(rng *rand.Rand) int64 { return 3_000_000 }},
		{"outliers", func(rng *rand.Rand, i int, wm int64) int64 {
			switch rng.IntN(40) {
			case 0:
				return wm + 1<<40 // a bad clock
			case 1:
				return wm - rng.Int64N(1_000_000) // already expired
			case 2:
				return math.MaxInt64 - 1
			}
			return int64(i)*1000 + rng.Int64N(5000)
		}, func(rng *rand.Rand) int64 {
			if rng.IntN(8) == 0 {
				return -rng.Int64N(2_000_000) // moves back
			}
			return rng.Int64N(6_000_000)
		}},
		{"slow-rate", func(rng *rand.Rand, i int, wm int64) int64 {
			return int64(i)*50_000_000 + rng.Int64N(1_000_000)
		}, func(rng *rand.Rand) int64 { return 40_000_000 }},
		{"tiny-steps", func(rng *rand.Rand, i int, wm int64) int64 {
			return int64(i)*10 + rng.Int64N(100)
		}, func(rng *rand.Rand) int64 { return rng.Int64N(3) }},
	}
	for seed := uint64(1); seed <= 3; seed++ {
		for _, ph := range phases {
			rng := rand.New(rand.NewPCG(seed, 7))
			x := New()
			var model []Item
			var got []Item
			collect := func(its []Item) { got = append(got, its...) }
			wm := int64(0)
			ref := uint32(0)
			for i := 0; i < 150_000; i++ {
				ref++
				it := Item{At: OrderKey(ph.next(rng, i, wm)), Ref: ref}
				x.Push(it)
				model = append(model, it)
				if i%1000 != 999 {
					continue
				}
				wm += ph.step(rng)
				if i%50_000 == 49_999 {
					wm += 1 << 36 // jump past everything but the far outliers
				}
				got = got[:0]
				n := x.PopUpTo(OrderKey(wm), collect)
				var want []Item
				k := 0
				for _, m := range model {
					if m.At <= OrderKey(wm) {
						want = append(want, m)
					} else {
						model[k] = m
						k++
					}
				}
				model = model[:k]
				if n != len(got) || n != len(want) || x.size != len(model) {
					t.Fatalf("%s seed %d item %d: popUpTo(%d) = %d (%d passed), model %d; size %d, model %d",
						ph.name, seed, i, wm, n, len(got), len(want), x.size, len(model))
				}
				byRef := func(a, b Item) int { return int(a.Ref) - int(b.Ref) }
				slices.SortFunc(got, byRef)
				slices.SortFunc(want, byRef)
				if !slices.Equal(got, want) {
					t.Fatalf("%s seed %d item %d: popUpTo(%d) passed other items than the model", ph.name, seed, i, wm)
				}
			}
		}
	}
}
