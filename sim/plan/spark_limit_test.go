package plan

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/runner/runnertest"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// issue34 loads testdata/issue34-cluster.yaml: issue 34's cluster, small.
func issue34(t *testing.T) *scenario.Scenario {
	t.Helper()
	data, err := os.ReadFile("testdata/issue34-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(data))
}

// TestSparkSearchMeetsBatchLimit: issue 34's cluster, whose rate search
// met dedupsim's limit on a batch's rows (runner.ErrBatchLimit) and
// killed the plan. A rate at which a batch reaches the limit is one at
// which the query falls behind: the search answers, and says that the
// limit, not a measured fall, bounded it. The limit is lowered to 60,000
// rows (30 s of the 2,000/s and its retries) so that the fixture meets it
// in minutes of simulated time, as the issue's 20,000/s for 10 minutes
// met the 5,000,000 of scenario.MaxRowsPerBatch.
func TestSparkSearchMeetsBatchLimit(t *testing.T) {
	sc := issue34(t)
	res := &Result{Query: "within", Point: Point{Delay: time.Minute, HasDelay: true}}
	got, err := Spark(context.Background(), sc, res, SparkOptions{Config: *sc.Spark, Base: runnertest.With(runner.Options{}, runnertest.Hooks{MaxBatchRows: 30_000})})
	if err != nil {
		t.Fatalf("the search died: %v", err)
	}
	t.Logf("%s; %d simulations, %d met the limit", got.Verdict(), got.Simulations, got.LimitedRuns)
	if got.LimitedRuns == 0 {
		t.Fatalf("no simulation met the lowered limit: the test tests nothing")
	}
	if !got.KeepsUp || got.BatchLimited || got.MaxSustainableRate <= got.Rate || got.FallsBehindAbove <= got.MaxSustainableRate {
		t.Errorf("keeps up %v, limited %v, max %v/s, fails above %v/s: want it to keep up at %v/s and a bracket above it",
			got.KeepsUp, got.BatchLimited, got.MaxSustainableRate, got.FallsBehindAbove, got.Rate)
	}
	if got.RateBound == BoundBatchLimit {
		if !strings.Contains(got.Verdict(), "bound by dedupsim's limit, not measured on the cluster") || !strings.Contains(got.json().RateBoundText, "limit of 5,000,000 rows") {
			t.Errorf("verdict %q, json %q: want the limit named", got.Verdict(), got.json().RateBoundText)
		}
	}
}

// TestSparkBoundText: each bound of the rate search is said in words, and
// a bound that is dedupsim's own (its limit on a batch's rows, on a cost,
// or the search's) says that it is not the cluster's.
func TestSparkBoundText(t *testing.T) {
	for _, c := range []struct {
		bound string
		max   float64
		want  string
	}{
		{BoundCluster, 5000, "falls behind above it (at 5,100/s)"},
		{BoundMemory, 5000, "memory-bound: above it the state does not fit in the 2.00 GiB executor memory (at 5,100/s it does not)"},
		{BoundBatchLimit, 5000, "bound by dedupsim's limit, not measured on the cluster: at 5,100/s a batch reached dedupsim's limit of 5,000,000 rows, read as falling behind"},
		{BoundCostLimit, 5000, "bound by dedupsim's limit, not the cluster: it kept up at every rate tried"},
		{BoundSearch, 5000, "bound by the search, not the cluster: it kept up at every rate tried, up to 2^20 times the planned rate"},
		{BoundMemory, 0, "the state does not fit in the executor memory at any rate tried"},
		{BoundCluster, 5099, "falls behind above it (at 5,100/s)"},
		{BoundCluster, 1_440_000, "falls behind above it (at 1,445,313/s)"},
		{BoundBatchLimit, 0, "falls behind at any rate tried: a batch reached dedupsim's limit of 5,000,000 rows"},
	} {
		s := &SparkResult{RateBound: c.bound, MaxSustainableRate: c.max, FallsBehindAbove: 5100, ExecutorMemoryBytes: 2 << 30}
		if c.max > 1e6 {
			s.FallsBehindAbove = 1_445_312.5
		}
		if got := s.BoundText(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s, max %v: %q, want %q", c.bound, c.max, got, c.want)
		}
		if got := s.json().RateBoundText; got != s.BoundText() || s.json().RateBound != c.bound {
			t.Errorf("%s: plan.json's rateBound %q, rateBoundText %q", c.bound, s.json().RateBound, got)
		}
	}
}

// TestSparkMemoryScaleMatchesSimulation: the memory the rate search reads
// at k times the planned rate (every key count multiplied by k,
// sparkmodel.Config.CountScale) against a direct simulation at that
// rate: within 5% for the HDFS-backed store's heap, whose every term is
// linear in the counts.
func TestSparkMemoryScaleMatchesSimulation(t *testing.T) {
	const cost = "{batchOverheadMs: 150, rowNs: 20000, newKeyNs: 30000, scanKeyNs: 3000, removeKeyNs: 40000, partitionCommitMs: 5}"
	direct, err := runner.Run(context.Background(), parse(t, rateScenario(800, cost)), runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := direct.Close(); err != nil {
		t.Fatal(err)
	}
	want := direct.Summary.Queries[0].SparkSummary.ExecutorPeakMemoryBytes
	sc := parse(t, rateScenario(200, cost))
	sc.Spark.CountScale = 4
	scaled, err := runner.Run(context.Background(), sc, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := scaled.Close(); err != nil {
		t.Fatal(err)
	}
	got := scaled.Summary.Queries[0].SparkSummary.ExecutorPeakMemoryBytes
	t.Logf("heap at 800/s: direct %d, 200/s with counts x 4: %d", want, got)
	if math.Abs(float64(got-want)) > 0.05*float64(want) {
		t.Errorf("heap at 800/s: scaled %d B, direct %d B: want within 5%%", got, want)
	}
}

// TestSparkRateBoundedByMemory: with an executor memory of 3 times the
// state at the planned 200/s, the largest sustainable rate is bounded by
// memory, not by the cluster (which keeps up at 800/s,
// TestSparkRateScalingMatchesSimulation): the HDFS-backed store's heap is
// linear in the key counts, so the bound is 3 x 200/s = 600/s, within the
// search's 1% and the rounding of counts. The state at that rate fits,
// and is printed beside it.
func TestSparkRateBoundedByMemory(t *testing.T) {
	sc := parse(t, rateScenario(200, "{batchOverheadMs: 150, rowNs: 20000, newKeyNs: 30000, scanKeyNs: 3000, removeKeyNs: 40000, partitionCommitMs: 5}"))
	res := &Result{Query: "within", Point: Point{Delay: time.Minute, HasDelay: true}}
	at, err := Spark(context.Background(), sc, res, SparkOptions{Config: *sc.Spark})
	if err != nil {
		t.Fatal(err)
	}
	if at.ExecutorMemorySource != "Spark's default spark.executor.memory" || at.ExecutorMemoryBytes != 1<<30 || at.MemoryAtMaxRateBytes > 1<<30 {
		t.Errorf("no memory stated: %d B from %q, %d B at the largest rate; want 1 GiB, Spark's default, and a state that fits", at.ExecutorMemoryBytes, at.ExecutorMemorySource, at.MemoryAtMaxRateBytes)
	}
	mem := 3 * at.ExecutorPeakMemoryBytes
	got, err := Spark(context.Background(), sc, res, SparkOptions{Config: *sc.Spark, ExecutorMemory: mem, ExecutorMemorySource: "--executor-memory"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", got.Verdict())
	if got.RateBound != BoundMemory || got.MaxSustainableRate < 0.97*600 || got.MaxSustainableRate > 600*1.01 {
		t.Errorf("bound %q at %v/s: want memory, at 600/s within 3%% below and 1%% above", got.RateBound, got.MaxSustainableRate)
	}
	if got.MemoryAtMaxRateBytes > mem || got.MemoryAtMaxRateBytes < mem*95/100 {
		t.Errorf("state at the largest rate %d B: want at most the executor memory, %d B, and within 5%% of it", got.MemoryAtMaxRateBytes, mem)
	}
	if v := got.Verdict(); !strings.Contains(v, "memory-bound: above it the state does not fit") || !strings.Contains(v, fmt.Sprintf(" of the %s executor memory; largest sustainable rate ", interval.Bytes(mem))) {
		t.Errorf("verdict %q", v)
	}
}

// TestSparkSearchStopsBelowTheCostBound: a per-row cost of 0.1 s
// (rowNs 1e8) at 1/s keeps up at 10 times the rate, where the cost
// multiplied by k reaches sparkmodel.MaxCost (1e9 ns), the bound past
// which the model's durations are not trusted (a scenario may not ask
// for more). The search stops there, below the bound, and says that
// dedupsim's limit, not the cluster, bounded it: kept up at every rate
// tried, up to 10/s. (Past the bound the search went on to 19.6/s.)
func TestSparkSearchStopsBelowTheCostBound(t *testing.T) {
	sc := parse(t, rateScenario(1, "{rowNs: 100000000}"))
	res := &Result{Query: "within", Point: Point{Delay: time.Minute, HasDelay: true}}
	got, err := Spark(context.Background(), sc, res, SparkOptions{Config: *sc.Spark})
	if err != nil {
		t.Fatalf("the search died: %v", err)
	}
	t.Log(got.Verdict())
	if got.RateBound != BoundCostLimit || !got.MaxSustainableRateBounded || math.Abs(got.MaxSustainableRate-10) > 1e-6 {
		t.Errorf("bound %q, bounded %v, max %v/s: want cost-limit, true, 10/s", got.RateBound, got.MaxSustainableRateBounded, got.MaxSustainableRate)
	}
	if !strings.Contains(got.Verdict(), "bound by dedupsim's limit, not the cluster") {
		t.Errorf("verdict %q", got.Verdict())
	}
}
