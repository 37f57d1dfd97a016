package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const killScenario = `# long enough to be killed in the middle
name: kill
seed: 11
duration: 40m
workload:
  rate: 400/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.1
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: restamp
queries:
  - name: pair
    query: withWatermark("event_time", "2 minutes").dropDuplicates(["event_id", "event_time"])
  - name: within
    query: withWatermark("event_time", "2 minutes").dropDuplicatesWithinWatermark(["event_id"])
faults:
  - {at: 15m, kind: restart}
`

// normalized drops the wall-clock fields of a summary.json.
func normalized(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, q := range s["queries"].([]any) {
		delete(q.(map[string]any), "eventsPerSecond")
		delete(q.(map[string]any), "wallSeconds")
	}
	out, _ := json.Marshal(s)
	return string(out)
}

// TestSIGKILLThenResume kills a real `simulate run --checkpoint` process
// with SIGKILL in the middle of the run, runs the same command again, and
// compares the results with an uninterrupted run.
func TestSIGKILLThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "simulate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sc := filepath.Join(dir, "kill.yaml")
	os.WriteFile(sc, []byte(killScenario), 0o644)
	ck, killed, clean := filepath.Join(dir, "ck"), filepath.Join(dir, "killed"), filepath.Join(dir, "clean")
	args := []string{"run", sc, "--quiet", "--no-report", "--checkpoint", ck, "--snapshot-interval", "50ms", "--out", killed}

	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once both jobs have written a snapshot, before the run ends.
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, e1 := os.Stat(filepath.Join(ck, "pair", "job.state"))
		_, e2 := os.Stat(filepath.Join(ck, "within", "job.state"))
		if e1 == nil && e2 == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no snapshot written within 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Skipf("the run finished before it could be killed (%v); make the scenario longer", err)
	}
	if _, err := os.Stat(filepath.Join(killed, "summary.json")); err == nil {
		t.Fatal("a killed run left a summary.json")
	}

	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "run", sc, "--quiet", "--no-report", "--out", clean).CombinedOutput(); err != nil {
		t.Fatalf("clean run: %v\n%s", err, out)
	}
	if a, b := normalized(t, filepath.Join(clean, "summary.json")), normalized(t, filepath.Join(killed, "summary.json")); a != b {
		t.Fatalf("resumed summary differs from an uninterrupted run:\n%s\n%s", a, b)
	}
	for _, f := range []string{"timeseries.csv", "progress/pair.jsonl", "progress/within.jsonl"} {
		a, _ := os.ReadFile(filepath.Join(clean, f))
		b, _ := os.ReadFile(filepath.Join(killed, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%s differs after resume (%d vs %d bytes)", f, len(a), len(b))
		}
	}
	if !strings.Contains(normalized(t, filepath.Join(killed, "summary.json")), `"restarts":1`) {
		t.Fatal("the restart fault is missing from the resumed run")
	}
}
