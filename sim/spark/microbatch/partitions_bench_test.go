package microbatch

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// BenchmarkPartitionedBatch measures a batch of 10,000 generated rows
// (UUID ids, a quarter of them repeats) through
// dropDuplicatesWithinWatermark on memory stores, with one store per
// operator (partitions=0, the baseline in the same run) and over 1, 8
// and 200 shuffle partitions: the cost of placing each key with Spark's
// hash and of grouping the batch by partition. The stores hold the
// batch's keys already, so each measured batch looks every key up and
// stores none: the store's work is the same for all.
func BenchmarkPartitionedBatch(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	batch := &generators.Batch{IDs: generators.UUIDIDs}
	const hex = "0123456789abcdef"
	for i := range 10_000 {
		var r generators.Row
		if i%4 == 3 {
			r = batch.Rows[rng.IntN(len(batch.Rows))]
		} else {
			for j := range r.EventID {
				if j == 8 || j == 13 || j == 18 || j == 23 {
					r.EventID[j] = '-'
				} else {
					r.EventID[j] = hex[rng.IntN(16)]
				}
			}
			r.EventTime = 1_767_225_600_000_000 + int64(i)*1000
		}
		batch.Rows = append(batch.Rows, r)
	}
	c, _ := chain.Parse(`withWatermark("event_time", "1 hour").dropDuplicatesWithinWatermark(["event_id"])`)
	plan, _ := chain.PlanFor(c, generatedSchema())
	for _, n := range []int{0, 1, 8, 200} {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			var q *Query
			var err error
			if n == 0 {
				q, err = NewQuery(plan, func(int, chain.Node) (engines.Store, error) { return memstore.New(), nil }, State{})
			} else {
				q, err = NewPartitionedQuery(plan, n, func(int, int, chain.Node) (engines.Store, error) { return memstore.New(), nil }, State{})
			}
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			// The first batch stores the keys; the measured ones find
			// them all.
			if _, err := q.RunBatch(batch, BatchMeta{}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := q.RunBatch(batch, BatchMeta{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(batch.Rows)), "ns/row")
		})
	}
}
