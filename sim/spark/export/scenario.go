package export

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/registry"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
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
// before it and after the previous batch's; triggers without rows are
// skipped. With a spark: block, a batch takes at most
// spark.maxRowsPerBatch rows (the oldest; the rest wait for the next
// triggers), a trigger that falls in a span of spark.downtime fires at
// its end (sparkmodel.Tracker.NextTrigger), and with a cost block a batch
// that overruns its trigger moves the next one to its end
// (clusterModel). A fault that restarts the query (restart,
// lose-checkpoint) fires before the first batch whose trigger is at or
// after start + at; a bad-clock fault is a row of the stream, which the
// generator yields, never a restart.
type scenarioSource struct {
	gen     generators.Source
	start   int64
	trigger int64
	t       int64 // the next trigger (us)
	look    generators.Row
	hasLook bool
	faults  []scenario.Fault
	// limit is spark.maxRowsPerBatch, 0 for none; model moves triggers
	// out of spark.downtime, nil without a spark: block.
	limit int
	model *sparkmodel.Tracker
	// cluster follows each query on the modelled cluster when the spark:
	// block has a cost block: a batch that overruns its trigger moves the
	// next one (clusterModel); nil otherwise.
	cluster []*clusterModel
	// pending is the fault before the next batch; first is set until the
	// first batch: faults before it are dropped.
	pending faultKind
	first   bool
	b       genBatch
}

func newScenarioSource(sc *scenario.Scenario, qs []Query) (*scenarioSource, error) {
	g, err := generators.NewSource(sc.Generator())
	if err != nil {
		return nil, err
	}
	s := &scenarioSource{
		gen: g, start: sc.Start.UnixMicro(), trigger: sc.Trigger.Micros(),
		faults: restartFaults(sc.Faults),
		first:  true,
	}
	if sc.Spark != nil {
		s.limit = int(sc.Spark.MaxRowsPerBatch)
		s.model = sparkmodel.NewTracker(*sc.Spark, nil, s.start, s.trigger, s.start, sc.End().UnixMicro())
		if s.cluster, err = newClusterModels(sc, qs); err != nil {
			return nil, err
		}
	}
	s.b.IDs = sc.Workload.IDs.Kind()
	s.t = s.start + s.trigger
	s.hasLook = g.Next(&s.look)
	return s, nil
}

// restartFaults returns the faults that restart the query, in time order.
func restartFaults(faults []scenario.Fault) []scenario.Fault {
	out := slices.DeleteFunc(slices.Clone(faults), func(f scenario.Fault) bool { return !f.IsRestart() })
	slices.SortStableFunc(out, func(a, b scenario.Fault) int { return cmp.Compare(a.At, b.At) })
	return out
}

// nextTrigger returns the trigger after one at t that ran no batch or a
// batch that took no time: the next of the lattice, moved out of
// spark.downtime.
func (s *scenarioSource) nextTrigger(t int64) int64 {
	if s.model == nil {
		return t + s.trigger
	}
	return s.model.NextTrigger(t, t)
}

func (s *scenarioSource) next() (batch, faultKind, int64, bool, error) {
	if !s.hasLook {
		closeModels(s.cluster)
		if err := generators.SourceErr(s.gen); err != nil {
			return nil, noFault, 0, false, err
		}
		return nil, noFault, 0, false, nil
	}
	if len(s.cluster) > 0 {
		return s.nextOnCluster()
	}
	for s.fire(); s.look.Arrival > s.t; s.fire() {
		// Skip the triggers without rows, as the runner does: to the
		// one before the next arrival or fault, then on.
		next := s.look.Arrival
		if len(s.faults) > 0 {
			next = min(next, s.start+s.faults[0].At.Micros())
		}
		if skip := (next - s.t) / s.trigger; skip > 1 {
			s.t += (skip - 1) * s.trigger
		}
		s.t = s.nextTrigger(s.t)
	}
	f := s.fill()
	t := s.t
	s.t = s.nextTrigger(t)
	return &s.b, f, t / 1000, true, nil
}

// nextOnCluster is next with a cost block: each query's model says when
// its next data batch runs; they must agree, since the queries share the
// batch files.
func (s *scenarioSource) nextOnCluster() (batch, faultKind, int64, bool, error) {
	for _, m := range s.cluster {
		if err := m.advance(s.look.Arrival, s.trigger); err != nil {
			return nil, noFault, 0, false, err
		}
	}
	for _, m := range s.cluster[1:] {
		if m.t != s.cluster[0].t {
			return nil, noFault, 0, false, divergence(s.cluster[0], m)
		}
	}
	s.t = s.cluster[0].t
	s.fire()
	f := s.fill()
	for _, m := range s.cluster {
		if err := m.batch(&s.b.Batch); err != nil {
			return nil, noFault, 0, false, err
		}
	}
	return &s.b, f, s.t / 1000, true, nil
}

// fill forms the batch at trigger s.t (at most limit rows, the oldest)
// and returns the fault before it.
func (s *scenarioSource) fill() faultKind {
	s.b.Rows = s.b.Rows[:0]
	for s.hasLook && s.look.Arrival <= s.t && (s.limit == 0 || len(s.b.Rows) < s.limit) {
		s.b.Rows = append(s.b.Rows, s.look)
		s.hasLook = s.gen.Next(&s.look)
	}
	f := s.pending
	if s.first {
		f = noFault // a restart before the first batch restarts nothing
	}
	s.first, s.pending = false, noFault
	return f
}

// fire takes the faults due at the next trigger into the pending fault:
// the one before the next batch.
func (s *scenarioSource) fire() {
	for len(s.faults) > 0 && s.start+s.faults[0].At.Micros() <= s.t {
		s.pending = max(s.pending, kindOf(s.faults[0].Kind))
		s.faults = s.faults[1:]
	}
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
		if h, err := registry.HarnessOf(j.Engine); err != nil || !h.Exports {
			return nil, fmt.Errorf("query %s: a %s query cannot be exported as a PySpark job: export a scenario of Spark queries", j.FileName, j.Engine)
		}
		apply, verbatim := pythonChain(j.Query, j.Plan.Chain)
		out[i] = Query{Name: j.FileName, Text: j.Query, Apply: apply, Verbatim: verbatim, Plan: j.Plan}
		if n, ok := twsNode(&out[i]); ok {
			out[i].Apply, out[i].Verbatim = twsApply(n), false
		}
	}
	return out, nil
}

// scenarioProvider returns the state store provider class and the shuffle
// partitions (0: Spark's default) Spark runs sc's queries with: the spark:
// block's provider and partitions; without one, RocksDB for the store
// pebble and Spark's default, the HDFS-backed store, for memory.
func scenarioProvider(sc *scenario.Scenario) (string, int64) {
	if sc.Spark != nil {
		if sc.Spark.Provider == sparkmodel.RocksDB {
			return rocksDBProvider, sc.Spark.Partitions
		}
		return hdfsProvider, sc.Spark.Partitions
	}
	if sc.Store == "pebble" {
		return rocksDBProvider, 0
	}
	return hdfsProvider, 0
}
