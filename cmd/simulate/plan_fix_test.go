package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// withBlock writes testdata/plan-spark.yaml with extra appended (a spark:
// block, more queries) to a temporary file and returns its path.
func withBlock(t *testing.T, extra string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "plan-spark.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "plan-spark.yaml")
	if err := os.WriteFile(p, append(data, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanProviderWithEmptyCost: a scenario whose spark: block says
// provider: rocksdb with cost: {} planned with --provider hdfs takes
// HDFS's default costs, and says they are the defaults (estimates).
// Before, the loader's RocksDB defaults stayed and the note was dropped.
func TestPlanProviderWithEmptyCost(t *testing.T) {
	sc := withBlock(t, "spark:\n  partitions: 4\n  provider: rocksdb\n  cost: {}\n")
	hdfs := runPlanSpark(t, sc, "--provider", "hdfs")
	rocks := runPlanSpark(t, sc)
	for _, c := range []struct {
		name string
		got  planSpark
	}{{"hdfs", hdfs}, {"rocksdb", rocks}} {
		want := sparkmodel.DefaultCosts(c.name)
		if !c.got.DefaultCosts || c.got.Provider != c.name || c.got.Cost["newKeyNs"] != want.NewKeyNs || c.got.Cost["scanKeyNs"] != want.ScanKeyNs {
			t.Errorf("%s: provider %s, defaultCosts %v, cost %v; want %s's defaults %+v, marked as defaults", c.name, c.got.Provider, c.got.DefaultCosts, c.got.Cost, c.name, want)
		}
	}
	code, stdout, stderr := simulate(t, "plan", sc, "--query", "within", "--seeds", "1", "-q", "--provider", "hdfs")
	if code != 0 || !strings.Contains(stdout, "hdfs's default costs, estimates until calibrated") {
		t.Errorf("exit %d (%s): the text lacks the estimates note:\n%s", code, stderr, stdout)
	}
	// A term written stays; the others are the planned provider's.
	part := runPlanSpark(t, withBlock(t, "spark:\n  partitions: 4\n  provider: rocksdb\n  cost:\n    scanKeyNs: 1234\n"), "--provider", "hdfs")
	if part.DefaultCosts || part.Cost["scanKeyNs"] != 1234 || part.Cost["newKeyNs"] != sparkmodel.DefaultCosts("hdfs").NewKeyNs {
		t.Errorf("one term written: %+v; want scanKeyNs 1234 and HDFS's other defaults", part)
	}
}

// TestPlanRocksDBMemoryAtProductionRate: the executor memory plan prints
// at --production-rate is a run's at that rate, byte for byte, not the
// scenario's scaled linearly (RocksDB's block cache is capped per
// instance and its memtables are per instance: at 6 times the rate the
// scaled figure was several times the simulated one).
func TestPlanRocksDBMemoryAtProductionRate(t *testing.T) {
	const block = "spark:\n  partitions: 8\n  provider: rocksdb\n  executors: 2\n  coresPerExecutor: 2\n"
	sc := withBlock(t, block)
	var plan struct {
		RecommendedDelaySeconds *float64   `json:"recommendedDelaySeconds"`
		Spark                   *planSpark `json:"spark"`
	}
	code, stdout, stderr := simulate(t, "plan", sc, "--query", "within", "--seeds", "1", "-q", "--json", "--production-rate", "600/s")
	if code != 0 || json.Unmarshal([]byte(stdout), &plan) != nil || plan.RecommendedDelaySeconds == nil || plan.Spark == nil {
		t.Fatalf("exit %d (%s): %s", code, stderr, stdout)
	}
	got := *plan.Spark
	// The same scenario written at 600/s, run at the recommended delay.
	data, err := os.ReadFile(sc)
	if err != nil {
		t.Fatal(err)
	}
	direct := filepath.Join(t.TempDir(), "at600.yaml")
	if err := os.WriteFile(direct, []byte(strings.Replace(string(data), "rate: 100/s", "rate: 600/s", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	delay := fmt.Sprintf("%gs", *plan.RecommendedDelaySeconds)
	if code, _, stderr := simulate(t, "sweep", direct, "--delay", delay, "--out", out, "--no-report", "-q"); code != 0 {
		t.Fatalf("run at 600/s: exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Queries []struct {
			ExecutorPeakMemoryBytes int64 `json:"executorPeakMemoryBytes"`
			ExecutorPeakDiskBytes   int64 `json:"executorPeakDiskBytes"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil || len(sum.Queries) != 1 {
		t.Fatalf("summary: %v", err)
	}
	run := sum.Queries[0]
	if got.ExecutorPeakMemoryBytes != run.ExecutorPeakMemoryBytes || got.ExecutorPeakDiskBytes != run.ExecutorPeakDiskBytes || got.RatePerSecond != 600 {
		t.Errorf("plan at 600/s: memory %d, disk %d (rate %v); a run at 600/s and %s: %d, %d", got.ExecutorPeakMemoryBytes, got.ExecutorPeakDiskBytes, got.RatePerSecond, delay, run.ExecutorPeakMemoryBytes, run.ExecutorPeakDiskBytes)
	}
}

// TestPlanNeverShrinksExits2: a query whose state never shrinks (a
// watermark but dropDuplicates without the event time) has no answer, as
// plan's help says: exit 2, no recommendation, and why. Before, it
// exited 0 with a delay.
func TestPlanNeverShrinksExits2(t *testing.T) {
	sc := withBlock(t, "  - name: global\n    query: withWatermark(\"event_time\", \"1 minute\").dropDuplicates([\"event_id\"])\n")
	code, stdout, stderr := simulate(t, "plan", sc, "--query", "global", "--seeds", "2", "-q", "--json")
	var j struct {
		RecommendedDelaySeconds *float64 `json:"recommendedDelaySeconds"`
		Reason                  string   `json:"reason"`
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatalf("exit %d (%s): %v", code, stderr, err)
	}
	if code != exitNoPlan || j.RecommendedDelaySeconds != nil || !strings.Contains(j.Reason, "never shrinks") {
		t.Errorf("exit %d, recommended %v, reason %q; want 2, none, and that the state never shrinks", code, j.RecommendedDelaySeconds, j.Reason)
	}
}

// TestPlanProductionRateTooHigh: a production rate the simulator cannot
// run is refused in one line naming the limit, exit 1, nothing on
// stdout. Before, 1e15/s printed -9223372036854775808 B.
func TestPlanProductionRateTooHigh(t *testing.T) {
	for _, rate := range []string{"1e15/s", "1e30/s"} {
		code, stdout, stderr := simulate(t, "plan", filepath.Join("testdata", "plan-spark.yaml"), "--query", "within", "--seeds", "1", "-q", "--production-rate", rate)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "which the simulator cannot run") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1, nothing, one line naming the limit", rate, code, stdout, stderr)
		}
	}
}
