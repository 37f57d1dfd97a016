package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPlanWithoutSparkIsUnchanged checks that a plan without a spark:
// block and without the cluster flags prints what plan printed before the
// flags existed: testdata/plan-nospark.* were written by the commit before
// them (ae79f1c) with the commands below (the seeds of the last one run
// one after the other, --workers 1, which changes no output: concurrent
// runs in one process can race in the runner's sweep of its scratch
// folders, which removed a live run's folder once). plan-nospark-rate.txt
// was rewritten when --production-rate came to be simulated rather than
// scaled (at 300/s, to keep the test short), and all three when the notes
// came to count the copies a rate rests on. They run with --simulate-each,
// the search by simulation these files were written by (the one-pass
// curve gives the same answers, sim/plan's TestCurvePlanEqualsBisection,
// and says so in its own words).
func TestPlanWithoutSparkIsUnchanged(t *testing.T) {
	t.Chdir("testdata")
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"plan-nospark.txt", []string{"plan", "plan-spark.yaml", "--query", "within", "--seeds", "1", "-q", "--simulate-each"}},
		{"plan-nospark.json", []string{"plan", "plan-spark.yaml", "--query", "within", "--seeds", "1", "-q", "--json", "--simulate-each"}},
		{"plan-nospark-rate.txt", []string{"plan", "plan-spark.yaml", "--query", "within", "--seeds", "2", "--production-rate", "300/s", "-q", "--workers", "1", "--simulate-each"}},
	} {
		want, err := os.ReadFile(c.golden)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := simulate(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if stdout != string(want) {
			t.Errorf("%v: output differs from %s:\n%s\nwant\n%s", c.args, c.golden, stdout, want)
		}
	}
}

// planSpark is what the tests read of plan --json's spark.
type planSpark struct {
	Partitions                int64              `json:"partitions"`
	Provider                  string             `json:"provider"`
	Executors                 int64              `json:"executors"`
	CoresPerExecutor          int64              `json:"coresPerExecutor"`
	Cost                      map[string]float64 `json:"cost"`
	DefaultCosts              bool               `json:"defaultCosts"`
	RatePerSecond             float64            `json:"ratePerSecond"`
	ExecutorPeakMemoryBytes   int64              `json:"executorPeakMemoryBytes"`
	ExecutorPeakDiskBytes     int64              `json:"executorPeakDiskBytes"`
	BatchDurationMs           map[string]float64 `json:"batchDurationMs"`
	MaxSustainableRate        float64            `json:"maxSustainableRate"`
	MaxSustainableRateBounded bool               `json:"maxSustainableRateBounded"`
	KeepsUp                   bool               `json:"keepsUp"`
	FallingBehindSinceSeconds *float64           `json:"fallingBehindSinceSeconds"`
	ExecutorMemoryBytes       int64              `json:"executorMemoryBytes"`
	ExecutorMemorySource      string             `json:"executorMemorySource"`
	MemoryAtMaxRateBytes      int64              `json:"memoryAtMaxRateBytes"`
	RateBound                 string             `json:"rateBound"`
}

// runPlanSpark runs plan --json on testdata/plan-spark.yaml (or file)
// with args and returns its spark part.
func runPlanSpark(t *testing.T, file string, args ...string) planSpark {
	t.Helper()
	all := append([]string{"plan", file, "--query", "within", "--seeds", "1", "-q", "--json"}, args...)
	code, stdout, stderr := simulate(t, all...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", all, code, stderr)
	}
	var out struct {
		Spark *planSpark `json:"spark"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Spark == nil {
		t.Fatalf("%v: no spark in\n%s", all, stdout)
	}
	return *out.Spark
}

// scanCost is a cost block whose scan dominates: the eviction scan of
// the state makes the batches slow as the rate grows. Its per-row and
// per-key terms are 300 times a real cluster's, so that the largest
// sustainable rate is a few hundred per second, where plans (which
// simulate at their --production-rate) take seconds.
const scanCost = "cost:\n  batchOverheadMs: 200\n  rowNs: 600000\n  newKeyNs: 900000\n  scanKeyNs: 600000\n  removeKeyNs: 1200000\n  partitionCommitMs: 5\n"

// TestPlanSparkVerdictFlips checks the rate search against the cluster:
// halving the cores lowers the largest rate that keeps up; a rate above
// it falls behind and one below keeps up.
func TestPlanSparkVerdictFlips(t *testing.T) {
	dir := t.TempDir()
	cost := filepath.Join(dir, "cost.yaml")
	if err := os.WriteFile(cost, []byte(scanCost), 0o644); err != nil {
		t.Fatal(err)
	}
	// Four minutes of the test scenario: the plans at rates near the
	// largest sustainable one simulate at those rates.
	data, err := os.ReadFile(filepath.Join("testdata", "plan-spark.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(dir, "plan-spark.yaml")
	if err := os.WriteFile(sc, []byte(strings.Replace(string(data), "duration: 10m", "duration: 4m", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	four := runPlanSpark(t, sc, "--partitions", "16", "--executors", "2", "--cores-per-executor", "4", "--cost", cost)
	two := runPlanSpark(t, sc, "--partitions", "16", "--executors", "2", "--cores-per-executor", "2", "--cost", cost)
	t.Logf("8 slots: max %v/s; 4 slots: max %v/s", four.MaxSustainableRate, two.MaxSustainableRate)
	if four.Executors != 2 || four.CoresPerExecutor != 4 || four.Partitions != 16 || four.Cost["scanKeyNs"] != 600000 || four.DefaultCosts {
		t.Errorf("cluster %+v, want the flags' and the cost file's", four)
	}
	if !four.KeepsUp || !two.KeepsUp || four.RatePerSecond != 100 {
		t.Fatalf("at the scenario's 100/s: keeps up %v (8 slots), %v (4 slots); want both", four.KeepsUp, two.KeepsUp)
	}
	if four.MaxSustainableRateBounded || four.MaxSustainableRate <= 0 {
		t.Fatalf("8 slots: max %v, bounded %v: want a rate where it falls behind", four.MaxSustainableRate, four.MaxSustainableRateBounded)
	}
	// Half the slots: the task work takes twice as long, the overhead
	// does not change: the largest rate drops, by less than half.
	if !(two.MaxSustainableRate < 0.9*four.MaxSustainableRate && two.MaxSustainableRate > 0.4*four.MaxSustainableRate) {
		t.Errorf("4 slots keep up to %v/s, 8 slots to %v/s: want between 0.4 and 0.9 of it", two.MaxSustainableRate, four.MaxSustainableRate)
	}
	above := runPlanSpark(t, sc, "--partitions", "16", "--executors", "2", "--cores-per-executor", "2", "--cost", cost,
		"--production-rate", ratef(1.2*two.MaxSustainableRate))
	if above.KeepsUp || above.FallingBehindSinceSeconds == nil {
		t.Errorf("at 1.2 x the largest rate (%v/s): keeps up %v, falling behind since %v; want false and a time", above.RatePerSecond, above.KeepsUp, above.FallingBehindSinceSeconds)
	}
	// From another planned rate the search multiplies the costs of other
	// rows (that rate's own): the same boundary within the costs'
	// approximation, not to the bisection's 1%.
	if d := above.MaxSustainableRate - two.MaxSustainableRate; d > 0.05*two.MaxSustainableRate || d < -0.05*two.MaxSustainableRate {
		t.Errorf("searched from above: max %v/s; from below %v/s: want the same within 5%%", above.MaxSustainableRate, two.MaxSustainableRate)
	}
	below := runPlanSpark(t, sc, "--partitions", "16", "--executors", "2", "--cores-per-executor", "2", "--cost", cost,
		"--production-rate", ratef(0.8*two.MaxSustainableRate))
	if !below.KeepsUp || below.BatchDurationMs["p99"] >= 10000 || below.BatchDurationMs["p99"] <= two.BatchDurationMs["p99"] {
		t.Errorf("at 0.8 x the largest rate: keeps up %v, p99 %v ms (at 100/s %v ms); want true, under the 10 s trigger, above 100/s's", below.KeepsUp, below.BatchDurationMs["p99"], two.BatchDurationMs["p99"])
	}
	// Memory grows with the rate (simulated at it).
	if !(float64(below.ExecutorPeakMemoryBytes) > 0.8*below.RatePerSecond/100*float64(two.ExecutorPeakMemoryBytes)) {
		t.Errorf("heap at %v/s %d, at 100/s %d: want it scaled with the rate", below.RatePerSecond, below.ExecutorPeakMemoryBytes, two.ExecutorPeakMemoryBytes)
	}
}

func ratef(r float64) string {
	return strconv.FormatFloat(math.Round(r), 'f', 0, 64) + "/s"
}

// TestPlanSparkBadFlags checks each bad cluster flag: one line naming the
// flag (and the file and key for a cost file), exit 1, nothing on stdout,
// before any simulation.
func TestPlanSparkBadFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sc := filepath.Join("testdata", "plan-spark.yaml")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown provider", []string{"--provider", "cassandra"}, "--provider cassandra: want hdfs or rocksdb"},
		{"zero partitions", []string{"--partitions", "0"}, "--partitions 0: want a whole number of shuffle partitions from 1 to"},
		{"zero executors", []string{"--executors", "0"}, "--executors 0: want a whole number of executors from 1 to 10000"},
		{"zero cores", []string{"--cores-per-executor", "0"}, "--cores-per-executor 0: want a whole number of cores from 1 to 1024"},
		{"negative cost", []string{"--cost", write("neg.yaml", "cost:\n  rowNs: -3\n")}, "neg.yaml: cost.rowNs: want a cost in nanoseconds per row, 0 or more, got -3"},
		{"text cost", []string{"--cost", write("txt.yaml", "spark:\n  cost:\n    scanKeyNs: fast\n")}, "txt.yaml: spark.cost.scanKeyNs: want a cost in nanoseconds per key, 0 or more, got fast"},
		{"unknown cost key", []string{"--cost", write("key.yaml", "cost:\n  seekNs: 3\n")}, "key.yaml: cost.seekNs: unknown key; want batchOverheadMs, rowNs"},
		{"huge cost", []string{"--cost", write("huge.yaml", "cost:\n  batchOverheadMs: 1e16\n")}, "huge.yaml: cost.batchOverheadMs: want a cost in milliseconds per batch, 0 or more, at most 1e+07 (a larger cost overflows the model's durations), got 1e16"},
		{"infinite cost", []string{"--cost", write("inf.yaml", "cost:\n  rowNs: .inf\n")}, "inf.yaml: cost.rowNs: want a cost in nanoseconds per row, 0 or more, at most 1e+09 (a larger cost overflows the model's durations), got .inf"},
		{"cost key twice", []string{"--cost", write("dup.yaml", "cost:\n  rowNs: 3\n  newKeyNs: 1\n  rowNs: 4\n")}, "dup.yaml: cost.rowNs: must be given once, got it again at line 4 (first at line 2)"},
		{"no cost block", []string{"--cost", write("none.yaml", "name: x\n")}, "none.yaml: no cost: block; want a YAML file with a cost: mapping"},
		{"missing cost file", []string{"--cost", filepath.Join(dir, "nope.yaml")}, "nope.yaml: no such file or directory; want a YAML file with a cost: block"},
		{"cost folder", []string{"--cost", dir}, "not a regular file (a folder); want a YAML file with a cost: block"},
		{"text executor memory", []string{"--executor-memory", "lots"}, `--executor-memory "lots": want a size above 0 such as 512MiB, 4GiB or 2GB`},
		{"zero executor memory", []string{"--executor-memory", "0"}, `--executor-memory "0": want a size above 0`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"plan", sc, "--query", "within", "-q"}, c.args...)
			code, stdout, stderr := simulate(t, args...)
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", code, stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "simulate plan: ") || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q: want one line of simulate plan: with %q", stderr, c.want)
			}
		})
	}
}

// TestPlanSparkBlock checks that a scenario's own spark: block sizes the
// cluster without any flag, and that the flags override it.
func TestPlanSparkBlock(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "plan-spark.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(t.TempDir(), "plan-spark.yaml")
	block := "spark:\n  partitions: 8\n  provider: rocksdb\n  executors: 2\n  coresPerExecutor: 2\n  cost:\n    scanKeyNs: 1000\n"
	if err := os.WriteFile(sc, append(data, block...), 0o644); err != nil {
		t.Fatal(err)
	}
	own := runPlanSpark(t, sc)
	if own.Partitions != 8 || own.Provider != "rocksdb" || own.Executors != 2 || own.Cost["scanKeyNs"] != 1000 || own.Cost["newKeyNs"] != 3590 || own.DefaultCosts {
		t.Errorf("the scenario's block: %+v", own)
	}
	if own.ExecutorPeakDiskBytes == 0 {
		t.Errorf("rocksdb: no disk")
	}
	over := runPlanSpark(t, sc, "--executors", "4", "--provider", "hdfs")
	if over.Partitions != 8 || over.Provider != "hdfs" || over.Executors != 4 || over.Cost["scanKeyNs"] != 1000 || over.ExecutorPeakDiskBytes != 0 {
		t.Errorf("the block with --executors 4 --provider hdfs: %+v", over)
	}
	// The executor memory: Spark's default 1g without one stated, else
	// the memory budget, else the block's, else the flag; the state at
	// the largest rate fits in it.
	for _, c := range []struct {
		block string
		args  []string
		want  int64
		from  string
	}{
		{"", nil, 1 << 30, "Spark's default spark.executor.memory"},
		{"", []string{"--memory-budget", "3GiB"}, 3 << 30, "--memory-budget"},
		{"  executorMemory: 2GiB\n", []string{"--memory-budget", "3GiB"}, 2 << 30, "the scenario's spark.executorMemory"},
		{"  executorMemory: 2GiB\n", []string{"--executor-memory", "512MiB"}, 512 << 20, "--executor-memory"},
	} {
		if err := os.WriteFile(sc, append(append(data, block...), c.block...), 0o644); err != nil {
			t.Fatal(err)
		}
		got := runPlanSpark(t, sc, c.args...)
		if got.ExecutorMemoryBytes != c.want || got.ExecutorMemorySource != c.from || got.MemoryAtMaxRateBytes > c.want || got.MemoryAtMaxRateBytes <= 0 || got.RateBound == "" {
			t.Errorf("%q %v: executor memory %d B from %q, %d B at the largest rate, bound %q; want %d B from %q, the state fitting",
				c.block, c.args, got.ExecutorMemoryBytes, got.ExecutorMemorySource, got.MemoryAtMaxRateBytes, got.RateBound, c.want, c.from)
		}
	}
}

// TestSampleCostFile checks that experiments/spark-sample/cost.yaml,
// which plan's --help example reads, is what calibrate prints for the
// sample log.
func TestSampleCostFile(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "experiments", "spark-sample", "cost.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join("..", ".."))
	code, stdout, stderr := simulate(t, "calibrate", "experiments/spark-sample/driver.log", "--executors", "4", "--cores-per-executor", "4")
	if code != 0 || stdout != string(want) {
		t.Errorf("exit %d (%s); calibrate prints\n%s\nwant experiments/spark-sample/cost.yaml's\n%s", code, stderr, stdout, want)
	}
}

// TestPlanReviewWhenTheSearchMeetsTheBatchLimit: issue 34's cluster
// (sim/plan/testdata/issue34-cluster.yaml), whose rate search met
// dedupsim's limit on a batch's rows and killed the plan: exit 1, no
// review. With the limit lowered (the test hook max-batch-rows, so that 3
// minutes at 2,000/s meet it as the 10 minutes at 20,000/s met
// the 5,000,000), the plan answers, exit 0, and --out writes the review,
// whose providers each name what bounded their largest rate.
func TestPlanReviewWhenTheSearchMeetsTheBatchLimit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "review")
	code, p := runProc(t, "max-batch-rows=25000", t.TempDir(), "plan", filepath.Join("..", "..", "sim", "plan", "testdata", "issue34-cluster.yaml"),
		"--query", "within", "--seeds", "1", "-q", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, p.stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rv struct {
		Cluster struct {
			Providers []struct {
				Provider                string  `json:"provider"`
				MaxSustainableRate      float64 `json:"maxSustainableRate"`
				RateBound               string  `json:"rateBound"`
				SimulationsAtBatchLimit int     `json:"simulationsAtBatchLimit"`
			} `json:"providers"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(data, &rv); err != nil {
		t.Fatal(err)
	}
	limited := 0
	for _, pr := range rv.Cluster.Providers {
		t.Logf("%s: %v/s, bound %s, %d simulations at the limit", pr.Provider, pr.MaxSustainableRate, pr.RateBound, pr.SimulationsAtBatchLimit)
		limited += pr.SimulationsAtBatchLimit
		if pr.RateBound == "" || pr.MaxSustainableRate <= 0 {
			t.Errorf("%s: bound %q, rate %v: want both", pr.Provider, pr.RateBound, pr.MaxSustainableRate)
		}
	}
	if len(rv.Cluster.Providers) != 2 || limited == 0 {
		t.Fatalf("%d providers, %d simulations at the limit: want 2, and the limit met", len(rv.Cluster.Providers), limited)
	}
}
