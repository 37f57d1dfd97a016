package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// curveCases are plans the one-pass curve must answer as the bisection
// by simulation does: the golden cases' queries the curve covers, and
// the committed experiments plan is documented on, with their commands'
// targets.
var curveCases = []struct {
	name, file, yaml, query string
	t                       Targets
	seeds                   int
	q                       float64
}{
	{name: "within-3seeds", yaml: knownGaps, query: "within-watermark", t: Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001}, seeds: 3},
	{name: "within-quantile", yaml: knownGaps, query: "within-watermark", t: Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001}, seeds: 3, q: 0.5},
	{name: "within-budget", yaml: knownGaps, query: "within-watermark", t: Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001, MemoryBudget: 1 << 20}, seeds: 2},
	{name: "pair-keyed", yaml: knownGaps, query: "pair-keyed", t: DefaultTargets, seeds: 2},
	{name: "uniform-rate", yaml: uniformGaps, query: "within-watermark", t: Targets{MaxMissedRate: 0.01, MaxFalseDropRate: 0.001, ProductionRate: 300}, seeds: 2},
	{name: "capacity-plan", file: "capacity-plan.yaml", query: "within-watermark", t: Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.0001}, seeds: 2},
	{name: "capacity-plan-1seed", file: "capacity-plan.yaml", query: "within-watermark", t: Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.0001}, seeds: 1},
	{name: "capacity-plan-pair-keyed", file: "capacity-plan.yaml", query: "pair-keyed", t: DefaultTargets, seeds: 2},
	{name: "horizon-tradeoff", file: "horizon-tradeoff.yaml", query: "within-watermark", t: DefaultTargets, seeds: 2},
	// The other engines' horizons: Flink's TTL, Kafka Streams' window,
	// Beam's duration.
	{name: "flink-keep-first", yaml: enginesCurve, query: "flink-keep-first", t: Targets{MaxMissedRate: 0.02, MaxFalseDropRate: 0.0001}, seeds: 2},
	{name: "flink-keep-first-1seed-budget", yaml: enginesCurve, query: "flink-keep-first", t: Targets{MaxMissedRate: 0.01, MaxFalseDropRate: 0.0001, MemoryBudget: 1 << 30}, seeds: 1},
	{name: "flink-keep-last", yaml: enginesCurve, query: "flink-keep-last", t: Targets{MaxMissedRate: 0.02, MaxFalseDropRate: 0.0001}, seeds: 2},
	{name: "kstreams-stream", yaml: enginesCurve, query: "kstreams-stream", t: Targets{MaxMissedRate: 0.02, MaxFalseDropRate: 0.0001}, seeds: 2},
	{name: "kstreams-partitions-3seeds", yaml: enginesCurve, query: "kstreams-parts", t: Targets{MaxMissedRate: 0.01, MaxFalseDropRate: 0.0001}, seeds: 3},
	{name: "beam-processing-rate", yaml: enginesCurve, query: "beam-processing", t: Targets{MaxMissedRate: 0.02, MaxFalseDropRate: 0.0001, ProductionRate: 80}, seeds: 2},
	{name: "beam-event-quantile", yaml: enginesCurve, query: "beam-event", t: Targets{MaxMissedRate: 0.01, MaxFalseDropRate: 0.0001}, seeds: 3, q: 0.5},
}

// enginesCurve is enginesSmall with a Flink keep-last query, a Kafka
// Streams query over 4 partitions and a Beam event-time query.
const enginesCurve = enginesSmall + `  - name: flink-keep-last
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time DESC) AS rn FROM events) WHERE rn = 1
    options: {table.exec.state.ttl: 2 min}
  - name: kstreams-parts
    engine: kafka-streams
    window: 2 minutes
    time: stream
    partitions: 4
  - name: beam-event
    engine: beam
    timeDomain: event
    duration: 2 minutes
`

// TestCurvePlanEqualsBisection: on every case, the plan that reads the
// one-pass curve recommends what the bisection by simulation (the same
// code path, every delay simulated) recommends, seed by seed, with the
// same rates, spread, binding target and each target's own delay; it
// says it read the curve, with at most one direct run per seed and one
// more (without a budget); and direct runs, made here, show its pick
// meeting the targets on every seed (the quantile's share) and the delay
// below it missing them
// on the seed it names.
func TestCurvePlanEqualsBisection(t *testing.T) {
	for _, c := range curveCases {
		t.Run(c.name, func(t *testing.T) {
			var sc *scenario.Scenario
			if c.file != "" {
				var err error
				if sc, err = scenario.Load(filepath.Join("..", "..", "experiments", c.file)); err != nil {
					t.Fatal(err)
				}
			} else {
				sc = parse(t, c.yaml)
			}
			opts := Options{Seeds: c.seeds, Quantile: c.q, CurveState: c.seeds != 2}
			got, err := Search(context.Background(), sc, c.query, c.t, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.SimulateEach = true
			want, err := Search(context.Background(), sc, c.query, c.t, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Curves) != max(c.seeds, 1) || len(want.Curves) != 0 {
				t.Fatalf("curves: %d with the curve, %d simulating each delay", len(got.Curves), len(want.Curves))
			}
			same := func(what string, a, b any) {
				t.Helper()
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("%s: %v with the curve, %v by bisection", what, a, b)
				}
			}
			dur := func(d *time.Duration) string {
				if d == nil {
					return "none"
				}
				return d.String()
			}
			same("recommended", dur(got.Recommended), dur(want.Recommended))
			for i := range want.Seeds {
				same(fmt.Sprintf("seed %d delay", want.Seeds[i].Seed), dur(got.Seeds[i].Delay), dur(want.Seeds[i].Delay))
				same(fmt.Sprintf("seed %d missed alone", want.Seeds[i].Seed), dur(got.Seeds[i].MissedAlone), dur(want.Seeds[i].MissedAlone))
				same(fmt.Sprintf("seed %d false drops alone", want.Seeds[i].Seed), dur(got.Seeds[i].FalseDropAlone), dur(want.Seeds[i].FalseDropAlone))
				same(fmt.Sprintf("seed %d summary", want.Seeds[i].Seed), got.Seeds[i].At.Summary.PeakStateRows, want.Seeds[i].At.Summary.PeakStateRows)
			}
			same("spread", got.Spread, want.Spread)
			same("binding", got.Binding, want.Binding)
			same("budget exceeded", got.BudgetExceeded, want.BudgetExceeded)
			same("reason", strings.Replace(got.Reason, "by the exact one-pass curve, confirmed by direct runs", "by simulation", 1), want.Reason)
			direct := 0
			for _, s := range got.Seeds {
				direct += s.Simulated
				if !s.FromCurve {
					t.Errorf("seed %d: not from the curve", s.Seed)
				}
			}
			if c.t.MemoryBudget == 0 && direct > len(got.Seeds)+1 {
				t.Errorf("%d direct runs for %d seeds", direct, len(got.Seeds))
			}
			if got.Recommended == nil {
				return
			}
			if got.Below == nil {
				t.Fatal("no delay below the pick was confirmed")
			}
			// Direct runs here: the pick meets on every seed, the one
			// below misses on the seed named.
			met := 0
			for _, s := range got.Seeds {
				q := runAt(t, sc, c.query, c.t, s.Seed, *got.Recommended)
				if q.MissedDuplicateRate <= c.t.MaxMissedRate && q.FalseDropRate <= c.t.MaxFalseDropRate {
					met++
				}
			}
			if share := float64(met) / float64(len(got.Seeds)); share < got.Quantile {
				t.Errorf("the pick %s meets the targets on %d of %d seeds, under the quantile %v", got.Recommended, met, len(got.Seeds), got.Quantile)
			}
			q := runAt(t, sc, c.query, c.t, got.BelowSeed, *got.Below)
			if q.MissedDuplicateRate <= c.t.MaxMissedRate && q.FalseDropRate <= c.t.MaxFalseDropRate {
				t.Errorf("seed %d: %s, below the pick %s, meets the targets", got.BelowSeed, got.Below, got.Recommended)
			}
			if step := *got.Recommended - *got.Below; step > max(time.Second, *got.Recommended/100) {
				t.Errorf("below %s is more than a resolution step under the pick %s", got.Below, got.Recommended)
			}
		})
	}
}

// runAt is a direct run of query on sc's seed seed at delay d (at the
// targets' production rate).
func runAt(t *testing.T, sc *scenario.Scenario, query string, tg Targets, seed uint64, d time.Duration) runnerSummary {
	t.Helper()
	s := *sc
	if tg.ProductionRate > 0 {
		at, err := AtRate(sc, tg.ProductionRate)
		if err != nil {
			t.Fatal(err)
		}
		s = *at
	}
	s.Seed = seed
	for _, q := range sc.Queries {
		if q.Name == query {
			s.Queries = []scenario.Query{q}
		}
	}
	s.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(d)}}
	res, err := runner.Run(context.Background(), &s, runner.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	q := res.Summary.Queries[0]
	return runnerSummary{q.MissedDuplicateRate, q.FalseDropRate}
}

type runnerSummary struct{ MissedDuplicateRate, FalseDropRate float64 }
