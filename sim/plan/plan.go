// Package plan is dedupsim's capacity planner: it finds, by simulation,
// the smallest watermark delay at which one query of a scenario meets a
// missed-duplicate and a false-drop target, checks the state that delay
// needs against a memory budget, and sets the closed-form estimate of
// reports (EstimateModel) beside the simulated values.
//
// # Search
//
// The candidates are a fixed grid of delays (1s, 2s, 5s, 10s, 20s, 30s,
// 1m, 2m, 3m, 5m, 7m, 10m, 15m, 20m, 30m, 45m, 1h, ... up to the
// scenario's duration), simulated four at a time in increasing order up
// to the first that meets the targets, starting from the largest delay
// the closed-form model says fails by a wide margin (and walking back down
// if that one already passes, so that the delay below the first passing
// one is always simulated and fails); then the interval between the last
// failing and the first passing delay is split by three evenly spaced
// delays (whole seconds) per round until it is at most max(1s, 1% of the
// passing delay) wide. Like any bisection it assumes the rates fall as the
// delay grows.
//
// The search of each seed is sequential and asks for the simulations of
// given delays; one pool of workers shared by every seed's search runs
// them (pool.go): the delays a search waits for first, and with the
// workers left, the delays its next step may ask for given the results
// known so far (speculation, cancelled once a result rules it out). Each
// simulation is a runner.Run of the scenario restricted to the query with
// a sweep block of up to four of one seed's delays, on one worker, so that
// the delays share one generated stream. The search reads only what it
// asked for, so the recommendation and every byte of the plan do not
// depend on the number of workers.
//
// A production rate other than the scenario's is planned by simulating
// at it: the scenario's rate (or each segment of its profile) is
// multiplied by the production rate over its peak rate (AtRate) and the
// whole search runs on that scenario. Nothing is scaled after the fact:
// the rates the targets bound are not independent of the traffic's rate
// (a bad clock's lead over the watermark, the watermark's own lead from
// the newest of more rows, the copies a share of the seeds rests on all
// change with it), and neither is a store's memory (block caches and
// memtables per instance).
//
// This package runs simulations; the rest of reports only reads results.
package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/curve"
	"github.com/dedupsim/dedupsim/sim/registry"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Targets are what a plan must meet.
type Targets struct {
	// MaxMissedRate bounds missed duplicates / true duplicates.
	MaxMissedRate float64
	// MaxFalseDropRate bounds false drops / logical events.
	MaxFalseDropRate float64
	// MemoryBudget, when above 0, bounds peak state bytes (at the
	// production rate when one is given).
	MemoryBudget int64
	// ProductionRate, when above 0, is the peak rate of originals per
	// second to plan for: the search simulates the scenario at that rate
	// (AtRate).
	ProductionRate float64
}

// DefaultTargets are the targets when none are given: at most 0.1% of
// duplicates missed and 0.01% of events lost.
var DefaultTargets = Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.0001}

// Options configure a search.
type Options struct {
	// Workers is the number of simulations (of a batch of up to four
	// delays each) run at once [GOMAXPROCS]; the seeds' searches share
	// them. The result does not depend on it.
	Workers int
	// Progress, if set, receives the simulated seconds, as runner's.
	Progress runner.Progress
	// Seeds is the number of seeds the plan simulates, each a search of
	// its own: the scenario's seed and the ones after it (seed, seed+1,
	// ...) [1]. The seeds are searched at once, on the shared workers;
	// the result does not depend on Workers.
	Seeds int
	// Quantile is the share of the seeds on which the recommended delay
	// must meet the targets, in (0, 1] [1: every seed]. The recommendation
	// is the smallest delay meeting them on at least that share: the
	// per-seed delays' quantile (nearest rank).
	Quantile float64

	// SimulateEach makes the search simulate every delay it asks for, as
	// before the one-pass curve (sim/curve): slower, the same answer.
	SimulateEach bool
	// CurveState makes the one-pass curve also track the peak state at
	// the grid's delays (Result.Points and Curves show it; about a third
	// of a pass more): for a review's chart and --json.
	CurveState bool

	// simulate replaces runner.Run (tests).
	simulate simulateFunc
	// maxBatch, when above 0, replaces maxBatch (tests, measurements).
	maxBatch int
	// onPool, if set, sees the pool before the searches start (tests).
	onPool func(*pool)
}

// MaxSeeds bounds Options.Seeds.
const MaxSeeds = 100

// The targets a plan can be bound by (Result.Binding).
const (
	BindMissedRate    = "missedRate"
	BindFalseDropRate = "falseDropRate"
	BindMemoryBudget  = "memoryBudget"
)

// SeedResult is one seed's part of a plan.
type SeedResult struct {
	Seed uint64
	// Delay is the smallest delay meeting the targets on this seed; nil
	// when none does (or no delay applies). It does not include the
	// memory budget.
	Delay *time.Duration
	// MissedAlone and FalseDropAlone are the smallest delays meeting the
	// missed-duplicate and the false-drop target each on its own; nil
	// when none does.
	MissedAlone, FalseDropAlone *time.Duration
	// At is the seed's simulation at the recommended delay, or at its own
	// reported point when there is no recommendation.
	At Point
	// Simulated is the number of delays simulated for this seed (with
	// the curve, the direct runs that confirm it).
	Simulated int
	// FromCurve is set when the seed's search read the exact one-pass
	// curve (sim/curve) rather than a simulation per delay.
	FromCurve bool
}

// MinMedMax is the spread of a value over the seeds.
type MinMedMax struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// spreadOf returns the min, median and max of vs (the median of an even
// count is the mean of the two middle values).
func spreadOf(vs []float64) MinMedMax {
	if len(vs) == 0 {
		return MinMedMax{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return MinMedMax{Min: s[0], Median: med, Max: s[n-1]}
}

// Spread is the spread over the seeds at the recommended delay (or at
// each seed's reported point without one).
type Spread struct {
	MissedRate, FalseDropRate MinMedMax
	// PeakStateRows and PeakStateBytes are at the planned rate (scaled).
	PeakStateRows, PeakStateBytes MinMedMax
}

// Point is one simulated delay.
type Point struct {
	// Delay is the watermark delay; 0 with HasDelay false for a query
	// the delay does not apply to.
	Delay    time.Duration
	HasDelay bool
	// Summary is the simulation's summary of the query at that delay.
	Summary metrics.QuerySummary
	// Meets is true when the rates meet the targets.
	Meets bool
}

// Result is a plan.
type Result struct {
	// Query is the query's name and QueryText its chain at Point's delay.
	Query, QueryText string
	// Shape is how the model classifies the query.
	Shape QueryShape
	// Targets are the targets planned for.
	Targets Targets
	// Recommended is the smallest delay meeting the targets (and the
	// budget); nil when none does.
	Recommended *time.Duration
	// Point is the simulation the result reports: at the recommended
	// delay; with a failed budget, at the smallest delay meeting the
	// rates; when unreachable, at the query's own delay as written.
	Point Point
	// Model is the closed-form estimate at Point's delay; ModelOK is
	// false when the query is outside the model (several dedups).
	Model   ModelEstimate
	ModelOK bool
	// ScenarioRate is the scenario's (peak) rate of originals as written;
	// PlannedRate the rate simulated (the production rate when one was
	// given, else ScenarioRate); Scale is PlannedRate / ScenarioRate, the
	// factor the scenario's rates were multiplied by. Every value of the
	// result is simulated at PlannedRate: nothing is scaled by Scale.
	ScenarioRate, PlannedRate, Scale float64
	// Reason says in plain words why this is the answer.
	Reason string
	// Notes are caveats worth printing.
	Notes []string
	// Points are every simulated delay, in increasing order.
	Points []Point
	// Resolution is the width of the final bisection interval.
	Resolution time.Duration
	// BudgetExceeded is true when the rate targets are met but not within
	// the memory budget.
	BudgetExceeded bool
	// Seeds holds each seed's part, the scenario's seed first.
	Seeds []SeedResult
	// Quantile is the share of seeds the recommendation meets the targets
	// on.
	Quantile float64
	// Spread is over the seeds, at the recommended delay.
	Spread Spread
	// Binding names the target that decides the delay (BindMissedRate,
	// BindFalseDropRate or BindMemoryBudget); "" when none does (no delay
	// applies, or none is reached).
	Binding string
	// MissedAlone and FalseDropAlone are the delays each rate target alone
	// needs, at the same quantile of the seeds as the recommendation; nil
	// when no delay meets it.
	MissedAlone, FalseDropAlone *time.Duration
	// Spark is the plan on a Spark cluster, set by the caller from Spark;
	// nil without one.
	Spark *SparkResult
	// Below, with the curve, is the delay under the recommendation that
	// a direct run on seed BelowSeed shows missing the targets: the
	// largest its search found failing, a resolution step below.
	Below     *time.Duration
	BelowSeed uint64
	// Curves are each seed's exact one-pass curve (sim/curve), when the
	// query reduces to thresholds on its delay; nil otherwise.
	Curves []SeedCurve
	// Engine and Parameter are the engine of a query other than Spark's
	// and the horizon searched (HorizonName: "state TTL", "window",
	// "duration"); both "" for a Spark query, whose delay is searched.
	// Every delay of the result is then that horizon.
	Engine, Parameter string
}

// ParamName names the searched value: "delay" for Spark, else the
// engine's horizon.
func (r *Result) ParamName() string { return cmp.Or(r.Parameter, "delay") }

// PredictedRows and PredictedBytes return the model's peak state at the
// planned rate; ok is false when it is unbounded or outside the model.
func (r *Result) PredictedRows() (float64, bool) {
	if !r.ModelOK || r.Model.Unbounded {
		return 0, false
	}
	return r.Model.PeakStateRows, true
}

// PredictedBytes returns the model's peak state bytes at the planned rate.
func (r *Result) PredictedBytes() (float64, bool) {
	if !r.ModelOK || r.Model.Unbounded {
		return 0, false
	}
	return r.Model.PeakStateBytes, true
}

// SimulatedRows returns the simulated peak state rows at the planned rate.
func (r *Result) SimulatedRows() float64 {
	return float64(r.Point.Summary.PeakStateRows)
}

// SimulatedBytes returns the simulated peak state bytes at the planned
// rate.
func (r *Result) SimulatedBytes() float64 {
	return float64(r.Point.Summary.PeakStateBytes)
}

// QueryNotFoundError is returned for a query name the scenario lacks.
type QueryNotFoundError struct {
	Name, File string
	// Names are the scenario's query names.
	Names []string
}

func (e *QueryNotFoundError) Error() string {
	return fmt.Sprintf("no query %q in %s; its queries are: %s", e.Name, e.File, strings.Join(e.Names, ", "))
}

// gridDelays are the coarse candidates, before the cut at the duration.
var gridDelays = func() []time.Duration {
	s, m, h, d := time.Second, time.Minute, time.Hour, 24*time.Hour
	return []time.Duration{
		1 * s, 2 * s, 5 * s, 10 * s, 20 * s, 30 * s,
		1 * m, 2 * m, 3 * m, 5 * m, 7 * m, 10 * m, 15 * m, 20 * m, 30 * m, 45 * m,
		1 * h, 90 * m, 2 * h, 3 * h, 4 * h, 6 * h, 8 * h, 12 * h, 18 * h,
		1 * d, 36 * h, 2 * d, 3 * d, 4 * d, 5 * d, 7 * d, 10 * d, 14 * d, 21 * d, 30 * d,
	}
}()

// gridChunk is how many grid delays are simulated per round.
const gridChunk = 4

// Grid returns the coarse candidate delays for sc: the grid up to the
// scenario's duration.
func Grid(sc *scenario.Scenario) []time.Duration {
	var out []time.Duration
	for _, d := range gridDelays {
		if d <= sc.Duration.Std() {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		out = []time.Duration{time.Second}
	}
	return out
}

// Search plans the watermark delay of the query named query on sc, over
// opts.Seeds seeds: each seed is searched on its own (the smallest delay
// meeting the targets, and each rate target alone), in parallel; the
// recommendation is the opts.Quantile quantile of the seeds' delays,
// simulated on every seed, and checked against the memory budget on the
// largest peak state among them.
func Search(ctx context.Context, sc *scenario.Scenario, query string, t Targets, opts Options) (*Result, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	n, q := opts.Seeds, opts.Quantile
	if n <= 0 {
		n = 1
	}
	if q == 0 {
		q = 1
	}
	switch {
	case n > MaxSeeds:
		return nil, fmt.Errorf("seeds %d: want at most %d", n, MaxSeeds)
	case !(q > 0 && q <= 1):
		return nil, fmt.Errorf("quantile %v: want a share of the seeds above 0 and at most 1", q)
	}
	if sc.Workload.Events != nil {
		if t.ProductionRate > 0 {
			return nil, fmt.Errorf("%s: workload.events: --production-rate cannot scale a log's own rows yet: fit a scenario to the log and plan on the fitted scenario at that rate, or plan the log at its own rate", sc.File)
		}
		// A log's rows do not depend on the seed: it is simulated once.
		n = 1
	}
	written := PeakRate(sc)
	if t.ProductionRate > 0 {
		var err error
		if sc, err = AtRate(sc, t.ProductionRate); err != nil {
			return nil, err
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sim := opts.simulate
	if sim == nil {
		sim = runnerSimulate
	}
	// The seeds' searches share one pool of workers (see pool.go).
	// Nothing in a result depends on the workers or the scheduling.
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batch := opts.maxBatch
	if batch <= 0 {
		batch = maxBatch
	}
	p := newPool(pctx, workers, batch, sim, opts.Progress, float64(n)*estimateTotal(sc))
	defer p.close()
	if opts.onPool != nil {
		opts.onPool(p)
	}
	type seedRun struct {
		res *Result
		s   *searcher
	}
	runs := make([]seedRun, n)
	errs := make([]error, n)
	var g errgroup.Group
	for i := range runs {
		g.Go(func() error {
			seeded := *sc
			seeded.Seed = sc.Seed + uint64(i)
			r, s, err := searchSeed(pctx, p, &seeded, query, t, written, seedOpts{curve: !opts.SimulateEach && opts.simulate == nil, state: opts.CurveState, single: n == 1})
			if err != nil {
				errs[i] = err
				cancel()
				return err
			}
			runs[i] = seedRun{r, s}
			if n > 1 && s.curve == nil {
				p.finished(s, q)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The first seed's own error, not the cancellations it caused.
		for _, err := range errs {
			if err != nil && !errors.Is(err, context.Canceled) {
				return nil, err
			}
		}
		return nil, err
	}
	res := *runs[0].res
	res.Quantile = q
	for _, r := range runs {
		res.Seeds = append(res.Seeds, SeedResult{Seed: r.s.sc.Seed, Delay: r.res.Recommended, At: r.res.Point,
			MissedAlone: r.s.missedAlone, FalseDropAlone: r.s.fdAlone, Simulated: r.s.simulated(len(r.res.Points)), FromCurve: r.s.curve != nil})
		if r.s.curve != nil {
			res.Curves = append(res.Curves, SeedCurve{Seed: r.s.sc.Seed, Points: curvePoints(r.s.curve)})
		}
		if r.res.Recommended == nil && r.res.BudgetExceeded && r.s.meetsAt != nil {
			// The budget failed the seed, not the rates: its delay still
			// counts for the rates.
			res.Seeds[len(res.Seeds)-1].Delay = r.s.meetsAt
		}
	}
	out := &res
	if n == 1 || !runs[0].s.info.delayMatters {
		res.spread()
		res.binding()
	} else {
		var err error
		if out, err = combine(&res, runs[0].s, func(i int) *searcher { return runs[i].s }); err != nil {
			return nil, err
		}
	}
	out.neverShrinks()
	out.Notes = append(out.Notes, out.countNotes()...)
	return out, nil
}

// fewEvents is how many missed duplicates (or false drops) a target may
// allow per seed below which the answer rests on too few events to hold
// from one set of seeds to the next.
const fewEvents = 100

// countNotes says how many copies and events the rates at the reported
// delay rest on, per seed, and how many the targets allow; with fewer
// than fewEvents allowed, it advises more seeds.
func (r *Result) countNotes() []string {
	if len(r.Seeds) == 0 || !r.Point.HasDelay {
		return nil
	}
	var dups, events, missed, drops []float64
	for _, sr := range r.Seeds {
		q := sr.At.Summary
		dups = append(dups, float64(q.TrueDuplicates))
		events = append(events, float64(q.LogicalEvents))
		missed = append(missed, float64(q.MissedDuplicates))
		drops = append(drops, float64(q.FalseDrops))
	}
	d, e := spreadOf(dups), spreadOf(events)
	m, f := spreadOf(missed), spreadOf(drops)
	span := func(v MinMedMax) string {
		if v.Min == v.Max {
			return fmtCount(v.Min)
		}
		return fmtCount(v.Min) + " to " + fmtCount(v.Max)
	}
	per := "the seed"
	if len(r.Seeds) > 1 {
		per = "each seed"
	}
	at := fmtDelay(r.Point.Delay)
	allowM, allowF := r.Targets.MaxMissedRate*d.Min, r.Targets.MaxFalseDropRate*e.Min
	note := fmt.Sprintf("at %s, %s's missed rate rests on %s copies (true duplicates) and its false-drop rate on %s events: the %s missed target allows about %s missed copies (the worst seed missed %s), the %s false-drop target about %s lost events (the worst seed lost %s)",
		at, per, span(d), span(e), percent(r.Targets.MaxMissedRate), fmtCount(allowM), fmtCount(m.Max), percent(r.Targets.MaxFalseDropRate), fmtCount(allowF), fmtCount(f.Max))
	out := []string{note}
	var few []string
	if d.Min > 0 && allowM < fewEvents {
		few = append(few, fmt.Sprintf("%s missed copies", fmtCount(allowM)))
	}
	if e.Min > 0 && allowF < fewEvents && r.Targets.MaxFalseDropRate > 0 {
		few = append(few, fmt.Sprintf("%s lost events", fmtCount(allowF)))
	}
	if len(few) > 0 {
		out = append(out, fmt.Sprintf("few events decide: a target of %s per seed moves with a handful of events, so another set of seeds may need a longer %s; plan again with --seeds %d (or a longer duration, or --production-rate at your real rate) before relying on it",
			strings.Join(few, " and "), r.ParamName(), max(2*len(r.Seeds), 10)))
	}
	return out
}

// neverShrinks withdraws the recommendation of a query whose state never
// shrinks: whatever delay meets the rate targets, its state grows without
// bound, so no delay is safe to run (the delays that meet the rates stay
// in Seeds and the reason).
func (r *Result) neverShrinks() {
	if r.Shape != NeverEvicts || r.Recommended == nil {
		return
	}
	r.Recommended, r.Binding = nil, ""
	r.Reason = "no recommendation: the state never shrinks, so no delay can be run for long; " + r.Reason
}

// quantileDelay returns the q quantile (nearest rank) of ds, nil counting
// as above every delay; nil when the quantile falls there.
func quantileDelay(ds []*time.Duration, q float64) *time.Duration {
	sorted := slices.Clone(ds)
	slices.SortStableFunc(sorted, func(a, b *time.Duration) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return 1
		case b == nil:
			return -1
		}
		return cmp.Compare(*a, *b)
	})
	k := int(math.Ceil(q*float64(len(sorted))-1e-9)) - 1
	return sorted[max(k, 0)]
}

// combine turns the seeds' searches into the plan: the quantile of their
// delays, simulated on every seed, checked against the budget on the
// largest state, with the spread, the binding target and the reason.
func combine(res *Result, base *searcher, seedSearch func(i int) *searcher) (*Result, error) {
	var ds, ms, fs []*time.Duration
	for _, sr := range res.Seeds {
		ds, ms, fs = append(ds, sr.Delay), append(ms, sr.MissedAlone), append(fs, sr.FalseDropAlone)
	}
	res.MissedAlone, res.FalseDropAlone = quantileDelay(ms, res.Quantile), quantileDelay(fs, res.Quantile)
	rec := quantileDelay(ds, res.Quantile)
	reached := 0
	for _, d := range ds {
		if d != nil {
			reached++
		}
	}
	if rec == nil {
		// The seeds that reach no delay decide: show one of them.
		for i, sr := range res.Seeds {
			if sr.Delay == nil {
				s := seedSearch(i)
				*res = withSeeds(*s.res, res)
				res.Recommended = nil
				res.Reason = fmt.Sprintf("no %s meets the targets on %s of the %d seeds (%d reach one); seed %d: %s",
					base.param, shareWords(res.Quantile), len(res.Seeds), reached, sr.Seed, strings.TrimSuffix(s.res.Reason, "."))
				break
			}
		}
		res.spread()
		res.binding()
		return res, nil
	}
	d := *rec
	met := 0
	// Every seed's simulation at d at once; with the one-pass curve, a
	// direct run, and on the first seed whose own delay is d, the delay
	// its search found failing below it too.
	res.Below, res.BelowSeed = nil, 0
	decider := slices.IndexFunc(res.Seeds, func(sr SeedResult) bool { return sr.Delay != nil && *sr.Delay == d })
	var g errgroup.Group
	for i := range res.Seeds {
		g.Go(func() error {
			s := seedSearch(i)
			if s.curve == nil {
				return s.run([]time.Duration{d})
			}
			if i == decider {
				if s.below != nil {
					res.Below, res.BelowSeed = s.below, s.sc.Seed
				}
				return s.confirmPick(d)
			}
			return s.confirm([]time.Duration{d})
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i := range res.Seeds {
		s := seedSearch(i)
		res.Seeds[i].At = s.seen[d]
		res.Seeds[i].Simulated = s.simulated(len(s.seen))
		if s.seen[d].Meets {
			met++
		}
	}
	res.Point = res.Seeds[0].At
	res.QueryText = res.Point.Summary.Query
	res.Recommended = &d
	res.BudgetExceeded = false
	var err error
	if res.Model, res.ModelOK, err = base.info.estimate(WorkloadOf(base.sc), d.Seconds()); err != nil {
		return nil, err
	}
	res.spread()
	var per []string
	for _, sr := range res.Seeds {
		v := "none"
		if sr.Delay != nil {
			v = fmtDelay(*sr.Delay)
		}
		per = append(per, fmt.Sprintf("%d: %s", sr.Seed, v))
	}
	res.Reason = fmt.Sprintf("%s is the smallest %s meeting %s on %s of the %d seeds (it meets them on %d), %s; each seed's smallest: %s",
		fmtDelay(d), base.param, base.targetText(), shareWords(res.Quantile), len(res.Seeds), met, base.byWhat(), strings.Join(per, ", "))
	if t := base.t; t.MemoryBudget > 0 {
		need := res.Spread.PeakStateBytes.Max
		if need > float64(t.MemoryBudget) {
			res.BudgetExceeded = true
			res.Recommended = nil
			res.Reason = fmt.Sprintf("over budget: %s is the smallest %s meeting %s on %s of the %d seeds, and its largest %s over the seeds, %s%s, exceeds the memory budget of %s",
				fmtDelay(d), base.param, base.targetText(), shareWords(res.Quantile), len(res.Seeds), base.stateWhat(), formatBytes(need), base.atRate(), formatBytes(float64(t.MemoryBudget)))
		} else {
			res.Reason += fmt.Sprintf("; its largest %s over the seeds, %s%s, fits the memory budget of %s", base.peakWhat(), formatBytes(need), base.atRate(), formatBytes(float64(t.MemoryBudget)))
		}
	}
	if base.info.shape == NeverEvicts {
		res.Reason += fmt.Sprintf(". But the query never evicts: %s; its state grows without bound whatever the delay%s. Fix: %s",
			base.neverEvictsWhy(), base.budgetClause(), base.fixUnbounded())
		if base.t.MemoryBudget > 0 {
			res.BudgetExceeded, res.Recommended = true, nil
		}
	}
	res.binding()
	if !strings.HasSuffix(res.Reason, ".") {
		res.Reason += "."
	}
	// The notes are the recommendation's, not the first seed's own
	// delay's.
	res.Notes = nil
	base.notes(res)
	return res, nil
}

// withSeeds returns r with the multi-seed fields of from.
func withSeeds(r Result, from *Result) Result {
	r.Seeds, r.Quantile, r.MissedAlone, r.FalseDropAlone, r.Curves = from.Seeds, from.Quantile, from.MissedAlone, from.FalseDropAlone, from.Curves
	return r
}

// shareWords words a quantile of seeds: "every one", "95%".
func shareWords(q float64) string {
	if q >= 1 {
		return "every one"
	}
	return strconv.FormatFloat(100*q, 'g', 4, 64) + "%"
}

// spread fills the spread of the seeds' rates and (scaled) peak state at
// their points.
func (r *Result) spread() {
	var m, f, n, b []float64
	for _, sr := range r.Seeds {
		m = append(m, sr.At.Summary.MissedDuplicateRate)
		f = append(f, sr.At.Summary.FalseDropRate)
		n = append(n, float64(sr.At.Summary.PeakStateRows))
		b = append(b, float64(sr.At.Summary.PeakStateBytes))
	}
	r.Spread = Spread{MissedRate: spreadOf(m), FalseDropRate: spreadOf(f), PeakStateRows: spreadOf(n), PeakStateBytes: spreadOf(b)}
}

// binding names the target that decides the plan: the memory budget when
// it fails it; else the rate target whose own delay is the longer.
func (r *Result) binding() {
	switch {
	case r.BudgetExceeded:
		r.Binding = BindMemoryBudget
	case r.Recommended == nil:
		r.Binding = ""
	case r.MissedAlone != nil && (r.FalseDropAlone == nil || *r.MissedAlone >= *r.FalseDropAlone):
		r.Binding = BindMissedRate
	case r.FalseDropAlone != nil:
		r.Binding = BindFalseDropRate
	}
}

// searchSeed plans the watermark delay of the query named query on sc,
// one seed: the search, and each rate target's own delay.
// written is the scenario's peak rate as written, before AtRate.
func searchSeed(ctx context.Context, p *pool, sc *scenario.Scenario, query string, t Targets, written float64, so seedOpts) (*Result, *searcher, error) {
	qi := -1
	var names []string
	for i, q := range sc.Queries {
		names = append(names, q.Name)
		if q.Name == query {
			qi = i
		}
	}
	if qi < 0 {
		return nil, nil, &QueryNotFoundError{Name: query, File: sc.File, Names: names}
	}
	var info queryInfo
	param := "delay"
	if q := sc.Queries[qi]; q.IsSpark() {
		var err error
		if info, err = classify(sc, q.Query); err != nil {
			return nil, nil, fmt.Errorf("queries[%d].query: %w", qi, err)
		}
	} else {
		var err error
		if param, err = HorizonName(q.Engine); err != nil {
			return nil, nil, fmt.Errorf("queries[%d]: %w", qi, err)
		}
		if err := q.NoHorizon(); err != nil {
			return nil, nil, fmt.Errorf("queries[%d]: %w", qi, err)
		}
		if t.MemoryBudget > 0 && !BudgetModelled(q.Engine) {
			return nil, nil, fmt.Errorf("queries[%d]: a memory budget bounds modelled state bytes (Spark's state store, Flink's heap state backend); a %s query's state bytes are not modelled (its peak state rows are shown): drop the budget", qi, q.Engine)
		}
		// Another engine's horizon always changes what it keeps; no
		// closed-form model covers it (ok false).
		info = queryInfo{delayMatters: true}
	}
	var err error
	rate := PeakRate(sc)
	if rate <= 0 {
		return nil, nil, fmt.Errorf("%s: workload: no originals at any rate: nothing to plan", sc.File)
	}
	s := &searcher{ctx: ctx, sc: sc, q: sc.Queries[qi], info: info, t: t, seen: map[time.Duration]Point{}, param: param, single: so.single}
	p.add(s)
	if so.curve && info.delayMatters {
		if err := s.curveFor(so.state); err != nil {
			return nil, nil, err
		}
	}
	res := &Result{Query: query, Shape: info.shape, Targets: t, ScenarioRate: written, PlannedRate: rate, Scale: rate / written, Quantile: 1}
	if !s.q.IsSpark() {
		res.Engine, res.Parameter = s.q.Engine, param
	}
	if !info.delayMatters {
		err = s.planNoDelay(res)
	} else {
		err = s.search(res)
	}
	if err != nil {
		return nil, nil, err
	}
	res.Points = s.points()
	res.QueryText = res.Point.Summary.Query
	if (res.Point.HasDelay || !info.delayMatters) && sc.Workload.Events == nil {
		// The closed-form model needs the generated traffic's
		// distributions; a log has none (ModelOK stays false).
		d := res.Point.Delay.Seconds()
		if res.Model, res.ModelOK, err = info.estimate(WorkloadOf(sc), d); err != nil {
			return nil, nil, err
		}
	}
	s.notes(res)
	if !strings.HasSuffix(res.Reason, ".") {
		res.Reason += "."
	}
	res.MissedAlone, res.FalseDropAlone = s.missedAlone, s.fdAlone
	s.res = res
	return res, s, nil
}

func (t Targets) validate() error {
	check := func(name string, v float64) error {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fmt.Errorf("%s %v: want a rate between 0 and 1", name, v)
		}
		return nil
	}
	if err := check("max missed rate", t.MaxMissedRate); err != nil {
		return err
	}
	if err := check("max false-drop rate", t.MaxFalseDropRate); err != nil {
		return err
	}
	if t.MemoryBudget < 0 {
		return fmt.Errorf("memory budget %d: want at least 0", t.MemoryBudget)
	}
	if t.ProductionRate < 0 || math.IsNaN(t.ProductionRate) || math.IsInf(t.ProductionRate, 0) {
		return fmt.Errorf("production rate %v: want above 0", t.ProductionRate)
	}
	return nil
}

type searcher struct {
	ctx  context.Context
	sc   *scenario.Scenario
	q    scenario.Query
	info queryInfo
	t    Targets
	// seen is what the search asked for: the plan reads nothing else.
	seen map[time.Duration]Point
	// pool runs the simulations; memo (its results and running
	// simulations), hint (what the search may ask next), final and done
	// (the seed's delay once its search is over) are the pool's, under
	// its lock.
	pool  *pool
	memo  map[time.Duration]*task
	hint  hintFunc
	final *time.Duration
	done  bool
	// waitingOn is what the search waits for (tests).
	waitingOn []*task
	// missedAlone and fdAlone are the smallest delays meeting each rate
	// target alone (nil: none does, or not searched); meetsAt the
	// smallest meeting both, the budget aside.
	missedAlone, fdAlone, meetsAt *time.Duration
	// res is the seed's own plan.
	res *Result
	// start is modelStart's result, once worked out.
	start *int
	// tail is what the search's later phases may ask first: a hint
	// after the current step's.
	tail hintFunc
	// param names the searched value in reasons: "delay" for Spark,
	// else the engine's horizon (HorizonName).
	param string
	// curve, when the query reduces to thresholds on its delay, answers
	// the search's delays in place of simulations (see curveFor);
	// stateless are the delays it answered without their state, direct
	// the ones simulated to confirm it.
	curve     *curve.Curve
	stateless map[time.Duration]bool
	direct    map[time.Duration]bool
	// below is the largest delay the search found failing under its
	// answer (nil: the answer is the smallest delay tried); single is
	// set when the plan has one seed.
	below  *time.Duration
	single bool
	// curveWhy says why the query has no curve ("" when it has one or
	// was not asked for one).
	curveWhy string
}

// BudgetModelled reports whether a query of engine has modelled state
// bytes that a memory budget can bound (sim/registry's Harness.StateBytes:
// Spark's state store, Flink's heap state backend estimate).
func BudgetModelled(engine string) bool {
	h, err := registry.HarnessOf(engine)
	return err == nil && h.StateBytes
}

// peakWhat names the peak state that fits a memory budget, by the
// engine's harness facts ("peak state", "modelled peak state").
func (s *searcher) peakWhat() string { return s.harness().PeakState }

// stateWhat names the peak state a memory budget bounds in a reason, by
// the engine's harness facts.
func (s *searcher) stateWhat() string { return s.harness().PeakStateWhy }

// harness returns the harness facts of the query's engine (Spark's for an
// engine the registry does not know, which the loader refuses first).
func (s *searcher) harness() registry.Harness {
	h, err := registry.HarnessOf(s.q.Engine)
	if err != nil {
		h, _ = registry.HarnessOf(registry.Spark)
	}
	return h
}

// HorizonName names the horizon plan searches for a query of engine
// (sim/registry's Harness.HorizonName: Spark's watermark "delay", Flink's
// "state TTL", ...).
func HorizonName(engine string) (string, error) {
	h, err := registry.HarnessOf(engine)
	if err != nil {
		return "", fmt.Errorf("plan cannot search the horizon of a %s query: %w", engine, err)
	}
	return h.HorizonName, nil
}

// estimateTotal guesses the simulated seconds of one seed's search: a
// chunk of the grid and three bisection rounds of three, and as much again
// for the rate targets alone.
func estimateTotal(sc *scenario.Scenario) float64 {
	return float64(2*(gridChunk+9)) * sc.Duration.Std().Seconds()
}

// meets reports whether a summary meets the rate targets.
func (s *searcher) meets(q metrics.QuerySummary) bool {
	return q.MissedDuplicateRate <= s.t.MaxMissedRate && q.FalseDropRate <= s.t.MaxFalseDropRate
}

// run simulates the query at each delay not simulated yet.
func (s *searcher) run(delays []time.Duration) error { return s.runNext(delays, nil) }

// runNext simulates the query at each delay not simulated yet; next
// names what the search may ask after them, for the pool's idle workers.
func (s *searcher) runNext(delays []time.Duration, next hintFunc) error {
	var todo []time.Duration
	for _, d := range delays {
		if _, ok := s.seen[d]; ok || slices.Contains(todo, d) {
			continue
		}
		if s.curve != nil && s.curve.Has(d) {
			p, _ := s.curve.At(d)
			p.Summary.Query = s.q.Query
			s.seen[d] = s.point(d, p.Summary)
			if !p.HasState {
				s.stateless[d] = true
			}
			continue
		}
		todo = append(todo, d)
	}
	if len(todo) == 0 {
		return nil
	}
	sums, err := s.pool.request(s, todo, joinHints(next, s.tail))
	if err != nil {
		return err
	}
	for i, d := range todo {
		s.seen[d] = s.point(d, sums[i])
	}
	return nil
}

// allPoints returns every point the search read, the curve's without
// their state included, by increasing delay.
func (s *searcher) allPoints() []Point {
	out := make([]Point, 0, len(s.seen))
	for _, p := range s.seen {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Delay < out[j].Delay })
	return out
}

// points returns the simulated points by increasing delay.
func (s *searcher) points() []Point {
	out := make([]Point, 0, len(s.seen))
	for d, p := range s.seen {
		if s.stateless[d] {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Delay < out[j].Delay })
	return out
}

// planNoDelay handles a query no watermark delay changes: it is simulated
// once, as written.
func (s *searcher) planNoDelay(res *Result) error {
	sums, err := s.pool.request(s, []time.Duration{noDelay}, nil)
	if err != nil {
		return err
	}
	q := sums[0]
	p := s.point(noDelay, q)
	res.Point = p
	why := "no withWatermark reaches its dedup"
	if s.info.plan.HasWatermark {
		why = "its withWatermark comes after the dedup, so the watermark never reaches it"
	}
	res.Reason = fmt.Sprintf("no watermark delay to plan: %s. No delay changes what it keeps or drops: "+
		"it keeps every key forever and its state grows without bound for as long as the query runs (%s rows after this %s run)%s. "+
		"Fix: %s.", why, fmtCount(float64(q.PeakStateRows)), s.sc.Duration, s.budgetClause(), s.fixUnbounded())
	return nil
}

// budgetClause says that a memory budget cannot hold an unbounded state.
func (s *searcher) budgetClause() string {
	if s.t.MemoryBudget <= 0 {
		return ""
	}
	return fmt.Sprintf("; no memory budget (%s) can be met over an unbounded run", formatBytes(float64(s.t.MemoryBudget)))
}

// fixUnbounded names the query shape that would evict.
func (s *searcher) fixUnbounded() string {
	return fmt.Sprintf(`withWatermark("event_time", "<delay>").dropDuplicatesWithinWatermark(%s), which forgets a key about twice the delay after its first event time`, s.idKeys())
}

// idKeys renders the dedup's keys without the event time and the columns
// that differ between copies, as a Python list.
func (s *searcher) idKeys() string {
	var keep []string
	for _, k := range s.info.dedup.KeyNames {
		switch k {
		case "event_time", "attempt", "ingest_time":
			continue
		}
		keep = append(keep, `"`+k+`"`)
	}
	if len(keep) == 0 || s.info.dedup.Op.AllColumns {
		keep = []string{`"event_id"`}
	}
	return "[" + strings.Join(keep, ", ") + "]"
}

// meetsMissed and meetsFalseDrop test a point against one rate target.
func (s *searcher) meetsMissed(p Point) bool {
	return p.Summary.MissedDuplicateRate <= s.t.MaxMissedRate
}
func (s *searcher) meetsFalseDrop(p Point) bool {
	return p.Summary.FalseDropRate <= s.t.MaxFalseDropRate
}

// smallest finds the smallest delay whose point passes ok: the first grid
// delay that passes with the one below failing, then bisected down to
// max(1s, 1%). It returns the delay, the grid index it was bracketed at
// (-1 when no grid delay passes) and the final interval's width.
func (s *searcher) smallest(grid []time.Duration, ok func(Point) bool) (time.Duration, int, time.Duration, error) {
	first, err := s.bracket(grid, ok)
	if err != nil || first < 0 {
		return 0, first, 0, err
	}
	hi := grid[first]
	lo := time.Duration(0)
	if first > 0 {
		lo = grid[first-1]
	}
	if first > 0 {
		for {
			mids := bisectMids(lo, hi)
			if len(mids) == 0 {
				break
			}
			if err := s.runNext(mids, bisectHint(lo, hi, mids, ok)); err != nil {
				return 0, 0, 0, err
			}
			for _, m := range mids {
				if ok(s.seen[m]) {
					hi = m
					break
				}
				lo = m
			}
		}
	}
	return hi, first, hi - lo, nil
}

// alone finds each rate target's own smallest delay, for the binding
// target; the simulations already run are reused.
func (s *searcher) alone(grid []time.Duration) error {
	for _, a := range []struct {
		ok  func(Point) bool
		out **time.Duration
	}{{s.meetsMissed, &s.missedAlone}, {s.meetsFalseDrop, &s.fdAlone}} {
		// While one target alone is searched, the other's first step is
		// a hint too.
		s.tail = nil
		if a.out == &s.missedAlone {
			s.tail = s.aloneHint(grid, s.meetsFalseDrop)
		}
		d, first, _, err := s.smallest(grid, a.ok)
		if err != nil {
			return err
		}
		if first >= 0 {
			*a.out = &d
		}
	}
	return nil
}

func (s *searcher) search(res *Result) error {
	grid := Grid(s.sc)
	// While the targets are searched, the first steps of each rate
	// target's own search are hints too.
	s.tail = joinHints(s.aloneHint(grid, s.meetsMissed), s.aloneHint(grid, s.meetsFalseDrop))
	hi, first, width, err := s.smallest(grid, func(p Point) bool { return p.Meets })
	if err != nil {
		return err
	}
	if err := s.alone(grid); err != nil {
		return err
	}
	if first < 0 {
		return s.unreachable(res, grid)
	}
	gridLo := time.Duration(0)
	if first > 0 {
		gridLo = grid[first-1]
		b := hi - width
		s.below = &b
	}
	if s.curve != nil && (s.single || s.t.MemoryBudget > 0) {
		// The answer and the delay below it, by direct runs.
		if err := s.confirmPick(hi); err != nil {
			return err
		}
		if s.below != nil {
			res.Below, res.BelowSeed = s.below, s.sc.Seed
		}
	}
	res.Resolution = width
	meets := hi
	s.meetsAt = &meets
	p := s.seen[hi]
	res.Point = p
	d := hi
	what := s.targetText()
	how := "the smallest delay tried"
	if first > 0 {
		how = fmt.Sprintf("%s fails, %s passes, bisected down to %s", fmtDelay(gridLo), fmtDelay(grid[first]), fmtDelay(max(res.Resolution, time.Second)))
	}
	res.Reason = fmt.Sprintf("%s is the smallest %s meeting %s, %s (%s): missed %s, false drops %s",
		fmtDelay(d), s.param, what, s.byWhat(), how, interval.Percent(p.Summary.MissedDuplicateRate), interval.Percent(p.Summary.FalseDropRate))
	if s.info.shape == NeverEvicts {
		res.Reason += fmt.Sprintf(". But the query never evicts: %s; its state grows without bound (%s rows after this %s run) whatever the delay%s. Fix: %s",
			s.neverEvictsWhy(), fmtCount(float64(p.Summary.PeakStateRows)), s.sc.Duration, s.budgetClause(), s.fixUnbounded())
		if s.t.MemoryBudget > 0 {
			res.BudgetExceeded = true
			return nil
		}
	}
	if s.t.MemoryBudget > 0 && s.info.shape != NeverEvicts {
		const scale = 1.0 // simulated at the planned rate
		need := float64(p.Summary.PeakStateBytes) * scale
		if need > float64(s.t.MemoryBudget) {
			res.BudgetExceeded = true
			fits, err := s.budgetFits(scale)
			if err != nil {
				return err
			}
			res.Reason = fmt.Sprintf("over budget: %s is the smallest %s meeting %s, and its %s, %s%s, exceeds the memory budget of %s. %s",
				fmtDelay(d), s.param, what, s.stateWhat(), formatBytes(need), s.atRate(), formatBytes(float64(s.t.MemoryBudget)), fits)
			return nil
		}
		res.Reason += fmt.Sprintf("; its %s, %s%s, fits the memory budget of %s", s.peakWhat(), formatBytes(need), s.atRate(), formatBytes(float64(s.t.MemoryBudget)))
	}
	res.Recommended = &d
	return nil
}

// bracket simulates grid delays until it finds the first that meets the
// targets with the one below it failing, and returns its index (-1 when
// none meets them). It starts at the largest grid delay the model says
// fails by a wide margin (4 x a target), walking up in chunks, and back
// down if that start already passes; every delay it concludes from is
// simulated. The model only saves simulations of delays far below the
// answer.
func (s *searcher) bracket(grid []time.Duration, ok func(Point) bool) (int, error) {
	start := min(s.modelStart(grid), max(len(grid)-gridChunk, 0))
	first := -1
	for i := start; i < len(grid) && first < 0; i += gridChunk {
		chunk := grid[i:min(i+gridChunk, len(grid))]
		if err := s.runNext(chunk, bracketHint(grid, i, s.triedWith(chunk), ok)); err != nil {
			return 0, err
		}
		for j, d := range chunk {
			if ok(s.seen[d]) {
				first = i + j
				break
			}
		}
	}
	if first < 0 {
		return -1, nil
	}
	// Walk down while the delay below the first passing one is untried
	// or passes.
	for first > 0 {
		below, tried := s.seen[grid[first-1]]
		if tried && !ok(below) {
			break
		}
		if tried {
			first--
			continue
		}
		lo := max(first-gridChunk, 0)
		have, f := s.triedWith(grid[lo:first]), first
		next := func(known func(time.Duration) (Point, bool)) []time.Duration {
			return afterFirst(grid, f, have, ok, known)
		}
		if err := s.runNext(grid[lo:first], next); err != nil {
			return 0, err
		}
	}
	return first, nil
}

// modelStart returns the index of the largest grid delay below which the
// closed-form model says every delay misses a target by a factor of 4.
// The three searches of a seed (the targets, and each rate target alone)
// start there: it is worked out once (a quarter of a second of model on
// the capacity-plan scenario, during which no simulation can be asked).
func (s *searcher) modelStart(grid []time.Duration) int {
	if s.start == nil {
		st := s.modelStartOf(grid)
		s.start = &st
	}
	return *s.start
}

// modelStartOf computes modelStart.
func (s *searcher) modelStartOf(grid []time.Duration) int {
	if !s.info.modelled() || s.curve != nil {
		// The curve's delays cost nothing to read: no model needed.
		return 0
	}
	mw := WorkloadOf(s.sc)
	start := 0
	for i, d := range grid {
		est, err := EstimateModel(mw, s.info.modelQuery(d.Seconds()))
		if err != nil {
			return 0
		}
		if est.MissedRate <= 4*s.t.MaxMissedRate && est.FalseDropRate <= 4*s.t.MaxFalseDropRate {
			break
		}
		start = i
	}
	return start
}

// atRate says at which rate a scaled state holds.
func (s *searcher) atRate() string {
	if s.t.ProductionRate > 0 {
		return fmt.Sprintf(" at %s/s", fmtCount(s.t.ProductionRate))
	}
	return ""
}

// budgetFits names the largest simulated delay whose state fits the
// budget, and what it misses. It first simulates the largest delay the
// model says fits, so the answer rests on a simulation near the limit.
func (s *searcher) budgetFits(scale float64) (string, error) {
	dm, _, modelOK := s.modelFit(scale)
	if modelOK {
		if err := s.confirm([]time.Duration{dm}); err != nil {
			return "", err
		}
	}
	var best *Point
	for _, p := range s.points() {
		if float64(p.Summary.PeakStateBytes)*scale <= float64(s.t.MemoryBudget) {
			best = &p
		}
	}
	if best == nil {
		return fmt.Sprintf("No %s simulated fits it, down to the smallest.", s.param), nil
	}
	out := fmt.Sprintf("The largest %s simulated that fits is %s (peak %s), which misses %s of duplicates and loses %s of events",
		s.param, fmtDelay(best.Delay), formatBytes(float64(best.Summary.PeakStateBytes)*scale),
		interval.Percent(best.Summary.MissedDuplicateRate), interval.Percent(best.Summary.FalseDropRate))
	if modelOK && dm != best.Delay {
		out += fmt.Sprintf(" (the model puts the limit at about %s)", fmtDelay(dm))
	}
	return out + ".", nil
}

// modelFit bisects the closed-form model for the largest whole-second
// delay whose peak state, scaled, fits the budget.
func (s *searcher) modelFit(scale float64) (time.Duration, ModelEstimate, bool) {
	if !s.info.modelled() || s.info.shape == NeverEvicts {
		return 0, ModelEstimate{}, false
	}
	mw := WorkloadOf(s.sc)
	fits := func(d time.Duration) (ModelEstimate, bool) {
		est, err := EstimateModel(mw, s.info.modelQuery(d.Seconds()))
		return est, err == nil && est.PeakStateBytes*scale <= float64(s.t.MemoryBudget)
	}
	lo, hi := time.Duration(0), s.sc.Duration.Std()
	if _, ok := fits(lo); !ok {
		return 0, ModelEstimate{}, false
	}
	for hi-lo > time.Second {
		mid := ((lo + hi) / 2).Round(time.Second)
		if mid <= lo || mid >= hi {
			break
		}
		if _, ok := fits(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	est, _ := fits(lo)
	return lo, est, lo > 0
}

func (s *searcher) targetText() string {
	return fmt.Sprintf("missed duplicates <= %s and false drops <= %s", percent(s.t.MaxMissedRate), percent(s.t.MaxFalseDropRate))
}

// neverEvictsWhy says why a dedup with a watermark never evicts.
func (s *searcher) neverEvictsWhy() string {
	return "the event time is not among dropDuplicates' keys, so it dedups globally and keeps every key forever (it still drops late rows)"
}

// unreachable explains why no delay of the grid meets the targets, from
// the smallest and the largest grid delays at least.
func (s *searcher) unreachable(res *Result, grid []time.Duration) error {
	shown, ok := s.writtenDelay()
	if !ok {
		shown = grid[len(grid)-1]
	}
	var pts []Point
	if s.curve == nil {
		if err := s.run([]time.Duration{grid[0], shown}); err != nil {
			return err
		}
		pts = s.points()
	} else {
		// The values shown by a direct run; the smallest delay's rates,
		// which the reason quotes, from the curve.
		if err := s.run([]time.Duration{grid[0]}); err != nil {
			return err
		}
		if err := s.confirm([]time.Duration{shown}); err != nil {
			return err
		}
		pts = s.allPoints()
	}
	first, last := pts[0], pts[len(pts)-1]
	res.Point = s.seen[shown]
	fq, lq := first.Summary, last.Summary
	span := fmt.Sprintf("from %s to %s", fmtDelay(first.Delay), fmtDelay(last.Delay))
	missedFails := lq.MissedDuplicateRate > s.t.MaxMissedRate
	var parts []string
	if missedFails {
		switch {
		case s.info.newKeys && s.info.shape == PairKeyed:
			parts = append(parts, fmt.Sprintf("no watermark delay can meet missed duplicates <= %s: the query is pair-keyed "+
				"(dropDuplicates with the event time among its keys) and %s: every copy is a new key at any delay and is emitted again; "+
				"the simulated missed rate stays %s %s (%s at %s, %s at %s). "+
				`Use withWatermark("event_time", "<delay>").dropDuplicatesWithinWatermark(%s) instead: it keys on the id alone and drops copies that arrive within about twice the delay`,
				interval.Percent(s.t.MaxMissedRate), s.info.newKeysWhy, rateRange(pts), span,
				interval.Percent(fq.MissedDuplicateRate), fmtDelay(first.Delay), interval.Percent(lq.MissedDuplicateRate), fmtDelay(last.Delay), s.idKeys()))
		case s.info.newKeys:
			parts = append(parts, fmt.Sprintf("no watermark delay can meet missed duplicates <= %s: %s, so every copy is a new key at any delay and is emitted again "+
				"(missed %s at %s, %s at %s). Key on the event id alone: %s",
				interval.Percent(s.t.MaxMissedRate), s.info.newKeysWhy, interval.Percent(fq.MissedDuplicateRate), fmtDelay(first.Delay),
				interval.Percent(lq.MissedDuplicateRate), fmtDelay(last.Delay), s.fixUnbounded()))
		case lq.MissedDuplicateRate >= fq.MissedDuplicateRate:
			parts = append(parts, fmt.Sprintf("the missed-duplicate rate does not fall as the %s grows (%s at %s, %s at %s), so no %s meets %s",
				s.param, interval.Percent(fq.MissedDuplicateRate), fmtDelay(first.Delay), interval.Percent(lq.MissedDuplicateRate), fmtDelay(last.Delay), s.param, interval.Percent(s.t.MaxMissedRate)))
		default:
			parts = append(parts, fmt.Sprintf("the missed-duplicate rate falls with the %s but is still %s at %s, the longest %s this %s run can measure "+
				"(copies' gaps outlast it): lengthen the scenario's duration or relax --max-missed-rate", s.param, interval.Percent(lq.MissedDuplicateRate), fmtDelay(last.Delay), s.param, s.sc.Duration))
		}
	}
	if lq.FalseDropRate > s.t.MaxFalseDropRate {
		c := lq.FalseDropsByCause
		switch {
		case c.Collision > c.Late && s.q.IsSpark():
			parts = append(parts, fmt.Sprintf("false drops stay at %s: most are collisions, the key %s is too coarse to tell events apart; key on event_id",
				interval.Percent(lq.FalseDropRate), s.keyText()))
		default:
			parts = append(parts, fmt.Sprintf("false drops are still %s at %s: the arrival-delay tail is longer than the longest %s this %s run can test; "+
				"lengthen the scenario's duration or relax --max-false-drop-rate", interval.Percent(lq.FalseDropRate), fmtDelay(last.Delay), s.param, s.sc.Duration))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no "+s.param+" tried meets the targets")
	}
	where := "the query's own " + s.param
	if !s.q.IsSpark() {
		where = "the longest " + s.param + " tried"
	}
	res.Reason = "unreachable: " + strings.Join(parts, "; ") + fmt.Sprintf(". Values shown are at %s, %s", where, fmtDelay(shown))
	return nil
}

// writtenDelay returns the delay of the query's withWatermark as written.
func (s *searcher) writtenDelay() (time.Duration, bool) {
	for _, n := range s.info.plan.Nodes {
		if !n.IsDedup() {
			return time.Duration(n.DelayMs) * time.Millisecond, true
		}
	}
	return 0, false
}

func (s *searcher) keyText() string {
	return "[" + strings.Join(s.info.dedup.KeyNames, ", ") + "]"
}

// rateRange describes the missed rates of pts: "at 100%" or "between 97%
// and 100%".
func rateRange(pts []Point) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		lo = math.Min(lo, p.Summary.MissedDuplicateRate)
		hi = math.Max(hi, p.Summary.MissedDuplicateRate)
	}
	if interval.Percent(lo) == interval.Percent(hi) {
		return "at " + interval.Percent(lo)
	}
	return "between " + interval.Percent(lo) + " and " + interval.Percent(hi)
}

// notes adds the caveats of res.
func (s *searcher) notes(res *Result) {
	w := &s.sc.Workload
	if res.Scale != 1 {
		res.Notes = append(res.Notes, fmt.Sprintf("simulated at --production-rate %s/s: the scenario's rate of originals, %s/s, multiplied by %.4g, and every row, copy and bad clock with it; the rates, state and bytes are measured at that rate, not scaled",
			fmtCount(s.t.ProductionRate), fmtCount(res.ScenarioRate), res.Scale))
	}
	if res.ModelOK && !res.Model.Unbounded {
		if res.Model.HorizonSeconds > s.sc.Duration.Std().Seconds()/2 {
			res.Notes = append(res.Notes, fmt.Sprintf("the key horizon (%s) is more than half the %s run: the simulated peak is still near its ramp; steady state is about %s rows (model); lengthen the scenario's duration to measure it",
				fmtDelay(secs(res.Model.HorizonSeconds)), s.sc.Duration, fmtCount(res.Model.SteadyStateRows)))
		}
		sim, mod := float64(res.Point.Summary.PeakStateRows), res.Model.PeakStateRows
		if sim > 0 && math.Abs(mod/sim-1) > 0.2 {
			res.Notes = append(res.Notes, fmt.Sprintf("the model's peak state is %+.0f%% off the simulation: this workload is outside its assumptions (steady traffic, a watermark that follows the traffic); trust the simulated value", 100*(mod/sim-1)))
		}
	}
	if s.curveWhy != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("every %s the search asked for was simulated: no one-pass curve, %s", s.param, s.curveWhy))
	}
	switch {
	case !s.q.IsSpark():
		each := fmt.Sprintf("each a run with the %s set to the value", s.param)
		if s.curve != nil {
			each = fmt.Sprintf("read off the exact one-pass curve of the %s (sim/curve), the recommendation confirmed by direct runs", s.param)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("no closed-form model for this engine (%s): only simulated values are shown, %s", s.q.Engine, each))
		if n := s.harness().BudgetNote; s.t.MemoryBudget > 0 && n != "" {
			res.Notes = append(res.Notes, n)
		}
	case !s.info.ok:
		res.Notes = append(res.Notes, "the closed-form model covers chains with one dedup operator; this one has several, so only simulated values are shown")
	case !s.info.idKey:
		res.Notes = append(res.Notes, fmt.Sprintf("the closed-form model assumes keys that tell events apart (event_id among them); %s does not, so only simulated values are shown", s.keyText()))
	}
	if w.FutureTimestamps.Probability > 0 {
		res.Notes = append(res.Notes, "the model ignores bad clocks (futureTimestamps); the simulation includes them")
	}
	if len(w.Profile) > 0 {
		res.Notes = append(res.Notes, "the rate profile's peak rate is the scenario's rate; stalls freeze the watermark, which the model does not follow")
	}
	for _, f := range s.sc.Faults {
		if f.Kind == scenario.LoseCheckpoint {
			res.Notes = append(res.Notes, "a lose-checkpoint fault re-admits every key it forgets: its missed duplicates are in the simulated rate, whatever the delay")
			break
		}
	}
	if (res.Recommended != nil || res.BudgetExceeded) && s.q.IsSpark() {
		res.Notes = append(res.Notes, "bytes model one version of Spark's HDFS-backed state store; the versions Spark retains in memory (spark.sql.streaming.maxBatchesToRetainInMemory=2) share its rows and add about 80 bytes of map nodes per key, which --executors sizes per executor")
	}
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s)) * time.Second }

// fmtDelay renders a delay the way scenarios write it ("7m40s").
func fmtDelay(d time.Duration) string { return interval.Format(d) }

// seedOpts are what Search passes each seed's search.
type seedOpts struct {
	// curve lets the search read the one-pass curve where the query
	// reduces to thresholds, state makes it track the grid's state;
	// single is set for a plan of one seed.
	curve, state, single bool
}

// curveFor computes the seed's one-pass curve (sim/curve) when the query
// reduces to thresholds on its delay; otherwise the search simulates
// every delay, and a note says why.
func (s *searcher) curveFor(state bool) error {
	if err := curve.Check(s.sc, s.q); err != nil {
		if errors.Is(err, curve.ErrUnsupported) {
			s.curveWhy = err.Error()
			return nil
		}
		return err
	}
	var ds []time.Duration
	if state {
		ds = Grid(s.sc)
	}
	c, err := curve.Compute(s.ctx, s.sc, s.q.Name, curve.Options{StateDelays: ds, Progress: batchProgress{s.pool}.Add})
	if err != nil {
		if errors.Is(err, curve.ErrUnsupported) {
			s.curveWhy = err.Error()
			return nil
		}
		return fmt.Errorf("the one-pass curve of %s: %w", s.q.Name, err)
	}
	s.curve, s.stateless, s.direct = c, map[time.Duration]bool{}, map[time.Duration]bool{}
	return nil
}

// byWhat says how the search found its answer.
func (s *searcher) byWhat() string {
	if s.curve != nil {
		return "by the exact one-pass curve, confirmed by direct runs"
	}
	return "by simulation"
}

// confirm simulates delays directly, not from the curve, and checks that
// the curve holds the same counters at each (without a curve it is run).
func (s *searcher) confirm(delays []time.Duration) error {
	if s.curve == nil {
		return s.run(delays)
	}
	var todo []time.Duration
	for _, d := range delays {
		if !s.direct[d] && !slices.Contains(todo, d) {
			todo = append(todo, d)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	sums, err := s.pool.request(s, todo, nil)
	if err != nil {
		return err
	}
	for i, d := range todo {
		if c, ok := s.curve.At(d); ok {
			if diff := curveDiff(c, sums[i]); diff != "" {
				return fmt.Errorf("simulating %s at %s: the one-pass curve disagrees with the direct run (%s): a bug in sim/curve; plan again with --simulate-each", s.q.Name, fmtDelay(d), diff)
			}
		}
		s.seen[d] = s.point(d, sums[i])
		s.direct[d] = true
		delete(s.stateless, d)
	}
	return nil
}

// confirmPick confirms d and the delay below it that the search found
// failing, by direct runs on one stream, and checks that d meets the
// targets and the one below does not.
func (s *searcher) confirmPick(d time.Duration) error {
	ds := []time.Duration{d}
	if s.below != nil && *s.below < d {
		ds = append(ds, *s.below)
	}
	if err := s.confirm(ds); err != nil {
		return err
	}
	if !s.seen[d].Meets {
		return fmt.Errorf("simulating %s at %s: the direct run misses the targets the one-pass curve meets: a bug in sim/curve; plan again with --simulate-each", s.q.Name, fmtDelay(d))
	}
	if len(ds) > 1 && s.seen[ds[1]].Meets {
		return fmt.Errorf("simulating %s at %s: the direct run meets the targets the one-pass curve misses: a bug in sim/curve; plan again with --simulate-each", s.q.Name, fmtDelay(ds[1]))
	}
	return nil
}

// curveDiff names the counters in which the curve's point differs from a
// direct run's summary; "" when none does.
func curveDiff(c curve.Point, q metrics.QuerySummary) string {
	a, b := c.Summary, q
	type f struct {
		name string
		x, y int64
	}
	fs := []f{
		{"inputRows", a.InputRows, b.InputRows}, {"logicalEvents", a.LogicalEvents, b.LogicalEvents},
		{"trueDuplicates", a.TrueDuplicates, b.TrueDuplicates}, {"emittedRows", a.EmittedRows, b.EmittedRows},
		{"missedDuplicates", a.MissedDuplicates, b.MissedDuplicates}, {"falseDrops", a.FalseDrops, b.FalseDrops},
		{"falseDropsLate", a.FalseDropsByCause.Late, b.FalseDropsByCause.Late},
		{"falseDropsBadClock", a.FalseDropsByCause.BadClock, b.FalseDropsByCause.BadClock},
		{"falseDropsCollision", a.FalseDropsByCause.Collision, b.FalseDropsByCause.Collision},
		{"droppedByWatermark", a.DroppedByWatermark, b.DroppedByWatermark},
		{"droppedDuplicates", a.DroppedDuplicates, b.DroppedDuplicates},
		{"batches", a.Batches, b.Batches}, {"noDataBatches", a.NoDataBatches, b.NoDataBatches},
	}
	if c.HasState {
		fs = append(fs, f{"peakStateRows", a.PeakStateRows, b.PeakStateRows}, f{"peakStateBytes", a.PeakStateBytes, b.PeakStateBytes},
			f{"finalStateRows", a.FinalStateRows, b.FinalStateRows})
	}
	var out []string
	for _, x := range fs {
		if x.x != x.y {
			out = append(out, fmt.Sprintf("%s %d against %d", x.name, x.x, x.y))
		}
	}
	return strings.Join(out, ", ")
}

// simulated is the number of simulations behind a seed's search: n
// without a curve, else its direct runs.
func (s *searcher) simulated(n int) int {
	if s.curve != nil {
		return len(s.direct)
	}
	return n
}

// SeedCurve is one seed's one-pass curve.
type SeedCurve struct {
	Seed   uint64       `json:"seed"`
	Points []CurvePoint `json:"points"`
}

// CurvePoint is the curve at one delay: the rates and false drops by
// cause at every point, the peak state where the pass tracked it (the
// grid's delays).
type CurvePoint struct {
	DelaySeconds      float64                 `json:"delaySeconds"`
	MissedRate        float64                 `json:"missedRate"`
	FalseDropRate     float64                 `json:"falseDropRate"`
	FalseDropsByCause metrics.FalseDropCauses `json:"falseDropsByCause"`
	PeakStateRows     *int64                  `json:"peakStateRows,omitempty"`
	PeakStateBytes    *int64                  `json:"peakStateBytes,omitempty"`
}

// curvePoints samples c at the search's resolution: steps of 1% of the
// delay in whole seconds, at least one (every second up to 199 s), and
// the grid's delays.
func curvePoints(c *curve.Curve) []CurvePoint {
	ds := curve.Resolution(c.Max)
	for _, d := range gridDelays {
		if c.HasState(d) && !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	out := make([]CurvePoint, 0, len(ds))
	for _, d := range ds {
		p, ok := c.At(d)
		if !ok {
			continue
		}
		cp := CurvePoint{DelaySeconds: d.Seconds(), MissedRate: p.Summary.MissedDuplicateRate, FalseDropRate: p.Summary.FalseDropRate,
			FalseDropsByCause: p.Summary.FalseDropsByCause}
		if p.HasState {
			r, b := p.Summary.PeakStateRows, p.Summary.PeakStateBytes
			cp.PeakStateRows, cp.PeakStateBytes = &r, &b
		}
		out = append(out, cp)
	}
	return out
}
