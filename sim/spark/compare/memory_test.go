package compare

import (
	"os"
	"runtime"
	"testing"

	"github.com/dedupsim/dedupsim/metrics/progresslog"
)

// BenchmarkBatchMemory measures the Go heap that one side of a comparison
// holds per batch: MaxBatches batches of testdata/listener.jsonl's first
// executed record with one state operator, each under its own batch id.
// MaxBatches times it is what CompareFiles holds a side at the limit
// (BENCHMARKS.md, "Sizes behind the limits"). Run with -benchtime 1x.
func BenchmarkBatchMemory(b *testing.B) {
	f, err := os.Open("../../../metrics/progresslog/testdata/listener.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	recs, _, err := progresslog.ReadAll(f, "listener.jsonl")
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	var rec *progresslog.Progress
	for i := range recs {
		if recs[i].DurationMs.AddBatch.OK && recs[i].BatchID.OK && len(recs[i].StateOperators) == 1 {
			rec = &recs[i]
			break
		}
	}
	if rec == nil {
		b.Fatal("listener.jsonl has no executed record with one state operator")
	}
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := newSide(MaxBatches)
		for id := range int64(MaxBatches) {
			rec.BatchID.Value = id
			if err := s.add(rec); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(s.batches), "heap-bytes/batch")
		runtime.KeepAlive(s)
	}
}
