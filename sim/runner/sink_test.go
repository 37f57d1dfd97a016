package runner

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// binomialBand returns the range of failures that n trials of probability
// p fall in with overwhelming odds: the mean n*p plus or minus 5 standard
// deviations sqrt(n*p*(1-p)). A seeded draw outside it means the sink
// fails batches at a rate other than p.
func binomialBand(n int, p float64) (lo, hi float64) {
	mean := float64(n) * p
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return mean - 5*sd, mean + 5*sd
}

// TestSinkDrawsFollowTheBinomial checks the sink's failure draws on their
// own: over n trigger times, the number of failed writes is binomial(n, p).
func TestSinkDrawsFollowTheBinomial(t *testing.T) {
	const n = 100_000
	const trigger = int64(10e6) // 10 s, in microseconds
	start := int64(1_767_225_600e6)
	for _, seed := range []uint64{1, 42} {
		for _, p := range []float64{0.01, 0.1, 0.5, 0.9} {
			d := newSinkDraws(seed)
			failed := 0
			for k := int64(1); k <= n; k++ {
				if d.fails(start+k*trigger, p) {
					failed++
				}
			}
			lo, hi := binomialBand(n, p)
			if float64(failed) < lo || float64(failed) > hi {
				t.Errorf("seed %d, p %g: %d of %d writes failed, want %.0f to %.0f", seed, p, failed, n, lo, hi)
			}
		}
		if newSinkDraws(seed).fails(start+trigger, 0) {
			t.Errorf("seed %d: a write failed with probability 0", seed)
		}
	}
}

// evenSource yields perBatch rows per trigger interval, each a distinct
// event (int ids), so that every batch emits exactly perBatch rows.
type evenSource struct {
	start, trigger int64 // microseconds
	perBatch       int
	batches        int
	i              int
}

func (s *evenSource) Next(r *generators.Row) bool {
	if s.i >= s.perBatch*s.batches {
		return false
	}
	j, m := s.i/s.perBatch, s.i%s.perBatch
	at := s.start + int64(j)*s.trigger + int64(m+1)
	*r = generators.Row{EventNum: int64(s.i), EventTime: at, IngestTime: at, Arrival: at,
		Truth: generators.Truth{Event: uint64(s.i), Copies: 1}}
	s.i++
	return true
}

// TestSinkFailuresOnASeededRun runs a scenario whose every batch emits the
// same number of rows through an append sink that fails with probability
// p: the rows written twice, divided by the rows per batch, are the failed
// batches, binomial(batches, p). An idempotent sink writes none twice.
func TestSinkFailuresOnASeededRun(t *testing.T) {
	const batches, perBatch, p = 20_000, 3, 0.1
	doc := func(kind string) string {
		return fmt.Sprintf(`name: sink
seed: 11
duration: %ds
trigger: 1s
workload: {rate: %d/s, ids: int}
queries:
  - name: q
    query: dropDuplicates(["event_id"])
sink: {kind: %s, failureProbability: %g}
`, batches, perBatch, kind, p)
	}
	source := func(sc *scenario.Scenario) (Source, error) {
		return &evenSource{start: sc.Start.UnixMicro(), trigger: sc.Trigger.Micros(), perBatch: perBatch, batches: batches}, nil
	}
	res, err := Run(context.Background(), load(t, doc("append")), Options{
		Workers: 1,
		hooks:   testHooks{NewSource: source},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	q := res.Summary.Queries[0]
	if q.Batches != batches || q.EmittedRows != batches*perBatch {
		t.Fatalf("%d batches emitting %d rows, want %d emitting %d", q.Batches, q.EmittedRows, batches, batches*perBatch)
	}
	if q.SinkDuplicates%perBatch != 0 {
		t.Fatalf("sink duplicates %d: not whole batches of %d rows", q.SinkDuplicates, perBatch)
	}
	failed := q.SinkDuplicates / perBatch
	lo, hi := binomialBand(batches, p)
	if float64(failed) < lo || float64(failed) > hi {
		t.Errorf("%d of %d batch writes failed with p %g, want %.0f to %.0f", failed, batches, p, lo, hi)
	}
	if q.SinkWrites != q.EmittedRows+q.SinkDuplicates {
		t.Errorf("sink writes %d != emitted %d + duplicates %d", q.SinkWrites, q.EmittedRows, q.SinkDuplicates)
	}

	res, err = Run(context.Background(), load(t, doc("idempotent")), Options{
		Workers: 1,
		hooks:   testHooks{NewSource: source},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if q := res.Summary.Queries[0]; q.SinkDuplicates != 0 || q.SinkWrites != q.EmittedRows {
		t.Errorf("idempotent sink: %d duplicates, %d writes of %d rows", q.SinkDuplicates, q.SinkWrites, q.EmittedRows)
	}
}
