package export

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// long is a scenario of 2,000 rows a second for a given duration, under a
// query whose state stays small: its batches are all alike, however long
// it runs.
const long = `
name: long
duration: %s
trigger: 1s
workload:
  rate: 2000/s
  ids: int
  retries:
    probability: 0.1
    delay: {dist: uniform, min: 1s, max: 5s}
queries:
  - name: within
    query: withWatermark("event_time", "5 seconds").dropDuplicatesWithinWatermark(["event_id"])
`

// peakHeap exports the scenario and returns the export's summary and the
// largest heap (live objects and garbage not yet collected) seen while it
// ran, sampled every millisecond.
func peakHeap(t *testing.T, duration string) (*Summary, uint64) {
	t.Helper()
	sc := loadScenario(t, fmt.Sprintf(long, duration))
	out := filepath.Join(t.TempDir(), "export")
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	sum, err := Scenario(context.Background(), sc, out, Options{})
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return sum, peak
}

// An export is streamed: its memory follows one batch and the queries'
// state, not the run's length. Exporting four times as many rows (over two
// million) takes no more heap than the short export, give or take a
// quarter.
func TestExportMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("exports 2.5 million rows; -short leaves it out")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	shortSum, short := peakHeap(t, "250s")
	longSum, long := peakHeap(t, "1000s")
	t.Logf("%d rows: peak heap %.1f MB; %d rows: %.1f MB", shortSum.Rows, float64(short)/1e6, longSum.Rows, float64(long)/1e6)
	if longSum.Rows < 2_000_000 || longSum.Rows < 3*shortSum.Rows {
		t.Fatalf("%d and %d rows: want the long export over two million and some four times the short", shortSum.Rows, longSum.Rows)
	}
	if float64(long) > 1.25*float64(short)+4e6 {
		t.Errorf("peak heap %.1f MB for %d rows, %.1f MB for %d: memory grows with the run's length", float64(long)/1e6, longSum.Rows, float64(short)/1e6, shortSum.Rows)
	}
}
