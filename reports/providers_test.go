package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// TestRenderSparkProviders: a stores.json comparing Spark's providers
// adds their table, HDFS beside RocksDB, to both reports before the
// charts, in the contents, and draws no chart of the simulator's stores.
func TestRenderSparkProviders(t *testing.T) {
	s, ts := singleRun(t)
	dir := writeResults(t, s, ts)
	behind := 600.0
	sb := &metrics.StoreBench{Format: metrics.StoresFormat, Scenario: "mobile-retries", Seed: 42, Identical: true, Spark: []metrics.SparkProviderRun{
		{Query: "q", Provider: "hdfs", Partitions: 200, Executors: 4, CoresPerExecutor: 2, PeakStateRows: 1000,
			ExecutorPeakMemoryBytes: 3 << 20, BatchDurationMs: &metrics.DurationPercentiles{P50: 120, P99: 300, Max: 310}},
		{Query: "q", Provider: "rocksdb", Partitions: 200, Executors: 4, CoresPerExecutor: 2, PeakStateRows: 1000,
			ExecutorPeakMemoryBytes: 2 << 20, ExecutorPeakDiskBytes: 5 << 20, BatchDurationMs: &metrics.DurationPercentiles{P50: 900, P99: 12000, Max: 15000},
			FallingBehindSinceSeconds: &behind},
	}}
	if err := metrics.WriteStoreBench(dir, sb); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	files := readDir(t, dir)
	md, page := string(files["report.md"]), string(files["report.html"])
	for name, doc := range map[string]string{"report.md": md, "report.html": page} {
		at, charts := strings.Index(doc, "state store providers (modelled)</h2>"), strings.Index(doc, `<h2 id="charts">`)
		if name == "report.md" {
			at, charts = strings.Index(doc, "## Spark's state store providers (modelled)"), strings.Index(doc, "## Charts")
		}
		if at < 0 || at > charts {
			t.Errorf("%s: no provider section before the charts", name)
		}
		for _, want := range []string{"200 partitions, 4×2 cores", "3.00 MiB heap", "2.00 MiB native", "5.00 MiB", "falls behind from 00:10", "#sparks-state-store-providers-modelled"} {
			if !strings.Contains(doc, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "stores.png")); err == nil {
		t.Error("a provider comparison drew the simulator's stores chart")
	}
}
