package progresslog

import (
	"bytes"
	"os"
	"runtime"
	"testing"
)

// BenchmarkReadAllMemory measures the Go heap that the records returned by
// ReadAll hold, per record, for 1,000 copies of testdata/listener.jsonl's
// records in one input (one state operator with RocksDB's custom metrics,
// whose names the reader shares between records). MaxRecords times it is
// what ReadAll holds at the limit (BENCHMARKS.md, "Sizes behind the
// limits"). Run with -benchtime 1x.
func BenchmarkReadAllMemory(b *testing.B) {
	data, err := os.ReadFile("testdata/listener.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	in := bytes.Repeat(data, 1000)
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		recs, _, err := ReadAll(bytes.NewReader(in), "listener.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(recs)), "heap-bytes/record")
		b.ReportMetric(float64(len(recs)), "records")
		runtime.KeepAlive(recs)
	}
}
