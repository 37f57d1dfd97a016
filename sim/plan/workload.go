package plan

import (
	"fmt"
	"strings"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// WorkloadOf converts a scenario's workload into the closed-form
// model's input: its rate profile, trigger, heartbeats, and the
// arrival-delay, retry-copies and retry-gap distributions as gonum distuv
// distributions (constant and empirical ones as step functions).
func WorkloadOf(sc *scenario.Scenario) ModelWorkload {
	w := &sc.Workload
	mw := ModelWorkload{
		DurationSeconds:  sc.Duration.Std().Seconds(),
		TriggerSeconds:   sc.Trigger.Std().Seconds(),
		HeartbeatSeconds: w.Heartbeat.Std().Seconds(),
		ArrivalDelay:     timeDist(w.ArrivalDelay),
		RetryProbability: w.Retries.Probability,
		ExtraCopies:      countPMF(w.Retries.Copies),
		RetryGap:         timeDist(w.Retries.Delay),
	}
	for _, s := range w.Segments() {
		mw.Segments = append(mw.Segments, ModelSegment{Seconds: s.For.Std().Seconds(), Rate: float64(s.Rate)})
	}
	switch w.Retries.Timestamp {
	case generators.Restamp:
		mw.CopyTimestamp = Restamped
	case generators.JitterTimestamp:
		mw.CopyTimestamp = Jittered
	default:
		mw.CopyTimestamp = SameTimestamp
	}
	return mw
}

// PeakRate returns the scenario's rate of originals: its rate, or the
// largest rate of its profile.
//
// With an event log, it is the log's mean rate of events (distinct ids)
// over the duration.
func PeakRate(sc *scenario.Scenario) float64 {
	if e := sc.Workload.Events; e != nil && e.Index != nil {
		if d := sc.Duration.Std().Seconds(); d > 0 {
			return float64(e.Index.Events) / d
		}
		return float64(e.Index.Events)
	}
	return sc.Workload.PeakRate()
}

// timeDist returns s (seconds) as a model distribution; nil for constant 0.
func timeDist(s randvar.Spec) Distribution {
	if s.Kind == "" || s.Kind == randvar.KindConstant && s.Value == 0 {
		return nil
	}
	d, err := randvar.New(s)
	if err != nil {
		return nil
	}
	return d
}

// countPMF returns P(K = k) for k = 1, 2, ... of the extra-copies count
// distribution, as the generators draw it (randvar.CountPMF), the tail
// beyond a cumulative 1 - 1e-9 (or 4096 copies) dropped.
func countPMF(s randvar.Spec) []float64 {
	d, err := randvar.New(s)
	if err != nil {
		d = randvar.Constant(0)
	}
	return randvar.CountPMF(d, 4096, 1e-9)
}

// queryInfo is what the planner knows of a query from its plan.
type queryInfo struct {
	plan chain.Plan
	// dedup is the query's dedup node; ok is false unless it has exactly
	// one (the model covers one dedup operator).
	dedup chain.Node
	ok    bool
	shape QueryShape
	// newKeys is true when a key column differs between copies of an
	// event, and newKeysWhy says which and why.
	newKeys    bool
	newKeysWhy string
	// idKey is true when event_id is among the keys.
	idKey         bool
	bytesPerEntry int64
	// delayMatters is true when a watermark reaches a dedup, so that the
	// delay changes what the query drops or keeps.
	delayMatters bool
}

// classify plans q's chain against the generated schema and classifies it.
func classify(sc *scenario.Scenario, query string) (queryInfo, error) {
	c, err := chain.Parse(query)
	if err != nil {
		return queryInfo{}, err
	}
	p, err := chain.PlanFor(c, scenario.Schema())
	if err != nil {
		return queryInfo{}, err
	}
	info := queryInfo{plan: p}
	ids := generators.UUIDIDs
	if sc.Workload.IDs == generators.Ints {
		ids = generators.IntIDs
	}
	var n int
	for _, node := range p.Nodes {
		if !node.IsDedup() {
			continue
		}
		n++
		info.dedup = node
		info.bytesPerEntry += metrics.EntryBytes(node.KeyColumns, ids)
		if node.WatermarkReaches {
			info.delayMatters = true
		}
	}
	info.ok = n == 1
	if !info.ok {
		return info, nil
	}
	d := info.dedup
	switch {
	case d.Op.Kind == chain.DropDuplicatesWithinWatermark:
		info.shape = WithinWatermark
	case d.Evicts():
		info.shape = PairKeyed
	default:
		info.shape = NeverEvicts
	}
	r := &sc.Workload.Retries
	var why []string
	for _, name := range d.KeyNames {
		switch name {
		case "event_id":
			info.idKey = true
		case "event_time":
			switch r.Timestamp {
			case generators.Restamp:
				why = append(why, "every copy is re-stamped (10:00:00 vs 10:00:01), so its event_time, a key, differs from the original's")
			case generators.JitterTimestamp:
				why = append(why, "every copy's timestamp is jittered, so its event_time, a key, differs from the original's")
			}
		case "attempt":
			if r.Varies(generators.MetaAttempt) {
				why = append(why, "attempt, a key, differs between copies")
			}
		case "ingest_time":
			if r.Varies(generators.MetaIngestTime) {
				why = append(why, "ingest_time, a key, differs between copies")
			}
		}
	}
	if r.Probability > 0 && len(why) > 0 {
		info.newKeys = true
		info.newKeysWhy = strings.Join(why, "; ")
	}
	return info, nil
}

// modelQuery returns the model's description of the query at delay
// seconds.
func (info queryInfo) modelQuery(delay float64) ModelQuery {
	return ModelQuery{
		Shape:            info.shape,
		DelaySeconds:     delay,
		WatermarkReaches: info.dedup.WatermarkReaches,
		CopiesAreNewKeys: info.newKeys,
		BytesPerEntry:    info.bytesPerEntry,
	}
}

// modelled reports whether the model covers the query: one dedup
// operator whose keys include event_id (keys that tell events apart; a
// coarser key collides, and its state is bounded by the key's cardinality
// instead).
func (info queryInfo) modelled() bool { return info.ok && info.idKey }

// estimate runs the model at delay seconds; ok is false when the query is
// outside the model (see modelled).
func (info queryInfo) estimate(mw ModelWorkload, delay float64) (ModelEstimate, bool, error) {
	if !info.modelled() {
		return ModelEstimate{}, false, nil
	}
	est, err := EstimateModel(mw, info.modelQuery(delay))
	if err != nil {
		return est, false, fmt.Errorf("closed-form model: %w", err)
	}
	return est, true, nil
}
