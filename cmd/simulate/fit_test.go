package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fitSample = "../../experiments/fit-sample/events.csv.gz"

func fitArgs(log, out string, extra ...string) []string {
	return append([]string{"fit", log, "--id", "event_id", "--event-time", "event_time", "--arrival-time", "ingest_time", "--out", out}, extra...)
}

// TestFitWritesALoadableScenario fits the sample log and runs the
// scenario it wrote.
func TestFitWritesALoadableScenario(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fitted")
	code, stdout, stderr := simulate(t, fitArgs(fitSample, out, "--customer", "customer_id", "--name", "sample")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "12838 rows") {
		t.Errorf("stdout %q does not give the rows", stdout)
	}
	if !strings.Contains(stderr, "times detected from the first row: event_time as RFC 3339 text") {
		t.Errorf("stderr %q does not say the time units were detected", stderr)
	}
	for _, f := range []string{"sample.yaml", "fit.json", "report.md", "report.html", "rate.png", "arrival-delay.svg", "retry-gap.png", "lateness.png", "copies.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	yml, err := os.ReadFile(filepath.Join(out, "sample.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"binary segmentation", "KS statistic", "Wilson", "timestamp: restamp", "kind: bad-clock", "customers: 300"} {
		if !strings.Contains(string(yml), want) {
			t.Errorf("the scenario does not say %q", want)
		}
	}
	if code, _, stderr := simulate(t, "run", filepath.Join(out, "sample.yaml"), "--out", filepath.Join(t.TempDir(), "run"), "--quiet"); code != 0 {
		t.Fatalf("run of the fitted scenario: exit %d: %s", code, stderr)
	}
}

// TestFitBadInput: each bad input is one line naming the file (and the
// row and column where there is one), exit 1, and --out is not created.
func TestFitBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := "event_id,event_time,ingest_time\n1,2026-01-01T00:00:00Z,2026-01-01T00:00:01Z\n"
	cases := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"missing column", fitArgs(write("a.csv", "event_id,event_time\n1,2026-01-01T00:00:00Z\n"), ""), []string{"a.csv", "ingest_time"}},
		{"no rows", fitArgs(write("b.csv", "event_id,event_time,ingest_time\n"), ""), []string{"b.csv", "no rows"}},
		{"bad time", fitArgs(write("c.csv", "event_id,event_time,ingest_time\n1,yesterday,2026-01-01T00:00:01Z\n"), ""), []string{"c.csv", "line 2", "event_time"}},
		{"out of order", fitArgs(write("d.csv", good+"2,2026-01-01T00:00:00Z,2026-01-01T00:00:00Z\n"), ""), []string{"d.csv", "line 3"}},
		{"no id", []string{"fit", write("e.csv", good), "--event-time", "event_time", "--arrival-time", "ingest_time", "--out", ""}, []string{"--id"}},
		{"bad tolerance", fitArgs(write("f.csv", good), "", "--tolerance", "soon"), []string{"--tolerance"}},
		{"missing file", fitArgs(filepath.Join(dir, "nope.csv"), ""), []string{"nope.csv"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			for i, a := range c.args {
				if a == "--out" {
					c.args[i+1] = out
				}
			}
			code, _, stderr := simulate(t, c.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 || stderr == "" {
				t.Errorf("want one line, got %q", stderr)
			}
			for _, w := range c.wants {
				if !strings.Contains(stderr, w) {
					t.Errorf("%q does not name %q", stderr, w)
				}
			}
			if _, err := os.Lstat(out); !os.IsNotExist(err) {
				t.Errorf("--out %s was written (%v)", out, err)
			}
		})
	}
}

// TestFitRefusesAForeignOut leaves a folder that is not dedupsim's as it
// was.
func TestFitRefusesAForeignOut(t *testing.T) {
	out := t.TempDir()
	keep := filepath.Join(out, "mine.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := simulate(t, fitArgs(fitSample, out)...)
	if code != 1 || !strings.Contains(stderr, "refusing to replace it") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Fatalf("the folder changed: %v %q", err, b)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Fatalf("the folder holds %d entries", len(entries))
	}
}

// TestPlanScalesTheFittedTraffic: plan with --production-rate on a
// scenario whose workload is a log plans on the traffic fitted to the log
// (a log's rows cannot be scaled) and says so.
func TestPlanScalesTheFittedTraffic(t *testing.T) {
	abs, err := filepath.Abs(fitSample)
	if err != nil {
		t.Fatal(err)
	}
	sc := filepath.Join(t.TempDir(), "log.yaml")
	yml := "name: log\nworkload:\n  events: {file: " + abs + ", id: event_id, eventTime: event_time, arrivalTime: ingest_time, timeUnit: rfc3339}\n" +
		"queries:\n  - name: q1\n    query: 'withWatermark(\"event_time\", \"15 seconds\").dropDuplicatesWithinWatermark([\"event_id\"])'\n"
	if err := os.WriteFile(sc, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := simulate(t, "plan", sc, "--query", "q1", "--seeds", "1", "--max-false-drop-rate", "0.5", "--production-rate", "50/s", "--json", "--quiet")
	if code != 0 && code != exitNoPlan {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "planning on the traffic fitted to it") || !strings.Contains(stderr, "not scaled") {
		t.Errorf("plan does not say it scales the fitted traffic: %q", stderr)
	}
	if !strings.Contains(stdout, `"recommendedDelaySeconds"`) {
		t.Errorf("no plan: %s", stdout)
	}
}
