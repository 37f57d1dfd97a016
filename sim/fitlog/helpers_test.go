package fitlog

import (
	"compress/gzip"
	"encoding/csv"
	"os"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators/fit"
)

// sampleLog is the committed sample log (experiments/fit-sample).
const sampleLog = "../../experiments/fit-sample/events.csv.gz"

// readSample reads the sample log's rows: a test helper for its four
// columns only (event_id, customer_id, event_time, ingest_time), not a
// log reader.
func readSample(t testing.TB) []fit.Record {
	t.Helper()
	f, err := os.Open(sampleLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(z).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []fit.Record
	for _, r := range recs[1:] {
		et, err1 := time.Parse(time.RFC3339Nano, r[2])
		at, err2 := time.Parse(time.RFC3339Nano, r[3])
		if err1 != nil || err2 != nil {
			t.Fatalf("bad row %v", r)
		}
		rows = append(rows, fit.Record{ID: []byte(r[0]), Customer: []byte(r[1]), EventTime: et.UnixMicro(), Arrival: at.UnixMicro()})
	}
	return rows
}
