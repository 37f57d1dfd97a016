package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSparkBadBlockWritesNothing: a scenario whose spark: block is wrong
// is refused with one line naming the file, the key and the expectation,
// a non-zero exit, and no results folder.
func TestSparkBadBlockWritesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ block, want string }{
		{"spark: {provider: cassandra}", "spark.provider: must be one of hdfs, rocksdb, got cassandra"},
		{"spark: {partitions: 0}", "spark.partitions: must be from 1 to 10000"},
		{"spark: {executors: 0}", "spark.executors: must be from 1 to 10000, got 0"},
		{"spark: {cost: {newKeyNs: -3}}", "spark.cost.newKeyNs: must be a cost of 0 or more, got -3"},
		{"spark: {cost: {batchOverheadMs: 1e16}}", "spark.cost.batchOverheadMs: must be a cost of at most 1e+07 (a larger cost overflows the model's durations), got 1e+16"},
	} {
		sc := filepath.Join(dir, "bad.yaml")
		os.WriteFile(sc, []byte(smallScenario+c.block+"\n"), 0o644)
		out := filepath.Join(dir, "out")
		code, stdout, stderr := simulate(t, "run", sc, "--quiet", "--out", out)
		want := "simulate run: scenario " + sc + ": " + c.want
		if code == 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want a non-zero exit and one line starting %q", c.block, code, stderr, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the results folder was written", c.block)
		}
	}
}

// TestSparkRunWritesSparkCSV: a run with a spark: block writes spark.csv,
// one row per batch of every job under its documented header, and the
// summary's spark fields.
func TestSparkRunWritesSparkCSV(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "spark.yaml")
	os.WriteFile(sc, []byte(smallScenario+"spark: {partitions: 3, provider: rocksdb, executors: 2, cost: {}}\n"), 0o644)
	out := filepath.Join(dir, "out")
	if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--out", out); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	f, err := os.Open(filepath.Join(out, "spark.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := os.ReadFile(filepath.Join(out, "timeseries.csv"))
	if want := "query,delay,batchId,start,end,durationMs,inputRows,maxPartitionRows,meanPartitionRows,processingLagSeconds,executorMemoryBytes,executorDiskBytes"; strings.Join(rows[0], ",") != want {
		t.Errorf("header %v, want %s", rows[0], want)
	}
	if n := strings.Count(string(ts), "\n"); len(rows) != n {
		t.Errorf("%d spark.csv lines, %d timeseries.csv lines", len(rows), n)
	}
	sum, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	for _, k := range []string{`"batchDurationMs": {`, `"executorPeakMemoryBytes"`, `"executorPeakDiskBytes"`, `"fallingBehindSinceSeconds": null`, `"partitions": {`} {
		if !strings.Contains(string(sum), k) {
			t.Errorf("summary.json lacks %s", k)
		}
	}
}
