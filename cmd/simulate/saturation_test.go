package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepWarnsOfSaturation: a sweep whose longest delay keeps keys past
// the run's length says so on stderr, with the duration that would
// resolve it, and the report marks it; the delays that fit stay quiet.
func TestSweepWarnsOfSaturation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	yaml := `name: sat
duration: 10m
workload: {rate: 20/s}
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := simulate(t, "sweep", file, "--delay", "1m,5m", "--quiet", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 2 x 5m + 10s = 10m10s >= 10m; 2 x 1m + 10s is not; unbounded never
	// evicts, which is no saturation.
	want := "warning: within is saturated at delay 5m: its key horizon (up to 10m10s) reaches the 10m traffic window"
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "duration: 45m") || strings.Count(stderr, "saturated") != 1 {
		t.Errorf("stderr %q; want one line %q naming duration 45m (3 x 10m10s, rounded up)", stderr, want)
	}
	if strings.Contains(stdout, "saturated") {
		t.Errorf("the warning went to stdout: %s", stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Hollow markers: saturated runs (within at 5m)") {
		t.Errorf("report.md does not mark the saturated point:\n%s", md)
	}
}
