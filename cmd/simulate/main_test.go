package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func simulate(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

const smallScenario = `# a small scenario for CLI tests
name: cli
seed: 3
duration: 3m
workload:
  rate: 100/s
  retries:
    probability: 0.1
    delay: {dist: uniform, min: 1s, max: 20s}
    timestamp: restamp
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
`

func TestReplay(t *testing.T) {
	code, out, errs := simulate(t, "replay", "../../sim/spark/replay/testdata/conformance/deduplicate-with-watermark.json")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if n := strings.Count(out, "\n"); n != 7 {
		t.Fatalf("%d lines, want 7:\n%s", n, out)
	}
}

func TestBadInputIsOneLineAndNoOutput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nduration: 1h\nworkload: {rate: 10/s}\nqueries:\n  - {name: q, query: 'dropDuplicates([\"nope\"])'}\n"), 0o644)
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte(`{"query": "dropDuplicates()", "steps": [`), 0o644)
	cases := [][]string{
		{"replay", "../../sim/spark/replay/testdata/conformance/own-error-key-column-missing.json"},
		{"replay", broken},
		{"replay", filepath.Join(dir, "missing.json")},
		{"explain", `withWatermark("t", "1 minute").dropDuplicatesWithinWatermark(`},
		{"explain", `dropDuplicatesWithinWatermark(["id"])`},
		{"run", bad, "--out", filepath.Join(dir, "out")},
		{"run", bad, "--bogus"},
		{"sweep", bad, "--delay", "1m,banana"},
	}
	for _, args := range cases {
		code, out, errs := simulate(t, args...)
		if code == 0 {
			t.Errorf("%v: exit 0", args)
		}
		if out != "" {
			t.Errorf("%v: printed %q on stdout", args, out)
		}
		if lines := strings.Count(strings.TrimSpace(errs), "\n") + 1; errs == "" || lines != 1 {
			t.Errorf("%v: want one line on stderr, got %q", args, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a failed run wrote its results folder")
	}
}

func TestExplainWarnsAndExitsZero(t *testing.T) {
	code, out, _ := simulate(t, "explain", `dropDuplicates(["event_id"])`)
	if code != 0 || !strings.Contains(out, "no-watermark") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	code, out, _ = simulate(t, "explain", "--generated", `withWatermark("event_time", "20 minutes").dropDuplicatesWithinWatermark(["event_id"])`)
	if code != 0 || !strings.Contains(out, "dedupeWithinWatermark") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

func TestRunWritesResultsDeterministically(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "cli.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	var series [2][]byte
	for i, out := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")} {
		code, stdout, errs := simulate(t, "run", sc, "--out", out, "--quiet", "--workers", []string{"1", "2"}[i])
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(stdout, "within") || !strings.Contains(stdout, "unbounded") {
			t.Fatalf("table lacks a query:\n%s", stdout)
		}
		for _, f := range []string{"summary.json", "timeseries.csv", "progress/within.jsonl", "report.md", "report.html", "state-rows.png"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("missing %s", f)
			}
		}
		series[i], _ = os.ReadFile(filepath.Join(out, "timeseries.csv"))
	}
	if !bytes.Equal(series[0], series[1]) {
		t.Error("timeseries.csv differs between two runs of the same file and seed")
	}
	code, _, errs := simulate(t, "report", filepath.Join(dir, "a"))
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
}
