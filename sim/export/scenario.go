package export

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// faultKind is what happens before a batch: nothing, a restart, or a
// start on a new checkpoint.
type faultKind int

const (
	noFault faultKind = iota
	restartFault
	loseFault
)

// source yields the batches of an export in order.
type source interface {
	// next returns the next batch, the fault before it, and its
	// timestamp in ms since the epoch; ok is false after the last batch.
	// The batch is valid until the next call.
	next() (b batch, f faultKind, tsMs int64, ok bool, err error)
}

// scenarioSource forms a scenario's batches as `simulate run` does: a
// trigger at start + n*trigger (n >= 1) takes the rows that arrived at or
// before it and after the previous trigger; triggers without rows are
// skipped. A fault fires before the first batch whose trigger is at or
// after start + at.
type scenarioSource struct {
	gen     *generators.Generator
	start   int64
	trigger int64
	t       int64 // the next trigger (us)
	look    generators.Row
	hasLook bool
	faults  []scenario.Fault
	// first is set until the first batch: faults before it are dropped.
	first bool
	b     genBatch
}

func newScenarioSource(sc *scenario.Scenario) (*scenarioSource, error) {
	g, err := generators.New(sc.Generator())
	if err != nil {
		return nil, err
	}
	s := &scenarioSource{
		gen: g, start: sc.Start.UnixMicro(), trigger: sc.Trigger.Micros(),
		faults: slices.SortedStableFunc(slices.Values(sc.Faults), func(a, b scenario.Fault) int { return cmp.Compare(a.At, b.At) }),
		first:  true,
	}
	s.b.IDs = g.IDs()
	s.t = s.start + s.trigger
	s.hasLook = g.Next(&s.look)
	return s, nil
}

func (s *scenarioSource) next() (batch, faultKind, int64, bool, error) {
	if !s.hasLook {
		return nil, noFault, 0, false, nil
	}
	if s.look.Arrival > s.t {
		// Skip the triggers without rows: to the first at or after the
		// next arrival.
		n := (s.look.Arrival - s.start + s.trigger - 1) / s.trigger
		s.t = s.start + n*s.trigger
	}
	s.b.Rows = s.b.Rows[:0]
	for s.hasLook && s.look.Arrival <= s.t {
		s.b.Rows = append(s.b.Rows, s.look)
		s.hasLook = s.gen.Next(&s.look)
	}
	f := noFault
	for len(s.faults) > 0 && s.start+s.faults[0].At.Micros() <= s.t {
		if !s.first {
			f = max(f, kindOf(s.faults[0].Kind))
		}
		s.faults = s.faults[1:]
	}
	s.first = false
	t := s.t
	s.t += s.trigger
	return &s.b, f, t / 1000, true, nil
}

func kindOf(k scenario.FaultKind) faultKind {
	if k == scenario.LoseCheckpoint {
		return loseFault
	}
	return restartFault
}

// scenarioQueries returns the queries of sc as an export runs them: one per
// job of `simulate run` (a sweep runs each query once per delay, named
// NAME@DELAY), planned against the generated columns.
func scenarioQueries(sc *scenario.Scenario) ([]Query, error) {
	jobs, err := runner.Jobs(sc)
	if err != nil {
		return nil, err
	}
	out := make([]Query, len(jobs))
	for i, j := range jobs {
		if !safeName(j.FileName) {
			return nil, fmt.Errorf("query %s: the name cannot name a Spark query's folders", j.FileName)
		}
		apply, verbatim := pythonChain(j.Query, j.Plan.Chain)
		out[i] = Query{Name: j.FileName, Text: j.Query, Apply: apply, Verbatim: verbatim, Plan: j.Plan}
	}
	return out, nil
}
