package runner

// Lessons of the experiments about the layers under the dedup: checkpoints,
// sinks and state store backends (exactly-once.yaml, store-comparison.yaml).

import (
	"bytes"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// faultAt returns the offset of the scenario's fault of the given kind.
func faultAt(t *testing.T, s *scenario.Scenario, kind scenario.FaultKind) time.Duration {
	t.Helper()
	for _, f := range s.Faults {
		if f.Kind == kind {
			return f.At.Std()
		}
	}
	t.Fatalf("%s: no %s fault", s.Name, kind)
	return 0
}

// withFaults returns a copy of s with only the given faults.
func withFaults(s *scenario.Scenario, faults ...scenario.Fault) *scenario.Scenario {
	c := *s
	c.Faults = faults
	return &c
}

// straddling counts, from ground truth, the logical events with a copy
// in a batch before the fault at offset at and another at or after it.
// A fault fires at the first trigger at or after its offset, before that
// trigger's batch, so the batches before it hold the rows that arrived up
// to one trigger earlier.
func straddling(t *testing.T, s *scenario.Scenario, at time.Duration) int64 {
	t.Helper()
	trigger := s.Trigger.Micros()
	start := s.Start.UnixMicro()
	fire := start + (at.Microseconds()+trigger-1)/trigger*trigger
	g, err := generators.New(s.Generator())
	if err != nil {
		t.Fatal(err)
	}
	var before, after []bool
	var row generators.Row
	for g.Next(&row) {
		e := int(row.Truth.Event)
		for len(before) <= e {
			before, after = append(before, false), append(after, false)
		}
		if row.Arrival <= fire-trigger {
			before[e] = true
		} else {
			after[e] = true
		}
	}
	var n int64
	for e := range before {
		if before[e] && after[e] {
			n++
		}
	}
	return n
}

// sameExcept compares two summaries of the same query, after clearing the
// wall-clock fields and whatever clear zeroes, and reports the difference.
func sameExcept(t *testing.T, what string, a, b metrics.QuerySummary, clear func(q *metrics.QuerySummary)) {
	t.Helper()
	a.EventsPerSecond, a.WallSeconds, b.EventsPerSecond, b.WallSeconds = 0, 0, 0, 0
	if clear != nil {
		clear(&a)
		clear(&b)
	}
	if ja, jb := js(a), js(b); ja != jb {
		t.Errorf("%s: %s changed the results:\n%s\n%s", a.Name, what, ja, jb)
	}
}

// sameTimeseries asserts that two runs wrote the same timeseries.csv.
func sameTimeseries(t *testing.T, what string, a, b *Results) {
	t.Helper()
	if !bytes.Equal(timeseries(t, a), timeseries(t, b)) {
		t.Errorf("%s changed timeseries.csv", what)
	}
}

// The three layers: a dedup that misses nothing on its own, a restart from
// the checkpoint that changes nothing, a lost checkpoint that re-admits
// exactly the events straddling it, and an append sink that duplicates
// retried batches where an idempotent one does not.
func TestLessonExactlyOnce(t *testing.T) {
	s := loadExperiment(t, "exactly-once.yaml")
	if s.Sink.Kind != scenario.SinkAppend || s.Sink.FailureProbability <= 0 {
		t.Fatalf("sink %+v; the lesson needs an append sink that fails", s.Sink)
	}
	// A quarter of the rate keeps every layer's lesson and makes the four
	// runs below cheaper; the fault times must stay.
	quarter := *s.Workload.Rate / 4
	s.Workload.Rate = &quarter
	restartAt, lossAt := faultAt(t, s, scenario.Restart), faultAt(t, s, scenario.LoseCheckpoint)
	restartOnly := scenario.Fault{At: interval.Duration(restartAt), Kind: scenario.Restart}

	base := runLesson(t, withFaults(s))
	restarted := runLesson(t, withFaults(s, restartOnly))
	full := runLesson(t, s)
	idem := *s
	idem.Sink.Kind = scenario.SinkIdempotent
	idempotent := runLesson(t, &idem)

	b := byName(t, base, "within-watermark")["within-watermark"]
	r := byName(t, restarted, "within-watermark")["within-watermark"]
	f := byName(t, full, "within-watermark")["within-watermark"]
	i := byName(t, idempotent, "within-watermark")["within-watermark"]

	// Layer 1: the dedup alone misses nothing and loses nothing.
	if b.TrueDuplicates == 0 || b.MissedDuplicates != 0 || b.FalseDrops != 0 {
		t.Errorf("no faults: missed %d of %d copies, lost %d events; want some copies, 0 and 0", b.MissedDuplicates, b.TrueDuplicates, b.FalseDrops)
	}

	// Layer 2a: a restart from the query's own checkpoint changes nothing.
	if r.Restarts != 1 {
		t.Errorf("restart only: %d restarts, want 1", r.Restarts)
	}
	sameExcept(t, "a restart", b, r, func(q *metrics.QuerySummary) { q.Restarts = 0 })
	sameTimeseries(t, "a restart", base, restarted)

	// Layer 2b: a lost checkpoint re-admits, once each, the events with a
	// copy on both sides of the loss; nothing else changes in ground truth.
	want := straddling(t, s, lossAt)
	if want == 0 {
		t.Fatal("no event has copies on both sides of the lost checkpoint; the lesson shows nothing")
	}
	if got := f.MissedDuplicates - b.MissedDuplicates; got != want {
		t.Errorf("lost checkpoint: missed duplicates rose by %d (%d -> %d); want the %d events with copies before and after the loss",
			got, b.MissedDuplicates, f.MissedDuplicates, want)
	}
	if f.Restarts != 2 || f.FalseDrops != 0 || f.InputRows != b.InputRows || f.LogicalEvents != b.LogicalEvents {
		t.Errorf("with both faults: %d restarts, %d false drops, %d rows, %d events; want 2, 0, %d, %d",
			f.Restarts, f.FalseDrops, f.InputRows, f.LogicalEvents, b.InputRows, b.LogicalEvents)
	}
	if f.EmittedRows != b.EmittedRows+want {
		t.Errorf("with both faults: emitted %d rows; want %d + the %d re-admitted", f.EmittedRows, b.EmittedRows, want)
	}

	// Layer 3: an append sink writes a retried batch again; an idempotent
	// one does not, and nothing else changes.
	if f.SinkDuplicates == 0 || f.SinkWrites != f.EmittedRows+f.SinkDuplicates {
		t.Errorf("append sink: %d duplicates, %d writes of %d emitted rows; want duplicates > 0 and writes = emitted + duplicates",
			f.SinkDuplicates, f.SinkWrites, f.EmittedRows)
	}
	if i.SinkDuplicates != 0 || i.SinkWrites != i.EmittedRows {
		t.Errorf("idempotent sink: %d duplicates, %d writes of %d emitted rows; want 0 and writes = emitted", i.SinkDuplicates, i.SinkWrites, i.EmittedRows)
	}
	sameExcept(t, "the sink kind", f, i, func(q *metrics.QuerySummary) { q.SinkDuplicates, q.SinkWrites = 0, 0 })
	sameTimeseries(t, "the sink kind", full, idempotent)
}

// store-comparison: the backends differ in cost, never in results; the
// queries' state behaves as the file's comment says.
func TestLessonStoreComparison(t *testing.T) {
	s := loadExperiment(t, "store-comparison.yaml")
	// ~320,000 rows per query at full size. A tenth of the rate keeps the
	// lesson: the duration must stay, for the within-watermark keys (which
	// live about twice the 2-minute delay) to be evicted at all.
	tenth := *s.Workload.Rate / 10
	s.Workload.Rate = &tenth
	mem := runLesson(t, s)
	peb, err := runOpts(t, s, Options{Store: scenario.StorePebble})
	if err != nil {
		t.Fatal(err)
	}
	for k := range mem.Summary.Queries {
		a, b := mem.Summary.Queries[k], peb.Summary.Queries[k]
		if a.Store != scenario.StoreMemory || b.Store != scenario.StorePebble {
			t.Fatalf("stores %q and %q", a.Store, b.Store)
		}
		sameExcept(t, "the backend", a, b, func(q *metrics.QuerySummary) { q.Store = "" })
	}
	sameTimeseries(t, "the backend", mem, peb)

	q := byName(t, mem, "within-watermark", "pair-keyed", "unbounded")
	ww, pk, ub := q["within-watermark"], q["pair-keyed"], q["unbounded"]
	if ub.FinalStateRows != ub.LogicalEvents {
		t.Errorf("unbounded: final state %d rows, want the %d logical events", ub.FinalStateRows, ub.LogicalEvents)
	}
	neverEvicts(t, mem, "unbounded")
	if ww.PeakStateRows <= pk.PeakStateRows || ww.PeakStateRows >= ub.PeakStateRows {
		t.Errorf("peak state: pair-keyed %d, within-watermark %d, unbounded %d; want increasing", pk.PeakStateRows, ww.PeakStateRows, ub.PeakStateRows)
	}
	for _, x := range []metrics.QuerySummary{ww, pk, ub} {
		noLossNoMiss(t, x)
	}
}
