package engines_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
)

// addOnly hides every optional interface of a store, so that
// ProcessBatch takes its one-Add-per-key path.
type addOnly struct{ engines.Store }

// TestProcessBatchMatchesProcess checks that ProcessBatch decides as
// Process in a loop, for every operator, over a store that adds in
// batches (memstore) and over one that does not.
func TestProcessBatchMatchesProcess(t *testing.T) {
	kinds := []struct {
		name string
		make func(engines.Store) engines.Operator
	}{
		{"dedupe-noevict", func(s engines.Store) engines.Operator { return engines.NewDedupe(s, false) }},
		{"dedupe-evict", func(s engines.Store) engines.Operator { return engines.NewDedupe(s, true) }},
		{"within", func(s engines.Store) engines.Operator { return engines.NewDedupeWithinWatermark(s, 7) }},
	}
	for _, k := range kinds {
		for _, wrap := range []bool{false, true} {
			var bs engines.Store = memstore.New()
			if wrap {
				bs = addOnly{bs}
			}
			batch, single := k.make(bs), k.make(memstore.New())
			rng := rand.New(rand.NewPCG(1, 2))
			for run := range 50 {
				var keys []byte
				var ends []int32
				var ets []int64
				for range rng.IntN(100) {
					keys = strconv.AppendInt(keys, int64(rng.IntN(400)), 10)
					ends = append(ends, int32(len(keys)))
					ets = append(ets, int64(run*1000+rng.IntN(20_000)))
				}
				added := make([]bool, len(ends))
				if err := batch.ProcessBatch(keys, ends, ets, added); err != nil {
					t.Fatal(err)
				}
				start := int32(0)
				for i, end := range ends {
					want, _ := single.Process(keys[start:end], ets[i])
					if added[i] != want {
						t.Fatalf("%s (wrapped %v) run %d row %d: ProcessBatch %v, Process %v", k.name, wrap, run, i, added[i], want)
					}
					start = end
				}
				nb, _ := batch.Evict(int64(run * 900))
				ns, _ := single.Evict(int64(run * 900))
				if nb != ns || batch.Len() != single.Len() {
					t.Fatalf("%s (wrapped %v) run %d: evicted %d/%d, left %d/%d", k.name, wrap, run, nb, ns, batch.Len(), single.Len())
				}
			}
		}
	}
}
