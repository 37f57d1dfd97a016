package reports

import (
	"encoding/csv"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/metrics"
)

// TestSeriesKeepsEveryExtreme feeds a series more batches than it keeps
// exactly: it keeps at most what its buckets hold, in time order, with
// the first and last batch and the run's greatest and least value of
// every score among them; a run short enough is kept whole.
func TestSeriesKeepsEveryExtreme(t *testing.T) {
	for _, n := range []int{exactBatches, 40 * exactBatches} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		s := newBatchSeries()
		var maxRows, minRows, maxLag int64 = -1, 1 << 62, -1
		var maxAt, minAt, lagAt int64
		for i := range n {
			b := metrics.BatchRecord{Query: "q", BatchID: int64(i), ProcessingTime: int64(i) * 1000,
				StateRows: rng.Int64N(1_000_000), HasWatermark: true}
			b.Watermark = b.ProcessingTime - rng.Int64N(600_000)
			if b.StateRows > maxRows {
				maxRows, maxAt = b.StateRows, b.BatchID
			}
			if b.StateRows < minRows {
				minRows, minAt = b.StateRows, b.BatchID
			}
			if l := b.ProcessingTime - b.Watermark; l > maxLag {
				maxLag, lagAt = l, b.BatchID
			}
			s.add(&b)
		}
		recs := s.records()
		if n <= exactBatches {
			if len(recs) != n {
				t.Errorf("%d batches: kept %d, want every one", n, len(recs))
			}
			continue
		}
		if limit := seriesBuckets * (2 + 2*len(s.scores)); len(recs) > limit {
			t.Errorf("%d batches: kept %d, more than the buckets hold (%d)", n, len(recs), limit)
		}
		ids := map[int64]bool{}
		for i, r := range recs {
			ids[r.BatchID] = true
			if i > 0 && r.BatchID <= recs[i-1].BatchID {
				t.Fatalf("%d batches: kept out of order at %d: %d after %d", n, i, r.BatchID, recs[i-1].BatchID)
			}
		}
		for what, id := range map[string]int64{"first": 0, "last": int64(n - 1), "most state": maxAt, "least state": minAt, "largest lag": lagAt} {
			if !ids[id] {
				t.Errorf("%d batches: the %s batch (%d) was not kept", n, what, id)
			}
		}
		t.Logf("%d batches: kept %d", n, len(recs))
	}
}

// writeLongResults writes a results folder of one query over n batches of
// a 1 s trigger, the timeseries streamed to the file, never held.
func writeLongResults(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := 600.0
	sc, _ := json.Marshal(map[string]any{"name": "long", "start": start, "duration": (time.Duration(n) * time.Second).String(), "trigger": "1s"})
	s := &metrics.Summary{Format: metrics.ResultsFormat, Seed: 1, Scenario: sc, Markers: []metrics.Marker{},
		Windows: metrics.NewWindows(float64(n), float64(n)),
		Queries: []metrics.QuerySummary{{Name: "within", Delay: &d, Query: `withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])`,
			Store: "memory", InputRows: int64(n) * 100, EmittedRows: int64(n) * 100, Batches: int64(n)}},
	}
	data, err := metrics.MarshalSummary(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "timeseries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.Write(metrics.TimeseriesHeader); err != nil {
		t.Fatal(err)
	}
	var row []string
	for i := range n {
		b := metrics.BatchRecord{Query: "within", Delay: &d, BatchID: int64(i), ProcessingTime: start.UnixMilli() + int64(i+1)*1000,
			HasWatermark: true, InputRows: 100, EmittedRows: 100, StateRows: 120_000 + int64(i%977), StateBytes: 9_000_000 + int64(i%991)}
		b.Watermark = b.ProcessingTime - 600_000 - int64(i%13)*1000
		row = b.Record(row)
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// The marker of a folder dedupsim wrote, so that Rerender takes it.
	if err := os.WriteFile(filepath.Join(dir, metrics.MarkerFile), []byte("test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// liveHeap is the least of a few readings of the live heap after a
// collection (another test's goroutines still finishing are not ours).
func liveHeap() uint64 {
	least := uint64(1 << 63)
	for range 3 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		least = min(least, m.HeapAlloc)
		time.Sleep(10 * time.Millisecond)
	}
	return least
}

// TestReportMemoryDoesNotGrowWithRunLength reads and rerenders (as
// `simulate report` does: check, then render) a run of
// 40,000 batches and one of 320,000 (a 1 s trigger for 11 hours and for
// 3.7 days): the results the report holds, and the peak heap while it
// renders, do not grow with the run. Holding every batch would add about
// 140 bytes per batch, 39 MB over the longer run.
func TestReportMemoryDoesNotGrowWithRunLength(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MB of timeseries")
	}
	measure := func(n int) (held, peak uint64) {
		dir := writeLongResults(t, n)
		before := liveHeap()
		res, err := loadResults(dir)
		if err != nil {
			t.Fatal(err)
		}
		after := liveHeap()
		if got := len(res.runs[0].batches); got == 0 {
			t.Fatal("no batches kept")
		}
		runtime.KeepAlive(res)
		if after > before {
			held = after - before
		}
		// The peak while rendering: sampled, since a collection runs
		// whenever the heap doubles.
		stop, done := make(chan bool), make(chan uint64)
		go func() {
			var top uint64
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				top = max(top, m.HeapAlloc)
				select {
				case <-stop:
					done <- top
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		if err := Rerender(dir); err != nil {
			t.Fatal(err)
		}
		close(stop)
		return held, <-done
	}
	measure(40_000) // warm up: first-use allocations are not the run's
	held1, peak1 := measure(40_000)
	held8, peak8 := measure(320_000)
	t.Logf("held %d vs %d B; peak heap while rendering %d vs %d B", held1, held8, peak1, peak8)
	if held8 > held1+2<<20 {
		t.Errorf("the results of 320,000 batches hold %d B, of 40,000 %d B: grows with the run", held8, held1)
	}
	if peak8 > peak1+16<<20 {
		t.Errorf("rendering 320,000 batches peaked at %d B of heap, 40,000 at %d B: grows with the run", peak8, peak1)
	}
}
