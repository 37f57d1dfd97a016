package metrics

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

// TestReadSparkRoundTrip: rows written as spark.csv read back with their
// instants parsed and their optional fields empty where they were.
func TestReadSparkRoundTrip(t *testing.T) {
	d := 600.0
	recs := []SparkRecord{
		{Query: "q", Delay: &d, BatchID: 0, Start: 1_767_225_610_000_000, End: 1_767_225_611_250_500, DurationMs: 1250.5, HasDuration: true,
			InputRows: 10, MaxPartitionRows: 7, MeanPartitionRows: 2.5, ProcessingLagSeconds: 3.25, HasLag: true, ExecutorMemoryBytes: 99, ExecutorDiskBytes: 5},
		{Query: "q", Delay: &d, BatchID: 1, Start: 1_767_225_620_000_000, End: 1_767_225_620_000_000, MaxPartitionRows: 7, MeanPartitionRows: 2.5},
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write(SparkHeader)
	var row []string
	for i := range recs {
		row = recs[i].Record(row)
		cw.Write(row)
	}
	cw.Flush()
	got, err := ReadSpark(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows, want 2", len(got))
	}
	a, b := got[0], got[1]
	if a.StartMs != 1_767_225_610_000 || a.EndMs != 1_767_225_611_250 || a.DurationMs == nil || *a.DurationMs != 1250.5 ||
		a.ProcessingLagSeconds == nil || *a.ProcessingLagSeconds != 3.25 || a.Delay != "600" || a.MeanPartitionRows != 2.5 || a.ExecutorDiskBytes != 5 {
		t.Errorf("row 1: %+v", a)
	}
	if b.DurationMs != nil || b.ProcessingLagSeconds != nil || b.StartMs != b.EndMs || b.BatchID != 1 {
		t.Errorf("row 2: %+v; want no duration, no lag, end = start", b)
	}
	if _, err := ReadSpark(strings.NewReader("query,delay,x\n")); err == nil || !strings.Contains(err.Error(), "header has 3 columns") {
		t.Errorf("a bad header: %v", err)
	}
}
