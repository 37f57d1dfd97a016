package microbatch

import (
	"errors"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// startFrom opens a query of text over testSchema from whatever cp holds,
// planned with chain.PlanDeferred.
func startFrom(t *testing.T, cp *Checkpoint, text string) *Query {
	t.Helper()
	c, err := chain.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := chain.PlanDeferred(c, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := cp.Recover()
	if err != nil {
		t.Fatal(err)
	}
	stores := func(op int, _ chain.Node) (engines.Store, error) {
		return memstore.Open(cp.StateDir(op), rec.State.NextBatchID, memstore.Options{})
	}
	q, err := NewQuery(plan, stores, rec.State)
	if err != nil {
		t.Fatal(err)
	}
	q.SetCheckpoint(cp)
	t.Cleanup(func() { q.Close() })
	return q
}

func rowsAt(seconds ...int64) *testRows {
	r := &testRows{}
	for i, s := range seconds {
		r.ids = append(r.ids, int64(i))
		r.ts = append(r.ts, s*1_000_000)
	}
	return r
}

// TestRestartRunsNoNoDataBatch is the brief's example, by hand from
// MicroBatchExecution: batch 0 holds a@100s (delay 10 s) and runs with
// watermark 0, leaving the watermark at 90 s. The query restarts before its
// no-data batch. Spark's lastExecution is then empty, so no idle trigger
// runs a no-data batch; the next data batch, c@50s, is batch 1, whose late
// filter uses batch 0's watermark, 0: c is emitted (and, its event time a
// key at or below 90 s, evicted at once).
func TestRestartRunsNoNoDataBatch(t *testing.T) {
	const q10 = `withWatermark("t", "10 seconds").dropDuplicates(["id", "t"])`
	cp, err := CreateCheckpoint(t.TempDir()+"/cp", CheckpointMeta{Query: q10, Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	q := startFrom(t, cp, q10)
	if _, err := q.RunBatch(rowsAt(100), BatchMeta{}); err != nil {
		t.Fatal(err)
	}
	if !q.NeedsNoDataBatch() {
		t.Fatal("before the restart: the watermark moved to 90 s, a no-data batch is due")
	}
	q.Close()

	q = startFrom(t, cp, q10)
	if st := q.State(); !st.Restarted || st.NextBatchID != 1 || st.Watermark != 90_000 || st.LastBatchWatermark != 0 {
		t.Fatalf("recovered %+v", st)
	}
	for range 3 { // idle triggers
		if q.NeedsNoDataBatch() {
			t.Fatal("a restarted query asked for a no-data batch before any batch ran")
		}
	}
	p, err := q.RunBatch(rowsAt(50), BatchMeta{})
	if err != nil {
		t.Fatal(err)
	}
	op := p.Operators[0]
	if p.BatchID != 1 || p.Watermark != 90_000 || p.LateWatermark != 0 || p.NumOutputRows != 1 ||
		op.NumRowsDroppedByWatermark != 0 || op.NumRowsUpdated != 1 || op.NumRowsRemoved != 1 || op.NumRowsTotal != 1 {
		t.Fatalf("batch after the restart: %+v", p)
	}
	if q.State().Restarted {
		t.Fatal("a batch ran: the query is no longer waiting for data")
	}
}

// TestRedefinitionFailsAtFirstNonZeroWatermark: a second withWatermark
// runs while the watermark is 0 and fails where Spark's
// PropagateWatermarkSimulator first propagates another value: when asked
// for a no-data batch, or when planning the next data batch.
func TestRedefinitionFailsAtFirstNonZeroWatermark(t *testing.T) {
	const two = `withWatermark("t", "1 second").withWatermark("t", "2 seconds").dropDuplicates(["id"])`
	cp, err := CreateCheckpoint(t.TempDir()+"/cp", CheckpointMeta{Query: two, Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	q := startFrom(t, cp, two)
	// 1 s - 2 s < 0: the watermark stays 0, and the query runs.
	for range 2 {
		if _, err := q.RunBatch(rowsAt(1), BatchMeta{}); err != nil {
			t.Fatal(err)
		}
		if need, err := q.ShouldRunAnotherBatch(); need || err != nil {
			t.Fatalf("watermark 0: %v, %v", need, err)
		}
	}
	// 10 s: min(9 s, 8 s) = 8 s.
	if _, err := q.RunBatch(rowsAt(10), BatchMeta{}); err != nil {
		t.Fatal(err)
	}
	_, err = q.ShouldRunAnotherBatch()
	var f *QueryFailure
	if !errors.As(err, &f) || f.BatchID != 3 || !strings.Contains(err.Error(), "Redefining watermark is disallowed") {
		t.Fatalf("asking for a no-data batch at watermark 8 s: %v", err)
	}
	if q.NeedsNoDataBatch() {
		t.Fatal("a failing query needs no no-data batch")
	}
	// With no-data batches off, the next data batch fails instead.
	if _, err := q.RunBatch(rowsAt(11), BatchMeta{}); !errors.As(err, &f) || f.BatchID != 3 {
		t.Fatalf("planning batch 3: %v", err)
	}
}
