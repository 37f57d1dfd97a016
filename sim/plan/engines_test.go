package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// enginesSmall is engines-horizon's traffic, shortened: 20 events/s for
// 20 minutes, 5% resent with gaps of median 30s and p99 5m, through a
// Flink keep-first query (proctime, state TTL), a Kafka Streams window
// store and a Beam processing-time dedup.
const enginesSmall = `
name: engines-small
seed: 42
duration: 20m
trigger: 10s
workload:
  rate: 20/s
  ids: uuid
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.05
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 30s, p99: 5m}
    timestamp: restamp
queries:
  - name: flink-keep-first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1
    options: {table.exec.state.ttl: 2 min}
  - name: kstreams-stream
    engine: kafka-streams
    window: 2 minutes
    time: stream
  - name: beam-processing
    engine: beam
    timeDomain: processing
    duration: 2 minutes
`

// directRun runs query of sc alone at horizon d (a sweep of one value,
// as plan's simulations) and returns its rates.
func directRun(t *testing.T, sc *scenario.Scenario, query string, d time.Duration) (missed, drops float64) {
	t.Helper()
	q := directSummary(t, sc, query, d)
	return q.MissedDuplicateRate, q.FalseDropRate
}

// directSummary runs query of sc alone at horizon d, as directRun, and
// returns its summary.
func directSummary(t *testing.T, sc *scenario.Scenario, query string, d time.Duration) metrics.QuerySummary {
	t.Helper()
	c := *sc
	c.Queries = nil
	for _, q := range sc.Queries {
		if q.Name == query {
			c.Queries = append(c.Queries, q)
		}
	}
	c.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(d)}}
	r, err := runner.Run(context.Background(), &c, runner.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := r.Summary.Queries[0]
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return q
}

// TestPlanOtherEngines: plan searches the horizon of a Flink keep-first
// query (its state TTL), a Kafka Streams query (its window) and a Beam
// query (its duration) by simulation, and names it; direct runs of the
// scenario with the horizon set as a sweep sets it confirm the answer:
// the recommended value meets the targets, the one a resolution below it
// does not. Before, plan refused every query but Spark's.
func TestPlanOtherEngines(t *testing.T) {
	tg := Targets{MaxMissedRate: 0.02, MaxFalseDropRate: 0.0001}
	for _, c := range []struct{ query, param, engine string }{
		{"flink-keep-first", "state TTL", "flink"},
		{"kstreams-stream", "window", "kafka-streams"},
		{"beam-processing", "duration", "beam"},
	} {
		t.Run(c.query, func(t *testing.T) {
			sc := parse(t, enginesSmall)
			r, err := Search(context.Background(), sc, c.query, tg, Options{Seeds: 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Recommended == nil {
				t.Fatalf("no recommendation: %s", r.Reason)
			}
			if r.Parameter != c.param || r.Engine != c.engine || r.ModelOK {
				t.Errorf("parameter %q, engine %q, model %v; want %q, %q, no model", r.Parameter, r.Engine, r.ModelOK, c.param, c.engine)
			}
			if want := fmtDelay(*r.Recommended) + " is the smallest " + c.param + " meeting"; !strings.HasPrefix(r.Reason, want) {
				t.Errorf("reason %q; want it to start %q", r.Reason, want)
			}
			d := *r.Recommended
			if m, f := directRun(t, sc, c.query, d); m > tg.MaxMissedRate || f > tg.MaxFalseDropRate {
				t.Errorf("at %s: missed %.4f%%, false drops %.4f%%: the recommendation misses the targets", d, 100*m, 100*f)
			}
			if r.Resolution <= 0 || r.Resolution >= d {
				t.Fatalf("resolution %s at %s: want a bisected step below the recommendation", r.Resolution, d)
			}
			below := d - r.Resolution
			if m, f := directRun(t, sc, c.query, below); m <= tg.MaxMissedRate && f <= tg.MaxFalseDropRate {
				t.Errorf("at %s (one step below %s): missed %.4f%%, false drops %.4f%%: meets the targets, so %s is not the smallest", below, d, 100*m, 100*f, d)
			}
			var b strings.Builder
			if err := r.WriteText(&b, "engines-small.yaml", sc.Seed); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"  " + c.param + "  ", fmtDelay(d) + " recommended", "no closed-form model for this engine"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, b.String())
				}
			}
			if strings.Contains(b.String(), "HDFS") {
				t.Errorf("text quotes Spark's state store:\n%s", b.String())
			}
			t.Logf("%s %s; %s", c.param, fmtDelay(d), r.Reason)
		})
	}
}

// TestPlanOtherEnginesRefusesBudget: a memory budget bounds modelled
// state bytes; plan refuses it in one line for a Kafka Streams or a Beam
// query, whose state bytes are not modelled (their summaries hold 0),
// rather than judge what it does not model.
func TestPlanOtherEnginesRefusesBudget(t *testing.T) {
	sc := parse(t, enginesSmall)
	for _, q := range []string{"kstreams-stream", "beam-processing"} {
		_, err := Search(context.Background(), sc, q, Targets{MaxMissedRate: 0.02, MemoryBudget: 1 << 20}, Options{})
		if err == nil || !strings.Contains(err.Error(), "memory budget") || !strings.Contains(err.Error(), "not modelled") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want a one-line refusal of the memory budget, got %v", q, err)
		}
	}
}

// TestPlanFlinkMemoryBudget: for a Flink query the memory budget bounds
// the peak of its modelled heap state bytes. Without a budget plan picks
// the TTL d; direct runs give the peak bytes at d. A budget of exactly
// that peak is met: d is recommended. One byte less fails the plan (no
// TTL meeting the rates fits, the budget binds), and the largest TTL plan
// names as fitting does fit the budget in a direct run and misses the
// rate target there, as every TTL below d must.
func TestPlanFlinkMemoryBudget(t *testing.T) {
	sc := parse(t, enginesSmall)
	tg := Targets{MaxMissedRate: 0.02, MaxFalseDropRate: 0.0001}
	r, err := Search(context.Background(), sc, "flink-keep-first", tg, Options{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended == nil {
		t.Fatalf("no recommendation: %s", r.Reason)
	}
	d := *r.Recommended
	peak := directSummary(t, sc, "flink-keep-first", d).PeakStateBytes
	if peak <= 0 {
		t.Fatalf("at %s: peak state bytes %d, want the heap estimate", d, peak)
	}

	tg.MemoryBudget = peak
	r, err = Search(context.Background(), sc, "flink-keep-first", tg, Options{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended == nil || *r.Recommended != d || r.BudgetExceeded || !strings.Contains(r.Reason, "; its modelled peak state, ") {
		t.Errorf("budget %d (the peak at %s): recommended %v, over budget %v: %s", peak, d, r.Recommended, r.BudgetExceeded, r.Reason)
	}

	tg.MemoryBudget = peak - 1
	r, err = Search(context.Background(), sc, "flink-keep-first", tg, Options{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended != nil || !r.BudgetExceeded || r.Binding != BindMemoryBudget {
		t.Fatalf("budget %d: recommended %v, over budget %v, binding %q; want none, over budget, memoryBudget: %s", peak-1, r.Recommended, r.BudgetExceeded, r.Binding, r.Reason)
	}
	for _, want := range []string{"over budget: " + fmtDelay(d) + " is the smallest state TTL meeting", "modelled peak state (an estimate of Flink's heap or RocksDB backend, as the query sets it, not a measurement)", "The largest state TTL simulated that fits is "} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, r.Reason)
		}
	}
	_, rest, _ := strings.Cut(r.Reason, "The largest state TTL simulated that fits is ")
	fit, _, _ := strings.Cut(rest, " ")
	dur, err := interval.Parse(fit)
	if err != nil {
		t.Fatalf("the fitting TTL %q: %v", fit, err)
	}
	q := directSummary(t, sc, "flink-keep-first", dur)
	if q.PeakStateBytes > tg.MemoryBudget || q.MissedDuplicateRate <= tg.MaxMissedRate || dur >= d {
		t.Errorf("at %s (below %s?): peak %d against the budget %d, missed %.4f%%: want it to fit and miss the target", dur, d, q.PeakStateBytes, tg.MemoryBudget, 100*q.MissedDuplicateRate)
	}
	t.Logf("TTL %s, peak %d bytes; fitting %s, peak %d, missed %.4f%%", d, peak, dur, q.PeakStateBytes, 100*q.MissedDuplicateRate)
}

// TestPlanFlinkRowtimeSeeds: a Flink rowtime keep-first query planned
// over two seeds: the recommendation is the larger of the seeds' own
// TTLs, and a direct run at it meets the targets on every seed.
func TestPlanFlinkRowtimeSeeds(t *testing.T) {
	sc := parse(t, rowtime(enginesSmall, "ASC"))
	tg := Targets{MaxMissedRate: 0.02, MaxFalseDropRate: 0.0001}
	r, err := Search(context.Background(), sc, "flink-keep-first", tg, Options{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended == nil || len(r.Seeds) != 2 || r.Seeds[0].Delay == nil || r.Seeds[1].Delay == nil {
		t.Fatalf("want a recommendation and both seeds' TTLs: %s", r.Reason)
	}
	d := *r.Recommended
	if want := max(*r.Seeds[0].Delay, *r.Seeds[1].Delay); d != want {
		t.Errorf("recommended %s; want the larger seed's TTL %s", d, want)
	}
	if !strings.HasPrefix(r.Reason, fmtDelay(d)+" is the smallest state TTL meeting") || r.ModelOK {
		t.Errorf("reason %q, model %v", r.Reason, r.ModelOK)
	}
	for _, sr := range r.Seeds {
		c := *sc
		c.Seed = sr.Seed
		if m, f := directRun(t, &c, "flink-keep-first", d); m > tg.MaxMissedRate || f > tg.MaxFalseDropRate {
			t.Errorf("seed %d at %s: missed %.4f%%, false drops %.4f%%", sr.Seed, d, 100*m, 100*f)
		}
	}
	t.Logf("%s; %s", fmtDelay(d), r.Reason)
}

// TestPlanFlinkKeepLastUnreachable: a rowtime keep-last query emits an
// update for every copy, so no TTL meets a missed-duplicate target: plan
// says so, naming the TTL, and recommends nothing.
func TestPlanFlinkKeepLastUnreachable(t *testing.T) {
	sc := parse(t, rowtime(enginesSmall, "DESC"))
	r, err := Search(context.Background(), sc, "flink-keep-first", Targets{MaxMissedRate: 0.02, MaxFalseDropRate: 0.0001}, Options{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended != nil || !strings.Contains(r.Reason, "unreachable: the missed-duplicate rate does not fall as the state TTL grows") {
		t.Errorf("recommended %v: %s", r.Recommended, r.Reason)
	}
}

// rowtime turns enginesSmall's Flink query into a rowtime one ordered
// dir (ASC: keep-first, DESC: keep-last), on Flink 2.0.
func rowtime(yaml, dir string) string {
	yaml = strings.Replace(yaml, "ORDER BY proc_time ASC", "ORDER BY event_time "+dir, 1)
	return strings.Replace(yaml, "options: {table.exec.state.ttl: 2 min}", `options: {table.exec.state.ttl: 2 min, watermark: 10 s, version: "2.0"}`, 1)
}
