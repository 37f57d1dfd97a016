package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// logRow is a Parquet log row of TestEventLogBadInput.
type logRow struct {
	ID string `parquet:"id"`
	ET int64  `parquet:"et,timestamp(microsecond)"`
	AT int64  `parquet:"at,timestamp(microsecond)"`
}

// TestEventLogBadInput: every bad event log is one line on stderr naming
// the log's file, its row (line) and the column, a non-zero exit, and no
// results folder.
func TestEventLogBadInput(t *testing.T) {
	dir := t.TempDir()
	const header = "id,et,at\n"
	good := header + "a,2026-01-01T00:00:01Z,2026-01-01T00:00:02Z\nb,2026-01-01T00:00:03Z,2026-01-01T00:00:04Z\n"
	zip := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.String()
	}
	var pq bytes.Buffer
	w := parquet.NewGenericWriter[logRow](&pq)
	w.Write([]logRow{{"a", 1767225601000000, 1767225602000000}, {"b", 1767225603000000, 1767225604000000}})
	w.Close()
	gz := zip(strings.Repeat(good, 1))
	fifoDir := filepath.Join(dir, "fifo")
	os.Mkdir(fifoDir, 0o755)
	os.WriteFile(filepath.Join(fifoDir, "a.csv"), []byte(good), 0o644)
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "b.csv"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, log string
		// want are the parts of the one line: the file, the row, the
		// column and what is wrong.
		want []string
	}{
		{"missing-column.csv", "id,et\na,2026-01-01T00:00:01Z\n", []string{"missing-column.csv: line 1: column at: missing from the header"}},
		{"bad-time.csv", good + "c,yesterday,2026-01-01T00:00:05Z\n", []string{"bad-time.csv: line 4: column et: cannot parse yesterday as a time"}},
		{"empty-id.csv", good + ",2026-01-01T00:00:01Z,2026-01-01T00:00:05Z\n", []string{"empty-id.csv: line 4: column id: an empty id"}},
		{"order.csv", good + "c,2026-01-01T00:00:01Z,2026-01-01T00:00:03Z\n", []string{"order.csv: line 4: column at: arrival 2026-01-01T00:00:03Z is before the previous row's"}},
		{"truncated.csv.gz", gz[:len(gz)-10], []string{"truncated.csv.gz: line", "a truncated or corrupt gzip file"}},
		{"truncated.parquet", pq.String()[:pq.Len()-20], []string{"truncated.parquet: a truncated or corrupt Parquet file"}},
		{"no-rows.csv", header, []string{"no-rows.csv: the log has no rows"}},
		{"bad-json.jsonl", `{"id":"a","et":1,"at":2}` + "\n" + `{"id":"b","et":1}` + "\n", []string{"bad-json.jsonl: line 2: column at: missing in this row"}},
		{"customer.csv", "id,et,at,customer_id\na,1,2,x\n", []string{"customer.csv: line 2: column customer_id: must be a whole number"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := filepath.Join(dir, c.name)
			os.WriteFile(log, []byte(c.log), 0o644)
			sc := filepath.Join(dir, c.name+".yaml")
			os.WriteFile(sc, []byte("name: logbad\nworkload:\n  events: {file: "+c.name+", id: id, eventTime: et, arrivalTime: at}\nqueries:\n  - {name: q, query: 'dropDuplicates([\"event_id\"])'}\n"), 0o644)
			out := filepath.Join(dir, "out-"+c.name)
			code, stdout, errs := simulateWithin(t, "run", sc, "--out", out, "--quiet")
			if code == 0 || stdout != "" {
				t.Errorf("exit %d, stdout %q", code, stdout)
			}
			if lines := strings.Count(strings.TrimSpace(errs), "\n") + 1; errs == "" || lines != 1 {
				t.Errorf("want one line on stderr, got %q", errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a failed run wrote its results folder")
			}
		})
	}
	// A folder's FIFO is skipped, not read (it would never end).
	sc := filepath.Join(dir, "fifo.yaml")
	os.WriteFile(sc, []byte("name: logfifo\nworkload:\n  events: {file: fifo, id: id, eventTime: et, arrivalTime: at}\nqueries:\n  - {name: q, query: 'dropDuplicates([\"event_id\"])'}\n"), 0o644)
	if code, _, errs := simulateWithin(t, "run", sc, "--out", filepath.Join(dir, "fifo-out"), "--quiet"); code != 0 {
		t.Errorf("a log folder with a FIFO: exit %d, %s", code, errs)
	}
}
