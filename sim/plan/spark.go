package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// SparkOptions configure the Spark part of a plan (Spark).
type SparkOptions struct {
	// Config is the cluster: the scenario's spark: block with the
	// caller's overrides, defaults filled in. A nil Cost takes the
	// provider's default costs (DefaultCosts is then true in the result).
	Config sparkmodel.Config
	// Rate is the rate of originals to plan for (per second, at the
	// scenario's peak); 0 plans for the scenario's own.
	Rate float64
	// Workers is the number of simulations run at once [GOMAXPROCS].
	Workers int
	// ExecutorMemory is the memory each executor's state may use, in
	// bytes: the largest sustainable rate is the largest whose state
	// fits in it. 0 takes sparkmodel.DefaultExecutorMemory, Spark's
	// spark.executor.memory default. ExecutorMemorySource says where it
	// came from, in words ("--executor-memory"); "" says the default.
	ExecutorMemory       int64
	ExecutorMemorySource string
	// Base is the runner's options the cluster's runs start from (Workers
	// is set from Workers): what a caller's tests set in it through
	// sim/runner/runnertest (a lower limit on a batch's rows) reaches
	// every run; the zero value in production.
	Base runner.Options
}

// The bounds of the search for the largest sustainable rate
// (SparkResult.RateBound).
const (
	// BoundCluster: the query falls behind above the rate.
	BoundCluster = "cluster"
	// BoundMemory: the state does not fit in the executor memory above
	// the rate.
	BoundMemory = "memory"
	// BoundBatchLimit: above the rate a batch reached dedupsim's limit
	// on its rows (scenario.MaxRowsPerBatch), which the search reads as
	// falling behind: the query's backlog grows without bound.
	BoundBatchLimit = "batch-limit"
	// BoundCostLimit: the query kept up at every rate tried, up to the
	// rate at which a per-row or per-key cost, multiplied by it, would
	// pass dedupsim's bound on a cost (sparkmodel.MaxCost).
	BoundCostLimit = "cost-limit"
	// BoundSearch: the query kept up at every rate tried, up to
	// 2^MaxRateDoublings times the planned rate.
	BoundSearch = "search-limit"
)

// MaxRateDoublings bounds the search for a rate that falls behind: 2^20
// times the planned rate. A query that keeps up above it is reported as
// keeping up at that bound (MaxSustainableRateBounded).
const MaxRateDoublings = 20

// rateResolution is the relative width at which the bisection on the
// rate stops: the largest rate found to keep up is within 1% of the
// boundary.
const rateResolution = 0.01

// SparkResult is a plan in a Spark cluster's terms, at the plan's delay
// and rate.
type SparkResult struct {
	// Config is the cluster and the costs used, every default filled in.
	Config sparkmodel.Config
	// DefaultCosts is true when no cost block was given: the durations
	// use the provider's default costs, estimates until calibrated.
	DefaultCosts bool
	// Delay is the delay the cluster was simulated at (HasDelay false
	// for a query without one); Trigger the scenario's trigger.
	Delay    time.Duration
	HasDelay bool
	Trigger  time.Duration
	// Rate is the rate of originals planned for, and simulated at.
	Rate float64
	// ExecutorPeakMemoryBytes and ExecutorPeakDiskBytes are the largest
	// executor's state memory and disk at Rate (see Spark).
	ExecutorPeakMemoryBytes int64
	ExecutorPeakDiskBytes   int64
	// BatchP50Ms, BatchP99Ms and BatchMaxMs are percentiles of the batch
	// durations at Rate.
	BatchP50Ms, BatchP99Ms, BatchMaxMs float64
	// KeepsUp is false when the query falls behind at Rate: a run of
	// overrunning batches lasts to the end of the traffic window, which
	// began at FallingBehindSinceSeconds.
	KeepsUp                   bool
	FallingBehindSinceSeconds *float64
	// MaxSustainableRate is the largest rate of originals found to keep
	// up, within 1% of where it stops; 0 when the query falls behind at
	// any rate (the batch overhead and commits alone overrun the
	// trigger). MaxSustainableRateBounded is true when it kept up at
	// every rate tried, up to 2^MaxRateDoublings times Rate.
	MaxSustainableRate        float64
	MaxSustainableRateBounded bool
	// FallsBehindAbove is the smallest rate found to fall behind (0 with
	// MaxSustainableRateBounded).
	FallsBehindAbove float64
	// Simulations counts the simulations the rate search ran.
	Simulations int
	// ExecutorMemoryBytes is the memory each executor's state may use;
	// ExecutorMemorySource says where it came from.
	ExecutorMemoryBytes  int64
	ExecutorMemorySource string
	// FitsMemory is true when ExecutorPeakMemoryBytes fits in it.
	FitsMemory bool
	// BatchLimited is true when a batch at Rate reached dedupsim's limit
	// on its rows: the query falls behind there, and the memory, disk and
	// batch durations at Rate are not measured (0).
	BatchLimited bool
	// MemoryAtMaxRateBytes is the largest executor's state memory at
	// MaxSustainableRate (simulated with every key count multiplied by
	// its ratio to Rate).
	MemoryAtMaxRateBytes int64
	// RateBound says what stopped the search above MaxSustainableRate:
	// BoundCluster, BoundMemory, BoundBatchLimit, BoundCostLimit or
	// BoundSearch.
	RateBound string
	// LimitedRuns counts the search's simulations in which a batch met
	// dedupsim's limit on its rows (read as falling behind).
	LimitedRuns int
}

// sparkRun is one simulation of the cluster at a rate scale.
type sparkRun struct {
	keepsUp      bool
	since        *float64
	p50, p99, mx float64
	mem, disk    int64
	// limited: a batch reached the runner's row limit (ErrBatchLimit);
	// the query fell behind, and nothing else was measured.
	limited bool
}

// Spark sizes the cluster for the query of a plan at the plan's delay
// (res.Point: the recommended delay, else the delay it reports) and at
// opts.Rate.
//
// The cluster at opts.Rate is simulated at that rate: the scenario's
// rates are multiplied to it (AtRate), so memory, disk and batch
// durations there are measured, not scaled (RocksDB's native memory, its
// block cache capped per instance and its memtables per instance, does
// not grow linearly with the rate).
//
// For the largest sustainable rate, batch durations at a rate k times
// the planned one are simulated at the planned rate with the per-row and per-key costs (rowNs,
// newKeyNs, scanKeyNs, removeKeyNs) multiplied by k: every count a batch
// is charged for (its rows, the keys it stores, the keys of the store it
// scans, the keys it evicts) is k times as large at k times the rate,
// while the batch overhead and the commits do not depend on the rate, so
// each batch lasts as long, and the batches form and overrun as they
// would. It holds in expectation: at a higher rate a partition's share
// of the keys varies less, so the simulated makespan of skewed tasks is
// slightly pessimistic.
//
// MaxSustainableRate is found by bisection on k: from the planned rate,
// doubling (or halving) until the query changes from keeping up to
// falling behind, then halving the bracket until its ends are within 1%.
// It assumes that a query that falls behind at a rate falls behind at
// every higher rate. A query keeps up when no run of overrunning batches
// lasts to the end of the scenario's traffic window: a query that would
// fall behind only after it is not seen (a longer scenario is).
func Spark(ctx context.Context, sc *scenario.Scenario, res *Result, opts SparkOptions) (*SparkResult, error) {
	var q *scenario.Query
	for i := range sc.Queries {
		if sc.Queries[i].Name == res.Query {
			q = &sc.Queries[i]
		}
	}
	if q == nil {
		return nil, fmt.Errorf("spark: no query %q in %s", res.Query, sc.File)
	}
	cfg := opts.Config
	out := &SparkResult{Delay: res.Point.Delay, HasDelay: res.Point.HasDelay, Trigger: sc.Trigger.Std()}
	if cfg.Cost == nil {
		out.DefaultCosts = true
		cfg.Cost = &sparkmodel.Cost{}
	} else {
		c := *cfg.Cost
		cfg.Cost = &c
	}
	cfg.FillDefaults()
	if probs := cfg.Check(); len(probs) > 0 {
		return nil, fmt.Errorf("spark.%s: %s", probs[0].Path, probs[0].Msg)
	}
	out.Config = cfg
	if opts.Rate > 0 {
		var err error
		if sc, err = AtRate(sc, opts.Rate); err != nil {
			return nil, err
		}
	}
	base := PeakRate(sc)
	out.Rate = base
	costs, _ := cfg.Costs()
	run := func(k float64) (sparkRun, error) {
		out.Simulations++
		s := *sc
		c := cfg
		scaled := sparkmodel.Cost{
			BatchOverheadMs: ptr(costs.BatchOverheadMs), RowNs: ptr(costs.RowNs * k), NewKeyNs: ptr(costs.NewKeyNs * k),
			ScanKeyNs: ptr(costs.ScanKeyNs * k), RemoveKeyNs: ptr(costs.RemoveKeyNs * k), PartitionCommitMs: ptr(costs.PartitionCommitMs),
		}
		c.Cost = &scaled
		c.CountScale = k
		s.Spark = &c
		s.Queries = []scenario.Query{*q}
		s.Sweep = nil
		if out.HasDelay {
			s.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(out.Delay)}}
		}
		ro := opts.Base
		ro.Workers = opts.Workers
		r, err := runner.Run(ctx, &s, ro)
		if errors.Is(err, runner.ErrBatchLimit) && ctx.Err() == nil {
			out.LimitedRuns++
			return sparkRun{limited: true}, nil
		}
		if err != nil {
			return sparkRun{}, fmt.Errorf("simulating %s on the cluster at %s/s: %w", q.Name, formatRate(base*k), err)
		}
		if err := r.Close(); err != nil {
			return sparkRun{}, err
		}
		if len(r.Summary.Queries) != 1 || r.Summary.Queries[0].SparkSummary == nil {
			return sparkRun{}, fmt.Errorf("simulating %s on the cluster: no spark summary", q.Name)
		}
		ss := r.Summary.Queries[0].SparkSummary
		sr := sparkRun{keepsUp: ss.FallingBehindSinceSeconds == nil, since: ss.FallingBehindSinceSeconds,
			mem: ss.ExecutorPeakMemoryBytes, disk: ss.ExecutorPeakDiskBytes}
		if d := ss.BatchDurationMs; d != nil {
			sr.p50, sr.p99, sr.mx = d.P50, d.P99, d.Max
		}
		return sr, nil
	}
	out.ExecutorMemoryBytes, out.ExecutorMemorySource = opts.ExecutorMemory, opts.ExecutorMemorySource
	if out.ExecutorMemoryBytes <= 0 {
		out.ExecutorMemoryBytes, out.ExecutorMemorySource = sparkmodel.DefaultExecutorMemory, ""
	}
	if out.ExecutorMemorySource == "" {
		out.ExecutorMemorySource = "Spark's default spark.executor.memory"
	}
	// ok is the search's test: the query keeps up at the rate and its
	// state fits. why names the bound of a rate where it does not.
	ok := func(r sparkRun) bool { return r.keepsUp && r.mem <= out.ExecutorMemoryBytes }
	why := func(r sparkRun) string {
		switch {
		case r.limited:
			return BoundBatchLimit
		case !r.keepsUp:
			return BoundCluster
		}
		return BoundMemory
	}
	at, err := run(1)
	if err != nil {
		return nil, err
	}
	out.ExecutorPeakMemoryBytes, out.ExecutorPeakDiskBytes = at.mem, at.disk
	out.BatchP50Ms, out.BatchP99Ms, out.BatchMaxMs = at.p50, at.p99, at.mx
	out.KeepsUp, out.FallingBehindSinceSeconds = at.keepsUp, at.since
	out.BatchLimited = at.limited
	out.FitsMemory = !at.limited && at.mem <= out.ExecutorMemoryBytes

	// The per-row and per-key costs are multiplied by k: past kMax one
	// would pass sparkmodel.MaxCost, which the runner refuses.
	kMax := math.Ldexp(1, MaxRateDoublings)
	for t := range sparkmodel.NumTerms {
		term := sparkmodel.Term(t)
		if term == sparkmodel.BatchOverhead || term == sparkmodel.PartitionCommit {
			continue
		}
		if c := costs.Get(term); c > 0 {
			// A hair below the bound, so that c × k never rounds above it.
			kMax = math.Min(kMax, sparkmodel.MaxCost(term)/c*(1-1e-9))
		}
	}

	// Bracket the boundary: lo passes ok, hi does not (0: none yet).
	lo, hi := 0.0, 0.0
	var loRun, hiRun sparkRun
	if ok(at) {
		lo, loRun = 1, at
		for hi == 0 {
			k := math.Min(lo*2, kMax)
			if k <= lo {
				break
			}
			r, err := run(k)
			if err != nil {
				return nil, err
			}
			if ok(r) {
				lo, loRun = k, r
			} else {
				hi, hiRun = k, r
			}
		}
	} else {
		hi, hiRun = 1, at
		for i := 0; i < MaxRateDoublings && lo == 0; i++ {
			k := hi / 2
			r, err := run(k)
			if err != nil {
				return nil, err
			}
			if ok(r) {
				lo, loRun = k, r
			} else {
				hi, hiRun = k, r
			}
		}
	}
	switch {
	case hi == 0:
		out.MaxSustainableRate, out.MaxSustainableRateBounded = lo*base, true
		out.MemoryAtMaxRateBytes = loRun.mem
		out.RateBound = BoundSearch
		if kMax < math.Ldexp(1, MaxRateDoublings) {
			out.RateBound = BoundCostLimit
		}
		return out, nil
	case lo == 0:
		// Fails at 2^-20 of the rate: the fixed costs alone overrun.
		out.FallsBehindAbove = 0
		out.RateBound = why(hiRun)
		return out, nil
	}
	for hi-lo > rateResolution*lo {
		k := (lo + hi) / 2
		r, err := run(k)
		if err != nil {
			return nil, err
		}
		if ok(r) {
			lo, loRun = k, r
		} else {
			hi, hiRun = k, r
		}
	}
	out.MaxSustainableRate, out.FallsBehindAbove = lo*base, hi*base
	out.MemoryAtMaxRateBytes = loRun.mem
	out.RateBound = why(hiRun)
	return out, nil
}

func ptr(v float64) *float64 { return &v }

// formatRate renders a rate per second with thousands separators, at
// most three significant digits above 1,000 ("46,300").
func formatRate(r float64) string {
	if r >= 1000 {
		p := math.Pow(10, math.Floor(math.Log10(r))-2)
		r = math.Floor(r/p) * p
	}
	s := fmt.Sprintf("%.0f", r)
	if r < 10 {
		s = fmt.Sprintf("%.3g", r)
	}
	for i := len(s) - 3; i > 0 && s[i-1] >= '0' && s[i-1] <= '9'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
