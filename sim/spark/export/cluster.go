package export

import (
	"errors"
	"fmt"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// clusterModel follows one query of a scenario whose spark: block has a
// cost block, as `simulate run` does, to know when its triggers fire: a
// batch lasts its modelled duration, and the next trigger fires at the
// next boundary of the trigger lattice or when the batch ended, if later;
// at a trigger without rows a no-data batch runs (and lasts) when the
// scenario enables them and the query needs one. It runs the query on
// memory stores split over the block's partitions, for the partition
// statistics the cost model reads.
type clusterModel struct {
	name    string
	plan    chain.Plan
	parts   int
	noData  bool
	tracker *sparkmodel.Tracker
	q       *microbatch.Query
	// stores are the query's stores, by operator and partition, which a
	// restart keeps.
	stores [][]engines.Store
	stats  []*microbatch.PartitionStats
	// start is the scenario's start (µs).
	start int64
	// t is the query's next trigger (µs); faults its faults not fired.
	t      int64
	faults []scenario.Fault
}

// newClusterModels returns a cluster model per query of sc (qs, as
// scenarioQueries lists them), or nil when sc's spark: block has no cost
// block: then every batch takes no time and the triggers are the
// lattice's.
func newClusterModels(sc *scenario.Scenario, qs []Query) ([]*clusterModel, error) {
	if _, ok := sc.Spark.Costs(); !ok {
		return nil, nil
	}
	start, ids := sc.Start.UnixMicro(), sc.Workload.IDs.Kind()
	var out []*clusterModel
	for _, q := range qs {
		var shapes []sparkmodel.Shape
		for _, n := range q.Plan.Nodes {
			if n.IsDedup() {
				shapes = append(shapes, sparkmodel.ShapeOf(n.KeyColumns, ids))
			}
		}
		m := &clusterModel{
			name: q.Name, plan: q.Plan, parts: int(sc.Spark.Partitions), noData: sc.NoDataMicroBatches,
			tracker: sparkmodel.NewTracker(*sc.Spark, shapes, start, sc.Trigger.Micros(), start, sc.End().UnixMicro()),
			t:       start + sc.Trigger.Micros(), faults: restartFaults(sc.Faults), start: start,
		}
		if err := m.open(true); err != nil {
			m.close()
			closeModels(out)
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// open opens the model's query: afresh (a new checkpoint, empty stores)
// or, after a restart, on the same stores from the state it committed,
// as a query restarted from its own checkpoint (Spark's lastExecution
// empty until a batch runs).
func (m *clusterModel) open(fresh bool) error {
	state := microbatch.State{}
	if fresh {
		m.close()
		m.stores = nil
	} else {
		state = m.q.State()
		state.Restarted = state.NextBatchID > 0
	}
	mem, err := stores.Lookup(stores.Memory, "")
	if err != nil {
		return err
	}
	open := func(op, part int, _ chain.Node) (engines.Store, error) {
		for len(m.stores) <= op {
			m.stores = append(m.stores, nil)
		}
		if part < len(m.stores[op]) {
			return m.stores[op][part], nil
		}
		s, err := mem.Open("", 0)
		if err == nil {
			m.stores[op] = append(m.stores[op], s)
		}
		return s, err
	}
	if m.q, err = microbatch.NewPartitionedQuery(m.plan, m.parts, open, state); err != nil {
		return fmt.Errorf("query %s: %w", m.name, err)
	}
	m.tracker.Open(m.q.Partitions(), fresh)
	return nil
}

// advance moves the model's clock to the trigger at which its next data
// batch runs, given the next row's arrival: it fires the faults due at
// each trigger it visits, runs the no-data batches the runner would, and
// skips idle triggers as the runner does.
func (m *clusterModel) advance(arrival int64, trigger int64) error {
	for {
		for len(m.faults) > 0 && m.start+m.faults[0].At.Micros() <= m.t {
			if err := m.open(m.faults[0].Kind == scenario.LoseCheckpoint); err != nil {
				return err
			}
			m.faults = m.faults[1:]
		}
		if arrival <= m.t {
			return nil
		}
		if m.noData && m.q.NeedsNoDataBatch() {
			p, err := m.q.RunNoDataBatch(microbatch.BatchMeta{TimestampMs: m.t / 1000})
			if err != nil {
				return m.failed(err)
			}
			m.t = m.model(p, nil, m.t)
			continue
		}
		next := arrival
		if len(m.faults) > 0 {
			next = min(next, m.start+m.faults[0].At.Micros())
		}
		if skip := (next - m.t) / trigger; skip > 1 {
			m.t += (skip - 1) * trigger
		}
		m.t = m.tracker.NextTrigger(m.t, m.t)
	}
}

// batch runs the data batch b at the model's trigger and moves its clock
// to the next trigger.
func (m *clusterModel) batch(b *generators.Batch) error {
	p, err := m.q.RunBatch(b, microbatch.BatchMeta{TimestampMs: m.t / 1000})
	if err != nil {
		return m.failed(err)
	}
	m.t = m.model(p, b, m.t)
	return nil
}

// failed returns the error of a batch that failed: a query Spark fails
// is not exportable, as the prediction says too.
func (m *clusterModel) failed(err error) error {
	var qf *microbatch.QueryFailure
	if errors.As(err, &qf) {
		return fmt.Errorf("not exportable: query %s: %w", m.name, err)
	}
	return fmt.Errorf("query %s: %w", m.name, err)
}

// model models the batch that ran at t and returns the next trigger.
func (m *clusterModel) model(p *microbatch.Progress, b *generators.Batch, t int64) int64 {
	m.stats = m.stats[:0]
	for k := range p.Operators {
		m.stats = append(m.stats, m.q.PartitionStats(k))
	}
	in := sparkmodel.Batch{Start: t, Version: p.BatchID, Stats: m.stats}
	if b != nil && p.NumInputRows > 0 {
		in.Oldest, in.HasRows = b.Rows[0].Arrival, true
	}
	return m.tracker.NextTrigger(t, m.tracker.Batch(in).End)
}

func (m *clusterModel) close() {
	if m.q != nil {
		m.q.Close()
		m.q = nil
	}
}

func closeModels(ms []*clusterModel) {
	for _, m := range ms {
		m.close()
	}
}

// divergence returns the error of an export whose queries' next data
// batches are at different triggers (a ran at ta, b at tb): their batch
// files would differ.
func divergence(a, b *clusterModel) error {
	return &refusal{fmt.Sprintf("not exportable: queries %s and %s form different batches on the modelled cluster (their next batches start at %s and %s, as their batches' modelled durations differ), and an export has one set of batch files: export a scenario with one of them",
		a.name, b.name, micros(a.t), micros(b.t))}
}

// micros renders t (µs since the epoch) in UTC to the microsecond.
func micros(t int64) string {
	return time.UnixMicro(t).UTC().Format("2006-01-02T15:04:05.000000Z")
}
