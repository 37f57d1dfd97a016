package spark_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
	"github.com/dedupsim/dedupsim/engines/spark"
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
		make func(engines.Store) spark.Operator
	}{
		{"dedupe-noevict", func(s engines.Store) spark.Operator { return spark.NewDedupe(s, false) }},
		{"dedupe-evict", func(s engines.Store) spark.Operator { return spark.NewDedupe(s, true) }},
		{"within", func(s engines.Store) spark.Operator { return spark.NewDedupeWithinWatermark(s, 7) }},
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

// TestWithinWatermarkExpiryWrapsLikeSpark pins the boundary of
// expiresAt = eventTime + delay (microseconds), a wrapping long addition in
// Spark (StreamingDeduplicateWithinWatermarkExec): at exactly 2^63-1 the
// key never expires; one microsecond later the sum wraps negative and the
// key is evicted by the first eviction, whatever its watermark (>= 0), on
// every store.
func TestWithinWatermarkExpiryWrapsLikeSpark(t *testing.T) {
	const delayMs = math.MaxInt64 / 1000 // the largest delay Spark accepts, in ms
	edge := int64(math.MaxInt64) - delayMs*1000
	for _, kind := range []string{"memory", "memory add-only", "pebble"} {
		var s engines.Store = memstore.New()
		switch kind {
		case "memory add-only":
			s = addOnly{s}
		case "pebble":
			ps, err := pebblestore.Open(filepath.Join(t.TempDir(), "store"), pebblestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ps.Close()
			s = ps
		}
		op := spark.NewDedupeWithinWatermark(s, delayMs)
		added := make([]bool, 2)
		if err := op.ProcessBatch([]byte("ab"), []int32{1, 2}, []int64{edge, edge + 1}, added); err != nil {
			t.Fatal(err)
		}
		if !added[0] || !added[1] {
			t.Fatalf("both keys are new: %v", added)
		}
		n, err := op.Evict(0)
		if err != nil || n != 1 || op.Len() != 1 {
			t.Fatalf("%s: evict at watermark 0: removed %d, left %d, %v; want b (wrapped) removed, a kept", kind, n, op.Len(), err)
		}
		if ok, _ := op.Process([]byte("a"), edge); ok {
			t.Fatalf("%s: a expires at 2^63-1 and must still be held", kind)
		}
		if ok, _ := op.Process([]byte("b"), edge+1); !ok {
			t.Fatalf("%s: b wrapped, was evicted, and its copy is new again", kind)
		}
		if n, _ := op.Evict(math.MaxInt64 / 1000 * 1000); n != 1 {
			t.Fatalf("%s: the largest watermark evicts only the wrapped copy of b, removed %d", kind, n)
		}
	}
}
