package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderReview: the review document puts the answer first (the
// delay, the spread over the seeds, the binding target, the margin), then
// the production rate's numbers with both providers in one table, then
// the tradeoff chart with its targets; plan.json holds the same numbers.
func TestRenderReview(t *testing.T) {
	d, s42, s43 := 301.0, 290.0, 301.0
	rv := &Review{
		Scenario: "capacity-plan.yaml", Query: "within-watermark", QueryText: `withWatermark("event_time", "5 minutes 1 second").dropDuplicatesWithinWatermark(["event_id"])`,
		RecommendedDelaySeconds: &d, Reason: "5m1s is the smallest delay meeting the targets on every seed.",
		Binding: "missedRate", BindingText: "the missed-duplicate target 0.1% decides", Margins: "missed 0.09% against 0.1%",
		MaxMissedRate: 0.001, MaxFalseDropRate: 0.0001, ScenarioRate: 300, PlannedRate: 5000, Quantile: 1, TriggerSeconds: 10,
		Seeds:  []ReviewSeed{{Seed: 42, DelaySeconds: &s42}, {Seed: 43, DelaySeconds: &s43}},
		Spread: ReviewSpread{MissedRate: [3]float64{0.0008, 0.00085, 0.0009}, PeakStateRows: [3]float64{3e6, 3.1e6, 3.2e6}, PeakStateBytes: [3]float64{6e8, 6.2e8, 6.4e8}},
		Cluster: &ReviewCluster{Partitions: 200, Executors: 4, CoresPerExecutor: 4, Providers: []ReviewProvider{
			{Provider: "hdfs", MemoryKind: "JVM heap", ExecutorPeakMemoryBytes: 300 << 20, BatchP50Ms: 390, BatchP99Ms: 520, KeepsUp: true, MaxSustainableRate: 90000, Costs: "hdfs's default costs",
				ExecutorMemoryBytes: 2 << 30, ExecutorMemorySource: "--executor-memory", FitsMemory: true, MemoryAtMaxRateBytes: 1 << 30, RateBound: "cluster", RateBoundText: "falls behind above it"},
			{Provider: "rocksdb", MemoryKind: "native memory", ExecutorPeakMemoryBytes: 500 << 20, ExecutorPeakDiskBytes: 90 << 20, BatchP50Ms: 410, BatchP99Ms: 600, KeepsUp: true, MaxSustainableRate: 70000, Costs: "rocksdb's default costs",
				ExecutorMemoryBytes: 2 << 30, ExecutorMemorySource: "--executor-memory", FitsMemory: true, MemoryAtMaxRateBytes: 1 << 30, RateBound: "cluster", RateBoundText: "falls behind above it"},
		}},
		Points: []ReviewPoint{{DelaySeconds: 180, MissedRate: 0.01, PeakStateBytes: 4e8}, {DelaySeconds: 290, MissedRate: 0.0011, PeakStateBytes: 6e8},
			{DelaySeconds: 301, MissedRate: 0.0009, PeakStateBytes: 6.2e8}, {DelaySeconds: 420, PeakStateBytes: 8e8}},
		Assumptions: []string{"Traffic: the scenario at 5,000/s."}, Command: "simulate plan capacity-plan.yaml --out review",
	}
	dir := t.TempDir()
	if err := RenderReview(dir, rv); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"plan.json", "report.md", "report.html", "tradeoff.png", "tradeoff.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"Recommended watermark delay: 5m1s", "4m50s to 5m1s", "the missed-duplicate target 0.1% decides", "missed 0.09% against 0.1%",
		"## At the production rate, 5,000/s", "| hdfs | rocksdb |", "300 MiB JVM heap", "500 MiB native memory", "390 ms of a 10s trigger", "90,000/s", "tradeoff.png", "## Assumptions"}
	at := 0
	for _, w := range order {
		i := strings.Index(string(md[at:]), w)
		if i < 0 {
			t.Fatalf("report.md lacks %q after byte %d:\n%s", w, at, md)
		}
		at += i
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if a, p := strings.Index(string(html), `id="answer"`), strings.Index(string(html), `id="production"`); a < 0 || p < a || !strings.Contains(string(html), "<svg") {
		t.Errorf("report.html: the answer box is not first, or no chart")
	}
	// The answer box of report.md (before "Why:") holds what report.html's
	// does: the executor's memory and the verdict per provider.
	box := string(md[:strings.Index(string(md), "\nWhy: ")])
	for _, w := range []string{"| Executor peak state memory | hdfs: 300 MiB JVM heap", "| Keeps up at the planned rate | hdfs: "} {
		if !strings.Contains(box, w) {
			t.Errorf("report.md's answer box lacks %q:\n%s", w, box)
		}
	}
	htmlBox := string(html[strings.Index(string(html), `id="answer"`):strings.Index(string(html), `id="production"`)])
	for _, w := range []string{"<th>Executor peak state memory</th><td>hdfs: 300 MiB JVM heap", "<th>Keeps up at the planned rate</th>"} {
		if !strings.Contains(htmlBox, w) {
			t.Errorf("report.html's answer box lacks %q", w)
		}
	}
	var back Review
	raw, _ := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err := json.Unmarshal(raw, &back); err != nil || back.Format != ReviewFormat || *back.RecommendedDelaySeconds != d || back.Cluster.Providers[1].ExecutorPeakDiskBytes != 90<<20 {
		t.Errorf("plan.json: %v, %+v", err, back)
	}
}
