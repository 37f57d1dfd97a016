package reports

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecutorChartsAndLogDurations: spark.csv's executor columns get a
// memory chart and, when some executor uses local disk (RocksDB), a disk
// chart of its own; batches that stay under a tenth of the trigger get
// the duration chart on a log axis, which its note says, and batches
// that overrun keep a linear one.
func TestExecutorChartsAndLogDurations(t *testing.T) {
	s, ts, sp := sparkFixture(t, true)
	// Rewrite every batch to 200 ms (2% of the 10 s trigger) and 1 MiB of
	// disk.
	rows, err := csv.NewReader(bytes.NewReader(sp)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		r[5], r[11] = "200", "1048576"
	}
	var small bytes.Buffer
	if err := csv.NewWriter(&small).WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	render := func(spark []byte) (map[string][]byte, string) {
		dir := writeResults(t, s, ts)
		if err := os.WriteFile(filepath.Join(dir, "spark.csv"), spark, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Render(dir); err != nil {
			t.Fatal(err)
		}
		files := readDir(t, dir)
		return files, string(files["report.md"])
	}
	files, md := render(small.Bytes())
	for _, ch := range []string{"executor-memory", "executor-disk"} {
		if len(files[ch+".png"]) == 0 || !strings.Contains(md, "("+ch+".png)") {
			t.Errorf("small batches on disk: %s not drawn", ch)
		}
	}
	if !strings.Contains(md, "The y axis is logarithmic: every batch took at most 2.00% of the 10s trigger (200 ms)") {
		t.Error("batches of 2% of the trigger: the duration chart's note does not say its axis is logarithmic")
	}
	files, md = render(sp)
	if len(files["executor-memory.png"]) == 0 {
		t.Error("executor-memory not drawn")
	}
	if len(files["executor-disk.png"]) != 0 || strings.Contains(md, "executor-disk") {
		t.Error("executor-disk drawn for executors without local disk")
	}
	if strings.Contains(md, "logarithmic") {
		t.Error("batches over the trigger drawn on a log axis")
	}
}
