package pebblestore

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// TestStoreMatchesModelAtScale replays long streams against the model with
// the smallest overlay, so that flushes run in the background every few
// batches while lookups read the overlay being flushed: keys repeat (some
// while their first copy is in a frozen overlay, some after their
// eviction), expiries come nearly in order with outliers far in the future
// and in the past, watermarks advance, stall and move back, batches commit,
// and the store is reopened and compared whole now and then.
func TestStoreMatchesModelAtScale(t *testing.T) {
	steps := 25_000
	if testing.Short() {
		steps = 12_000
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			dir := filepath.Join(t.TempDir(), "s")
			opts := Options{MemTableSize: minMemTableSize, CacheSize: 1 << 20}
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { s.Close() }()
			m := model{cur: map[string]int64{}, committed: map[string]int64{}}
			wm, batch, flushes := int64(0), int64(0), int64(0)
			var keys []byte
			var ends []int32
			var exps []int64
			added := make([]bool, 64)
			// Background flushes start one at a time, so how many a fixed
			// number of steps gives depends on the machine's timing: the
			// stream goes on past steps until three have run (bounded).
			for step := 0; step < steps || (flushes+s.Metrics().Flushes < 3 && step < 8*steps); step++ {
				switch r := rng.IntN(1000); {
				case r < 960:
					// A run of keys through AddBatch: ids repeat within a
					// window that moves with the step.
					keys, ends, exps = keys[:0], ends[:0], exps[:0]
					for range 1 + rng.IntN(8) {
						keys = fmt.Appendf(keys, "key-%d", rng.IntN(step/3+20))
						ends = append(ends, int32(len(keys)))
						var e int64
						switch rng.IntN(60) {
						case 0:
							e = engines.NoExpiry
						case 1:
							e = wm - rng.Int64N(1000) // already expired
						case 2:
							e = wm + 1<<40 // a bad clock
						default:
							e = int64(step)*10 + rng.Int64N(3000)
						}
						exps = append(exps, e)
					}
					if err := s.AddBatch(keys, ends, exps, added[:len(ends)]); err != nil {
						t.Fatal(err)
					}
					start := int32(0)
					for i, end := range ends {
						if want := m.add(keys[start:end], exps[i]); added[i] != want {
							t.Fatalf("step %d: Add(%q, %d) = %v, model %v", step, keys[start:end], exps[i], added[i], want)
						}
						start = end
					}
				case r < 995:
					if rng.IntN(10) == 0 {
						wm -= rng.Int64N(5000) // moves back
					} else {
						wm = int64(step)*10 - 2000 - rng.Int64N(2000)
					}
					got, err := s.Evict(wm)
					if err != nil {
						t.Fatal(err)
					}
					if want := m.evict(wm); got != want {
						t.Fatalf("step %d: Evict(%d) = %d, model %d", step, wm, got, want)
					}
					batch++
					mustCommit(t, s, batch)
					m.commit(batch)
				default:
					batch++
					mustCommit(t, s, batch)
					m.commit(batch)
					flushes += s.Metrics().Flushes
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					if s, err = Open(dir, opts); err != nil {
						t.Fatal(err)
					}
					m.restore()
					sm := &storeMachine{s: s, m: m}
					sm.checkRange(t)
				}
				if s.Len() != len(m.cur) {
					t.Fatalf("step %d: Len = %d, model %d", step, s.Len(), len(m.cur))
				}
			}
			if flushes += s.Metrics().Flushes; flushes < 3 {
				t.Fatalf("%d flushes: the test does not exercise them", flushes)
			}
			(&storeMachine{s: s, m: m}).checkRange(t)
		})
	}
}
