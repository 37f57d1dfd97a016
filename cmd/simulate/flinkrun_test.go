package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const flinkScenario = smallScenario + `  - name: flink-first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1
    options: {table.exec.state.ttl: 10 s}
`

// TestRunWithAFlinkQuery runs a scenario whose queries include a Flink
// one: the results folder has its progress file and summary entry (engine
// flink), two runs write the same rows, report redraws it, and
// bench-stores refuses it in one line.
func TestRunWithAFlinkQuery(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "flink.yaml")
	os.WriteFile(sc, []byte(flinkScenario), 0o644)
	var series [2][]byte
	for i, out := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")} {
		code, stdout, errs := simulate(t, "run", sc, "--out", out, "--quiet", "--workers", []string{"1", "2"}[i])
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(stdout, "flink-first") {
			t.Fatalf("table lacks the flink query:\n%s", stdout)
		}
		for _, f := range []string{"summary.json", "timeseries.csv", "progress/flink-first.jsonl", "report.md"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("missing %s", f)
			}
		}
		series[i], _ = os.ReadFile(filepath.Join(out, "timeseries.csv"))
	}
	if !bytes.Equal(series[0], series[1]) {
		t.Error("timeseries.csv differs between two runs of the same file and seed")
	}
	var sum struct {
		Queries []struct {
			Name                        string
			Engine                      string
			InputRows, MissedDuplicates int64
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "a", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	q := sum.Queries[2]
	if q.Name != "flink-first" || q.Engine != "flink" || q.InputRows != sum.Queries[0].InputRows || q.MissedDuplicates == 0 {
		t.Errorf("flink entry %s: engine %q, %d rows (Spark's %d), %d missed; want flink, the same rows, copies after the 10 s TTL missed",
			q.Name, q.Engine, q.InputRows, sum.Queries[0].InputRows, q.MissedDuplicates)
	}
	if sum.Queries[0].Engine != "" {
		t.Errorf("a Spark query's engine is %q, want it left out", sum.Queries[0].Engine)
	}
	if code, _, errs := simulate(t, "report", filepath.Join(dir, "a")); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	code, _, errs := simulate(t, "bench-stores", sc, "--out", filepath.Join(dir, "bench"), "--quiet")
	if code == 0 || !strings.Contains(errs, "a flink query keeps its state in its engine's model") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("bench-stores: exit %d, %q; want one line refusing the flink query", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench")); !os.IsNotExist(err) {
		t.Errorf("bench-stores wrote %s", filepath.Join(dir, "bench"))
	}
}
