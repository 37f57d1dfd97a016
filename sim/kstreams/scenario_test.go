package kstreams

import (
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/kstreams"
)

// TestScenarioQueryTextIsAQuery checks that the query object a scenario's
// results show is one `simulate explain` takes, and means the same query.
func TestScenarioQueryTextIsAQuery(t *testing.T) {
	for _, q := range []*Trace{ScenarioQuery(120_000, kstreams.StreamTime, 0), ScenarioQuery(1, kstreams.RecordTime, 1), ScenarioQuery(90_500, kstreams.StreamTime, 0), ScenarioQuery(60_000, kstreams.RecordTime, 12)} {
		back, err := LoadQuery([]byte(q.QueryText()))
		if err != nil {
			t.Fatalf("%s: %v", q.QueryText(), err)
		}
		if back.Mode != KeepFirst || back.Window != q.Window || back.Time != q.Time || back.tasks() != q.tasks() {
			t.Errorf("%s loads as %+v, want %+v", q.QueryText(), back, q)
		}
	}
}

// TestScenarioOperator checks the operator a scenario runs against the
// worked example of kstreams.Dedup (W = 2 min, stream time): a@0, b@100 s,
// then a@100 s is forwarded again; its state and dropped puts.
func TestScenarioOperator(t *testing.T) {
	op, err := ScenarioQuery(120_000, kstreams.StreamTime, 1).NewScenarioOperator()
	if err != nil {
		t.Fatal(err)
	}
	var got []engines.Outcome
	for _, r := range []struct {
		key string
		ts  int64
	}{{"a", 0}, {"a", 30_000}, {"b", 100_000}, {"a", 100_000}} {
		got = append(got, op.Process([]byte(r.key), r.ts))
	}
	want := []engines.Outcome{engines.Emitted, engines.DroppedDuplicate, engines.Emitted, engines.Emitted}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	}
	// Rows a@0, a@30, b@100, a@100: all visible (ts >= 100 - 120 + 1 s).
	if l, p := op.State(); l != 4 || p != 4 || op.DroppedRecords() != 0 || op.Function() != "FindDistinctEvents" {
		t.Errorf("state %d, %d, dropped %d, function %s; want 4, 4, 0, FindDistinctEvents", l, p, op.DroppedRecords(), op.Function())
	}
}

// TestScenarioKeepLast checks keep-last as a scenario runs it, against
// kstreams.Table's worked example: a@10, a@20, then the older a@5 and a
// new b@5 are all forwarded (Emitted); the table holds a and b, logical
// and physical alike. Its query text loads back as the same query.
func TestScenarioKeepLast(t *testing.T) {
	for _, reduce := range []bool{false, true} {
		q := ScenarioKeepLast(reduce)
		back, err := LoadQuery([]byte(q.QueryText()))
		if err != nil || back.Mode != KeepLast || back.Reduce != reduce {
			t.Fatalf("%s loads as %+v, %v", q.QueryText(), back, err)
		}
		op, err := q.NewScenarioOperator()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			key string
			ts  int64
		}{{"a", 10}, {"a", 20}, {"a", 5}, {"b", 5}} {
			if o := op.Process([]byte(r.key), r.ts); o != engines.Emitted {
				t.Errorf("reduce %v: %s@%d: %v, want Emitted", reduce, r.key, r.ts, o)
			}
		}
		if l, p := op.State(); l != 2 || p != 2 || op.DroppedRecords() != 0 || !op.KeepLast() {
			t.Errorf("reduce %v: state %d, %d, dropped %d; want 2, 2, 0", reduce, l, p, op.DroppedRecords())
		}
	}
	if _, err := (&Trace{Mode: KeepLast, Partitions: 2}).NewScenarioOperator(); err == nil {
		t.Error("keep-last with 2 partitions ran; want it refused")
	}
}
