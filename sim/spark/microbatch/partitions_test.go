package microbatch

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// generatedSchema is the generated rows' schema, as the scenario loader
// gives it to the planner.
func generatedSchema() chain.Schema {
	var s chain.Schema
	for _, c := range generators.Columns() {
		t := chain.Other
		if c.Timestamp {
			t = chain.Timestamp
		}
		s = append(s, chain.Column{Name: c.Name, Type: t})
	}
	return s
}

// partitionedQuery plans query on the generated schema and opens it on
// n in-memory partitions.
func partitionedQuery(t *testing.T, query string, n int) *Query {
	t.Helper()
	c, err := chain.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := chain.PlanFor(c, generatedSchema())
	if err != nil {
		t.Fatal(err)
	}
	q, err := NewPartitionedQuery(plan, n, func(int, int, chain.Node) (engines.Store, error) { return memstore.New(), nil }, State{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// holding returns the partitions whose store holds keys, with how many.
func holding(st *PartitionStats) map[int]int64 {
	out := map[int]int64{}
	for p, n := range st.Total {
		if n > 0 {
			out[p] = n
		}
	}
	return out
}

// TestPartitionsAreSparks runs generated rows through a partitioned query
// and checks which partition's store each key lands in.
//
// Integer event ids are LongType. Spark documents where the longs 0 to 4
// go among 200 partitions, pmod(hash(id), 200) over spark.range(5): 5,
// 69, 128, 107, 140 (japila-books spark-sql-internals, HashPartitioning,
// a spark-shell transcript), and Apache DataFusion Comet's test_pmod,
// generated with Spark, gives -1 -> 193, MaxInt64 -> 171, MinInt64 -> 115.
// Those are the expectations, not this package's hash.
//
// For UUID ids (strings) and timestamps there is no published value for
// 36-character strings, so the expectation is engines/spark/partition's, itself
// checked against Spark's published hashes, folded by hand in Spark's
// column order.
func TestPartitionsAreSparks(t *testing.T) {
	t.Run("int event_id", func(t *testing.T) {
		q := partitionedQuery(t, `dropDuplicates(["event_id"])`, 200)
		b := &generators.Batch{IDs: generators.IntIDs}
		for _, id := range []int64{0, 1, 2, 3, 4, -1, math.MaxInt64, math.MinInt64} {
			b.Rows = append(b.Rows, generators.Row{EventNum: id})
		}
		if _, err := q.RunBatch(b, BatchMeta{}); err != nil {
			t.Fatal(err)
		}
		want := map[int]int64{5: 1, 69: 1, 128: 1, 107: 1, 140: 1, 193: 1, 171: 1, 115: 1}
		if got := holding(q.PartitionStats(0)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("keys per partition %v, Spark places them %v", got, want)
		}
	})
	t.Run("uuid event_id and event_time", func(t *testing.T) {
		q := partitionedQuery(t, `withWatermark("event_time", "1 hour").dropDuplicates(["event_id", "event_time"])`, 200)
		b := &generators.Batch{IDs: generators.UUIDIDs}
		ids := []string{"00000000-0000-4000-8000-000000000000", "9b2e4f6a-1c3d-4e5f-8a7b-0c1d2e3f4a5b", "ffffffff-ffff-4fff-bfff-ffffffffffff"}
		times := []int64{1_767_225_600_000_000, 1_767_225_601_234_567, 1}
		want := map[int]int64{}
		for k, id := range ids {
			var r generators.Row
			copy(r.EventID[:], id)
			r.EventTime = times[k]
			b.Rows = append(b.Rows, r)
			h := partition.String(partition.Seed, id)
			h = partition.Timestamp(h, times[k])
			want[partition.Of(h, 200)]++
		}
		if _, err := q.RunBatch(b, BatchMeta{}); err != nil {
			t.Fatal(err)
		}
		if got := holding(q.PartitionStats(0)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("keys per partition %v, want %v", got, want)
		}
	})
	t.Run("every column type", func(t *testing.T) {
		q := partitionedQuery(t, `dropDuplicates(["customer_id", "ingest_time", "attempt", "payload"])`, 7)
		r := generators.Row{CustomerID: -42, IngestTime: 1_767_225_600_000_001, Attempt: 3, Payload: 1 << 40}
		b := &generators.Batch{IDs: generators.UUIDIDs, Rows: []generators.Row{r}}
		h := partition.Long(partition.Seed, r.CustomerID)
		h = partition.Timestamp(h, r.IngestTime)
		h = partition.Int(h, int32(r.Attempt))
		h = partition.Long(h, r.Payload)
		if _, err := q.RunBatch(b, BatchMeta{}); err != nil {
			t.Fatal(err)
		}
		want := map[int]int64{partition.Of(h, 7): 1}
		if got := holding(q.PartitionStats(0)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("keys per partition %v, want %v", got, want)
		}
	})
}

// TestAttemptIsIntegerType places keys holding attempt, an IntegerType
// column (Spark hashes it with hashInt), where real Spark does. The
// partitions were computed by pyspark 3.5.9 and 4.3.0 (local[2], session
// time zone UTC) on a DataFrame with attempt IntegerType, event_id
// StringType, customer_id and payload LongType, event_time and
// ingest_time TimestampType:
//
//	pmod(hash(attempt), 200)                       0->191 1->43 2->174 3->51 7->107 -1->13
//	pmod(hash(attempt), 7)                         0->1 1->2 2->5 3->4 7->2 -1->3
//	pmod(hash(event_id, attempt), 200)             rows A, B below: 198, 190
//	pmod(hash(event_id, customer_id, event_time,
//	          ingest_time, attempt, payload), 200) rows A, B below: 8, 114
//
// Rows A and B: event_id "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
// customer_id 42, event_time 2024-01-01T00:00:00Z, payload 1234567; A has
// ingest_time +3 s and attempt 0, B +9 s and attempt 2. A LongType hash
// of attempt 0 would put it in partition 5.
func TestAttemptIsIntegerType(t *testing.T) {
	row := func(ingestS int64, attempt int64) generators.Row {
		r := generators.Row{CustomerID: 42, EventTime: 1_704_067_200_000_000, IngestTime: 1_704_067_200_000_000 + ingestS*1_000_000, Attempt: attempt, Payload: 1234567}
		copy(r.EventID[:], "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
		return r
	}
	attempts := func() *generators.Batch {
		b := &generators.Batch{IDs: generators.UUIDIDs}
		for _, a := range []int64{0, 1, 2, 3, 7, -1} {
			b.Rows = append(b.Rows, generators.Row{Attempt: a})
		}
		return b
	}
	ab := func() *generators.Batch {
		return &generators.Batch{IDs: generators.UUIDIDs, Rows: []generators.Row{row(3, 0), row(9, 2)}}
	}
	for _, tc := range []struct {
		query string
		n     int
		rows  *generators.Batch
		want  map[int]int64
	}{
		{`dropDuplicates(["attempt"])`, 200, attempts(), map[int]int64{191: 1, 43: 1, 174: 1, 51: 1, 107: 1, 13: 1}},
		{`dropDuplicates(["attempt"])`, 7, attempts(), map[int]int64{1: 1, 2: 2, 5: 1, 4: 1, 3: 1}},
		{`dropDuplicates(["event_id", "attempt"])`, 200, ab(), map[int]int64{198: 1, 190: 1}},
		{`dropDuplicates()`, 200, ab(), map[int]int64{8: 1, 114: 1}},
	} {
		q := partitionedQuery(t, tc.query, tc.n)
		if _, err := q.RunBatch(tc.rows, BatchMeta{}); err != nil {
			t.Fatal(err)
		}
		if got := holding(q.PartitionStats(0)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s on %d partitions: keys per partition %v, Spark places them %v", tc.query, tc.n, got, tc.want)
		}
		for i := range tc.rows.Rows {
			r := &tc.rows.Rows[i]
			cols := q.plan.Nodes[0].KeyColumns
			var vals []any
			for _, c := range cols {
				switch c {
				case generators.ColEventID:
					vals = append(vals, string(r.EventID[:]))
				case generators.ColCustomerID:
					vals = append(vals, r.CustomerID)
				case generators.ColEventTime:
					vals = append(vals, r.EventTime)
				case generators.ColIngestTime:
					vals = append(vals, r.IngestTime)
				case generators.ColAttempt:
					vals = append(vals, r.Attempt)
				case generators.ColPayload:
					vals = append(vals, r.Payload)
				}
			}
			if g, w := HashDecoded(cols, vals), HashGenerated(r, tc.rows.IDs, cols); g != w {
				t.Errorf("%s: HashDecoded %d, HashGenerated %d", tc.query, g, w)
			}
		}
	}
}

// TestPartitionedQueryRefusesRowsWithoutTypes: rows that cannot say their
// columns' Spark types cannot be placed in partitions, and the batch fails
// with a line naming the operator.
func TestPartitionedQueryRefusesRowsWithoutTypes(t *testing.T) {
	q := partitionedQuery(t, `dropDuplicates(["event_id"])`, 3)
	_, err := q.RunBatch(untypedRows{}, BatchMeta{})
	if err == nil {
		t.Fatal("a batch of untyped rows ran on partitions")
	}
	if want := "operator 0 (dedupe): rows of type microbatch.untypedRows cannot be placed in partitions"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to say %q", err, want)
	}
}

type untypedRows struct{}

func (untypedRows) Len() int                                    { return 1 }
func (untypedRows) EventTime(int, int) int64                    { return 0 }
func (untypedRows) AppendKey(dst []byte, _ int, _ []int) []byte { return append(dst, 1) }

// TestPartitionedQueryAllocatesNothingPerRow: a batch on partitions
// allocates nothing once the buffers have grown (the hot path rule).
func TestPartitionedQueryAllocatesNothingPerRow(t *testing.T) {
	q := partitionedQuery(t, `withWatermark("event_time", "1 hour").dropDuplicatesWithinWatermark(["event_id"])`, 16)
	b := &generators.Batch{IDs: generators.IntIDs}
	for i := range 2000 {
		b.Rows = append(b.Rows, generators.Row{EventNum: int64(i % 500), EventTime: int64(i) * 1000})
	}
	if _, err := q.RunBatch(b, BatchMeta{}); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := q.RunBatch(b, BatchMeta{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f allocations per batch", allocs)
	// The same keys again: every row a duplicate, the stores do not grow,
	// and neither the executor nor the stores allocate.
	if allocs > 0 {
		t.Errorf("%.0f allocations per batch of %d rows", allocs, len(b.Rows))
	}
}
