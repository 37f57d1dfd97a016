package plan

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/reports"
	"github.com/dedupsim/dedupsim/sim/chain"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// ModelWorkload converts a scenario's workload into the closed-form
// model's input: its rate profile, trigger, heartbeats, and the
// arrival-delay, retry-copies and retry-gap distributions as gonum distuv
// distributions (constant and empirical ones as step functions).
func ModelWorkload(sc *scenario.Scenario) reports.ModelWorkload {
	w := &sc.Workload
	mw := reports.ModelWorkload{
		DurationSeconds:  sc.Duration.Std().Seconds(),
		TriggerSeconds:   sc.Trigger.Std().Seconds(),
		HeartbeatSeconds: w.Heartbeat.Std().Seconds(),
		ArrivalDelay:     timeDist(w.ArrivalDelay),
		RetryProbability: w.Retries.Probability,
		ExtraCopies:      countPMF(w.Retries.Copies),
		RetryGap:         timeDist(w.Retries.Delay),
	}
	for _, s := range w.Segments() {
		mw.Segments = append(mw.Segments, reports.ModelSegment{Seconds: s.For.Std().Seconds(), Rate: float64(s.Rate)})
	}
	switch w.Retries.Timestamp {
	case scenario.Restamp:
		mw.CopyTimestamp = reports.Restamped
	case scenario.JitterTimestamp:
		mw.CopyTimestamp = reports.Jittered
	default:
		mw.CopyTimestamp = reports.SameTimestamp
	}
	return mw
}

// PeakRate returns the scenario's rate of originals: its rate, or the
// largest rate of its profile.
func PeakRate(sc *scenario.Scenario) float64 {
	var r float64
	for _, s := range sc.Workload.Segments() {
		r = max(r, float64(s.Rate))
	}
	return r
}

// timeDist returns d (seconds) as a model distribution; nil for constant 0.
func timeDist(d scenario.Dist) reports.Distribution {
	switch d.Kind {
	case scenario.Uniform:
		return distuv.Uniform{Min: d.Min, Max: d.Max}
	case scenario.Exponential:
		return distuv.Exponential{Rate: 1 / d.Mean}
	case scenario.LogNormal:
		mu, sigma := d.LogNormalParams()
		return distuv.LogNormal{Mu: mu, Sigma: sigma}
	case scenario.Pareto:
		return distuv.Pareto{Xm: d.Min, Alpha: d.Alpha}
	case scenario.Empirical:
		s := slices.Clone(d.Samples)
		sort.Float64s(s)
		return empirical(s)
	case scenario.Constant:
		if d.Value != 0 {
			return constant(d.Value)
		}
	}
	return nil
}

// constant is a point mass.
type constant float64

func (c constant) CDF(x float64) float64 {
	if x >= float64(c) {
		return 1
	}
	return 0
}

func (c constant) Quantile(float64) float64 { return float64(c) }

// empirical is the distribution of sorted observed samples, each equally
// likely, as the generators draw it.
type empirical []float64

func (e empirical) CDF(x float64) float64 {
	return float64(sort.Search(len(e), func(i int) bool { return e[i] > x })) / float64(len(e))
}

func (e empirical) Quantile(p float64) float64 {
	i := int(math.Ceil(p*float64(len(e)))) - 1
	return e[min(max(i, 0), len(e)-1)]
}

// countPMF returns P(K = k) for k = 1, 2, ... of the extra-copies count
// distribution, as the generators draw it: a geometric on {1, 2, ...}, a
// uniform whole number in [round(min), round(max)], any other family
// rounded to the nearest whole number; at least 1. The tail beyond a
// cumulative 1 - 1e-9 (or 4096 copies) is dropped.
func countPMF(d scenario.Dist) []float64 {
	const maxK, eps = 4096, 1e-9
	var out []float64
	add := func(k int, p float64) {
		k = max(k, 1)
		if k > maxK {
			k = maxK
		}
		for len(out) < k {
			out = append(out, 0)
		}
		out[k-1] += p
	}
	switch d.Kind {
	case scenario.Geometric:
		if d.Mean <= 1 {
			return []float64{1}
		}
		q := 1 - 1/d.Mean
		left := 1.0
		for k := 1; k <= maxK && left > eps; k++ {
			p := (1 - q) * math.Pow(q, float64(k-1))
			add(k, p)
			left -= p
		}
	case scenario.Uniform:
		lo, hi := int(math.Round(d.Min)), int(math.Round(d.Max))
		for k := lo; k <= hi; k++ {
			add(k, 1/float64(hi-lo+1))
		}
	case scenario.Empirical:
		for _, v := range d.Samples {
			add(int(math.Round(v)), 1/float64(len(d.Samples)))
		}
	case scenario.Exponential, scenario.LogNormal, scenario.Pareto:
		f := timeDist(d)
		prev := 0.0
		for k := 1; k <= maxK && prev < 1-eps; k++ {
			c := f.CDF(float64(k) + 0.5)
			add(k, c-prev)
			prev = c
		}
	default:
		add(int(math.Round(d.Value)), 1)
	}
	return out
}

// queryInfo is what the planner knows of a query from its plan.
type queryInfo struct {
	plan chain.Plan
	// dedup is the query's dedup node; ok is false unless it has exactly
	// one (the model covers one dedup operator).
	dedup chain.Node
	ok    bool
	shape reports.QueryShape
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
	p, err := chain.PlanFor(c, generators.Schema())
	if err != nil {
		return queryInfo{}, err
	}
	info := queryInfo{plan: p}
	ids := generators.UUIDIDs
	if sc.Workload.IDs == scenario.Ints {
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
		info.shape = reports.WithinWatermark
	case d.Evicts():
		info.shape = reports.PairKeyed
	default:
		info.shape = reports.NeverEvicts
	}
	r := &sc.Workload.Retries
	var why []string
	for _, name := range d.KeyNames {
		switch name {
		case "event_id":
			info.idKey = true
		case "event_time":
			switch r.Timestamp {
			case scenario.Restamp:
				why = append(why, "every copy is re-stamped (10:00:00 vs 10:00:01), so its event_time, a key, differs from the original's")
			case scenario.JitterTimestamp:
				why = append(why, "every copy's timestamp is jittered, so its event_time, a key, differs from the original's")
			}
		case "attempt":
			if r.Varies(scenario.MetaAttempt) {
				why = append(why, "attempt, a key, differs between copies")
			}
		case "ingest_time":
			if r.Varies(scenario.MetaIngestTime) {
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
func (info queryInfo) modelQuery(delay float64) reports.ModelQuery {
	return reports.ModelQuery{
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
func (info queryInfo) estimate(mw reports.ModelWorkload, delay float64) (reports.ModelEstimate, bool, error) {
	if !info.modelled() {
		return reports.ModelEstimate{}, false, nil
	}
	est, err := reports.EstimateModel(mw, info.modelQuery(delay))
	if err != nil {
		return est, false, fmt.Errorf("closed-form model: %w", err)
	}
	return est, true, nil
}
