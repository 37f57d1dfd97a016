package plan

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/sim/runner"
)

// rateScenario is a within-watermark dedup at rate, on a cluster of 16
// partitions over 1 x 4 slots, with the given cost block.
func rateScenario(rate int, cost string) string {
	return fmt.Sprintf(`name: rate
seed: 3
duration: 20m
trigger: 10s
workload:
  rate: %d/s
  ids: uuid
  arrivalDelay: {dist: exponential, mean: 2s}
  retries: {probability: 0.05, copies: {dist: geometric, mean: 1.5}, delay: {dist: lognormal, median: 10s, p99: 1m}, timestamp: restamp}
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
spark:
  partitions: 16
  executors: 1
  coresPerExecutor: 4
  cost: %s
`, rate, cost)
}

// TestSparkRateScalingMatchesSimulation measures the rate-cost scaling
// the search for the largest sustainable rate relies on against a direct
// simulation: the batches of the query at 800/s are timed as those at
// 200/s with 4 times the per-row and per-key costs (what the search runs
// at k = 4 from a planned 200/s). In a regime that keeps up the batch
// percentiles agree within 5%; in one that falls behind (a heavy scan)
// both fall behind, within two triggers of each other. And Spark at
// Rate 800 is the direct run itself, memory included.
func TestSparkRateScalingMatchesSimulation(t *testing.T) {
	for _, c := range []struct {
		name         string
		cost, costX4 string
		fall         bool
	}{
		{"keeps up", "{batchOverheadMs: 150, rowNs: 20000, newKeyNs: 30000, scanKeyNs: 3000, removeKeyNs: 40000, partitionCommitMs: 5}",
			"{batchOverheadMs: 150, rowNs: 80000, newKeyNs: 120000, scanKeyNs: 12000, removeKeyNs: 160000, partitionCommitMs: 5}", false},
		{"falls behind", "{batchOverheadMs: 150, rowNs: 20000, newKeyNs: 30000, scanKeyNs: 500000, removeKeyNs: 40000, partitionCommitMs: 5}",
			"{batchOverheadMs: 150, rowNs: 80000, newKeyNs: 120000, scanKeyNs: 2000000, removeKeyNs: 160000, partitionCommitMs: 5}", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			direct, err := runner.Run(context.Background(), parse(t, rateScenario(800, c.cost)), runner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := direct.Close(); err != nil {
				t.Fatal(err)
			}
			want := direct.Summary.Queries[0].SparkSummary
			res := &Result{Query: "within", Point: Point{Delay: time.Minute, HasDelay: true}}
			base := parse(t, rateScenario(200, c.costX4))
			got, err := Spark(context.Background(), base, res, SparkOptions{Config: *base.Spark})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("direct at 800/s: p50 %v ms, p99 %v ms, falling behind since %v; 200/s with 4 x the costs: p50 %v, p99 %v, since %v",
				want.BatchDurationMs.P50, want.BatchDurationMs.P99, fmtPtr(want.FallingBehindSinceSeconds), got.BatchP50Ms, got.BatchP99Ms, fmtPtr(got.FallingBehindSinceSeconds))
			if got.KeepsUp != (want.FallingBehindSinceSeconds == nil) || got.KeepsUp == c.fall {
				t.Fatalf("scaled keeps up %v, direct falls behind since %v; want both to fall behind: %v", got.KeepsUp, fmtPtr(want.FallingBehindSinceSeconds), c.fall)
			}
			if c.fall {
				if d := math.Abs(*got.FallingBehindSinceSeconds - *want.FallingBehindSinceSeconds); d > 20 {
					t.Errorf("falls behind from %v s scaled, %v s direct: want within two triggers", *got.FallingBehindSinceSeconds, *want.FallingBehindSinceSeconds)
				}
				return
			}
			for _, p := range []struct {
				name      string
				got, want float64
			}{{"p50", got.BatchP50Ms, want.BatchDurationMs.P50}, {"p99", got.BatchP99Ms, want.BatchDurationMs.P99}} {
				if math.Abs(p.got-p.want) > 0.05*p.want {
					t.Errorf("batch %s: scaled %v ms, direct %v ms: want within 5%%", p.name, p.got, p.want)
				}
			}
			// Planned at 800/s, Spark simulates at 800/s: the direct run's
			// numbers, memory included.
			base = parse(t, rateScenario(200, c.cost))
			at, err := Spark(context.Background(), base, res, SparkOptions{Config: *base.Spark, Rate: 800})
			if err != nil {
				t.Fatal(err)
			}
			if at.ExecutorPeakMemoryBytes != want.ExecutorPeakMemoryBytes || at.BatchP99Ms != want.BatchDurationMs.P99 || at.MaxSustainableRate <= 800 {
				t.Errorf("planned at 800/s: heap %d, p99 %v ms, max %v/s; direct: %d, %v ms, and a max above 800/s", at.ExecutorPeakMemoryBytes, at.BatchP99Ms, at.MaxSustainableRate, want.ExecutorPeakMemoryBytes, want.BatchDurationMs.P99)
			}
		})
	}
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

// TestSparkFixedCostsOverrun checks a cluster whose batch overhead alone
// exceeds the trigger: it falls behind at any rate.
func TestSparkFixedCostsOverrun(t *testing.T) {
	base := parse(t, rateScenario(200, "{batchOverheadMs: 12000}"))
	res := &Result{Query: "within", Point: Point{Delay: time.Minute, HasDelay: true}}
	got, err := Spark(context.Background(), base, res, SparkOptions{Config: *base.Spark})
	if err != nil {
		t.Fatal(err)
	}
	if got.KeepsUp || got.MaxSustainableRate != 0 || got.Simulations != 1+MaxRateDoublings {
		t.Errorf("keeps up %v, max %v, %d simulations; want false, 0, %d", got.KeepsUp, got.MaxSustainableRate, got.Simulations, 1+MaxRateDoublings)
	}
	if v := got.Verdict(); !strings.HasPrefix(v, "falls behind at 200/s from 10 s (p99 batch 12 s of a 10 s trigger), state ") ||
		!strings.HasSuffix(v, " of the 1.00 GiB executor memory; falls behind at any rate: the batch overhead and commits alone overrun the trigger") {
		t.Errorf("verdict %q", v)
	}
}
