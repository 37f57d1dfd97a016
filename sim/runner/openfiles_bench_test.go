package runner

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// BenchmarkPebbleOpenFiles counts the file descriptors a run keeps open
// per Pebble store: one query on Pebble with a spark: block of 300
// partitions (300 stores) over 6 batches, its descriptors counted in /proc/self/fd after
// every batch. The largest count over the stores is what
// pebbleFilesPerStore must cover (BENCHMARKS.md, "Sizes behind the
// limits"). Run with -benchtime 1x.
func BenchmarkPebbleOpenFiles(b *testing.B) {
	const parts = 300
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		b.Skip("no /proc/self/fd:", err)
	}
	sc, err := scenario.Parse([]byte(`name: fds
seed: 3
duration: 1m
trigger: 10s
workload:
  rate: 500/s
spark: {partitions: 300}
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
`), "fds.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		fds := func() int {
			ents, _ := os.ReadDir("/proc/self/fd")
			return len(ents)
		}
		base := fds()
		var mu sync.Mutex
		most := 0
		opts := Options{
			Workers:    1,
			Store:      "pebble",
			ScratchDir: b.TempDir(),
			hooks: testHooks{AfterBatch: func(string, int64, bool) {
				mu.Lock()
				most = max(most, fds())
				mu.Unlock()
			},
			},
		}
		res, err := Run(context.Background(), sc, opts)
		if err != nil {
			b.Fatal(err)
		}
		res.Close()
		per := float64(most-base) / parts
		b.ReportMetric(float64(most-base), "fds")
		b.ReportMetric(per, "fds/store")
		if per > pebbleFilesPerStore {
			b.Errorf("%.1f descriptors per Pebble store, above pebbleFilesPerStore (%d)", per, pebbleFilesPerStore)
		}
	}
}
