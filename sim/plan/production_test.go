package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// productionCases are small scenarios planned at a production rate
// several times theirs: capacity-plan's workload, one whose bad clocks
// (futureTimestamps) come with the traffic, and one with a long retry
// tail. RATE is replaced by the scenario's rate, or the production rate.
var productionCases = []struct {
	name, yaml, query string
	rate, production  float64
	t                 Targets
}{
	{"capacity-plan", `
name: capacity-plan-small
seed: 42
duration: 30m
trigger: 10s
workload:
  rate: RATE
  ids: uuid
  customers: 10000
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.05
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 30s, p99: 5m}
    timestamp: restamp
queries:
  - name: within-watermark
    query: withWatermark("event_time", "5 minutes").dropDuplicatesWithinWatermark(["event_id"])
`, "within-watermark", 20, 60, Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001}},
	// A bad clock stamps 1 row in 10,000 up to 3 minutes ahead: at 30/s
	// a run sees about 3, at 300/s about 30, and the longest lead
	// decides the delay (the watermark runs ahead of the traffic by the
	// lead minus the delay, and drops what arrives meanwhile).
	{"future-timestamps", `
name: future-clocks
seed: 11
duration: 15m
trigger: 10s
workload:
  rate: RATE
  ids: uuid
  arrivalDelay: {dist: exponential, mean: 1s}
  retries:
    probability: 0.05
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 10s, p99: 1m}
    timestamp: restamp
  futureTimestamps:
    probability: 0.0001
    skew: {dist: uniform, min: 30s, max: 3m}
queries:
  - name: within-watermark
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
`, "within-watermark", 30, 300, Targets{MaxMissedRate: 0.01, MaxFalseDropRate: 0.0001}},
	{"long-retry-tail", `
name: long-retry-tail
seed: 3
duration: 40m
trigger: 10s
workload:
  rate: RATE
  ids: uuid
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.1
    copies: {dist: geometric, mean: 2}
    delay: {dist: lognormal, median: 30s, p99: 10m}
    timestamp: restamp
queries:
  - name: within-watermark
    query: withWatermark("event_time", "5 minutes").dropDuplicatesWithinWatermark(["event_id"])
`, "within-watermark", 10, 40, Targets{MaxMissedRate: 0.01, MaxFalseDropRate: 0.0001}},
}

// TestPlanMeetsTargetsAtProductionRate: for each production case, the
// delay plan recommends at the production rate meets its targets in a
// direct run of the scenario written at that rate, on every seed the
// plan used. Before, the search ran at the scenario's rate and scaled
// the state: with bad clocks that come with the traffic, its delay
// missed the false-drop target at the production rate.
func TestPlanMeetsTargetsAtProductionRate(t *testing.T) {
	for _, c := range productionCases {
		t.Run(c.name, func(t *testing.T) {
			at := func(r float64) *scenario.Scenario {
				return parse(t, strings.Replace(c.yaml, "RATE", fmt.Sprintf("%g/s", r), 1))
			}
			tg := c.t
			tg.ProductionRate = c.production
			res, err := Search(context.Background(), at(c.rate), c.query, tg, Options{Seeds: 2})
			if err != nil {
				t.Fatal(err)
			}
			if res.Recommended == nil {
				t.Fatalf("no recommendation: %s", res.Reason)
			}
			d := *res.Recommended
			for _, sr := range res.Seeds {
				sc := at(c.production)
				sc.Seed = sr.Seed
				sc.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(d)}}
				r, err := runner.Run(context.Background(), sc, runner.Options{})
				if err != nil {
					t.Fatal(err)
				}
				q := r.Summary.Queries[0]
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if q.MissedDuplicateRate > c.t.MaxMissedRate || q.FalseDropRate > c.t.MaxFalseDropRate {
					t.Errorf("seed %d at %s and %g/s: missed %.4f%%, false drops %.4f%%; targets %.4f%%, %.4f%%",
						sr.Seed, d, c.production, 100*q.MissedDuplicateRate, 100*q.FalseDropRate, 100*c.t.MaxMissedRate, 100*c.t.MaxFalseDropRate)
				}
				t.Logf("seed %d at %s: missed %.4f%% (%d of %d), false drops %.4f%% (%d)", sr.Seed, d,
					100*q.MissedDuplicateRate, q.MissedDuplicates, q.TrueDuplicates, 100*q.FalseDropRate, q.FalseDrops)
			}
		})
	}
}

// TestPlanNotesAtTheRecommendation: with several seeds, every note is
// about the recommended delay, not the first seed's own: the key-horizon
// note names the recommendation's horizon (2 x delay + trigger) and the
// copies note its delay. Before, the notes were the first seed's, at its
// own smaller delay.
func TestPlanNotesAtTheRecommendation(t *testing.T) {
	sc := parse(t, strings.Replace(knownGaps, "duration: 10m", "duration: 6m", 1))
	r, err := Search(context.Background(), sc, "within-watermark", Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001}, Options{Seeds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended == nil || r.Seeds[0].Delay == nil || *r.Seeds[0].Delay == *r.Recommended {
		t.Fatalf("want a recommendation other than the first seed's own delay: %s", r.Reason)
	}
	d := *r.Recommended
	horizon := fmt.Sprintf("key horizon (%s)", fmtDelay(2*d+sc.Trigger.Std()))
	copies := fmt.Sprintf("at %s, each seed's missed rate", fmtDelay(d))
	var sawH, sawC bool
	for _, n := range r.Notes {
		sawH = sawH || strings.Contains(n, horizon)
		sawC = sawC || strings.Contains(n, copies)
		if strings.Contains(n, "key horizon (") && !strings.Contains(n, horizon) {
			t.Errorf("note at another delay than %s: %s", d, n)
		}
	}
	if !sawH || !sawC {
		t.Errorf("want notes with %q and %q; got %q", horizon, copies, r.Notes)
	}
}
