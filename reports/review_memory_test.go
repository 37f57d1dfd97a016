package reports

import (
	"strings"
	"testing"
)

// TestReviewRateFitsMemory: the provider table cannot show a largest
// sustainable rate whose state does not fit in the executor memory, nor
// one without an executor memory to fit in. Issue 34's case: 47.3 MiB of
// heap at 1,000/s beside 2,030,000/s, at which the state needs about
// 2,030 x 47.3 MiB = 94 GiB, against Spark's 1 GiB default.
func TestReviewRateFitsMemory(t *testing.T) {
	const gib = 1 << 30
	base := ReviewProvider{Provider: "hdfs", MemoryKind: "JVM heap", ExecutorPeakMemoryBytes: 47<<20 + 3<<20/10, KeepsUp: true,
		MaxSustainableRate: 2_030_000, MemoryAtMaxRateBytes: 94 * gib, ExecutorMemoryBytes: gib, ExecutorMemorySource: "Spark's default spark.executor.memory",
		FitsMemory: true, RateBound: "cluster", RateBoundText: "falls behind above it"}
	cell := func(p ReviewProvider) string {
		rv := &Review{PlannedRate: 1000, TriggerSeconds: 10, Cluster: &ReviewCluster{Partitions: 200, Executors: 4, CoresPerExecutor: 4, Providers: []ReviewProvider{p}}}
		_, rows := rv.providerTable()
		for _, r := range rows {
			if r[0] == "Max sustainable rate" {
				return r[1]
			}
		}
		t.Fatal("no Max sustainable rate row")
		return ""
	}
	if c := cell(base); strings.Contains(c, "2,030,000") || !strings.Contains(c, "not shown: its state, 94.0 GiB, does not fit in the 1.00 GiB executor memory") {
		t.Errorf("94 GiB of state in 1 GiB: %q", c)
	}
	none := base
	none.ExecutorMemoryBytes = 0
	if c := cell(none); strings.Contains(c, "2,030,000") || !strings.HasPrefix(c, "not shown: no executor memory was stated") {
		t.Errorf("no executor memory: %q", c)
	}
	fits := base
	fits.MaxSustainableRate, fits.MemoryAtMaxRateBytes, fits.RateBound, fits.RateBoundText = 21_600, gib-1<<20, "memory", "memory-bound"
	if c := cell(fits); c != "21,600/s, with 1023 MiB of JVM heap there (of the 1.00 GiB executor memory): memory-bound" {
		t.Errorf("fits: %q", c)
	}
	// Whatever the numbers, a rate is shown only beside state that fits.
	for _, mem := range []int64{0, gib / 2, gib, 2 * gib} {
		for _, at := range []int64{0, gib / 2, gib, gib + 1, 94 * gib} {
			for _, bounded := range []bool{false, true} {
				p := base
				p.ExecutorMemoryBytes, p.MemoryAtMaxRateBytes, p.MaxSustainableRateBounded = mem, at, bounded
				c := cell(p)
				if shown := strings.Contains(c, "/s"); shown != (mem > 0 && at <= mem) {
					t.Errorf("executor memory %d B, state %d B at the rate, bounded %v: %q", mem, at, bounded, c)
				}
			}
		}
	}
	// The table says what the memory leaves out.
	rv := &Review{PlannedRate: 1000, TriggerSeconds: 10, Cluster: &ReviewCluster{Providers: []ReviewProvider{base}}}
	_, rows := rv.providerTable()
	if r := rows[0]; r[0] != "Executor memory for the state" || !strings.Contains(r[1], "JVM headroom and everything outside the state store are not counted") {
		t.Errorf("first row %q", r)
	}
}
