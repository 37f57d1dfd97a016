package microbatch

import (
	"slices"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// TestRegroupIsAStableSortByPartition: a chain's first operator hands its
// rows on grouped by its partition among the shuffle partitions, each
// partition's rows in their input order, and regrouping allocates nothing
// once its buffers have grown.
func TestRegroupIsAStableSortByPartition(t *testing.T) {
	c, err := chain.Parse(`withWatermark("event_time", "1 hour").dropDuplicates(["event_id", "event_time"]).dropDuplicatesWithinWatermark(["event_id"])`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := chain.PlanFor(c, generatedSchema())
	if err != nil {
		t.Fatal(err)
	}
	q, err := NewQuery(plan, func(int, chain.Node) (engines.Store, error) { return memstore.New(), nil }, State{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.SetShufflePartitions(7); err != nil {
		t.Fatal(err)
	}
	if err := q.SetShufflePartitions(0); err == nil {
		t.Error("0 shuffle partitions accepted")
	}
	b := &generators.Batch{IDs: generators.IntIDs}
	kept := make([]int32, 2000)
	for i := range 2000 {
		b.Rows = append(b.Rows, generators.Row{EventNum: int64(i % 300), EventTime: int64(i) * 1000})
		kept[i] = int32(i)
	}
	d := q.ops[0]
	if err := q.regroup(d, b, kept); err != nil {
		t.Fatal(err)
	}
	part := func(i int32) int {
		return partition.Of(HashGenerated(&b.Rows[i], b.IDs, d.node.KeyColumns), 7)
	}
	for k := 1; k < len(kept); k++ {
		pa, pb := part(kept[k-1]), part(kept[k])
		if pa > pb || pa == pb && kept[k-1] > kept[k] {
			t.Fatalf("rows %d (partition %d) then %d (partition %d): not a stable sort by partition", kept[k-1], pa, kept[k], pb)
		}
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := q.regroup(d, b, kept); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("%.0f allocations per regroup of %d rows", allocs, len(kept))
	}
	// The last operator hands nothing on: its order is left alone.
	last := append([]int32(nil), kept...)
	if err := q.regroup(q.ops[1], b, last); err != nil || !slices.Equal(last, kept) {
		t.Errorf("the last operator's rows were reordered (%v)", err)
	}
}
