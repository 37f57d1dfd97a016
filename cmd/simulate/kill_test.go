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

// killPebbleScenario is shorter: Pebble runs it about ten times slower
// than the memory store would the one above. It loses its checkpoint too.
const killPebbleScenario = `# long enough to be killed after its first fault, on Pebble
name: kill-pebble
seed: 12
duration: 12m
workload:
  rate: 200/s
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
  - {at: 3m, kind: restart}
  - {at: 6m, kind: lose-checkpoint}
`

// TestSIGKILLThenResume kills a real `simulate run --checkpoint` process
// with SIGKILL in the middle of the run, runs the same command again, and
// compares the results with an uninterrupted run of the memory store: the
// same, apart from wall-clock fields and, for Pebble, the store's name.
func TestSIGKILLThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "simulate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	t.Run("memory", func(t *testing.T) {
		// Killed once both jobs have written a snapshot.
		killThenResume(t, bin, killScenario, "memory", `"restarts":1`, func(*jobState) bool { return true })
	})
	t.Run("pebble", func(t *testing.T) {
		// Killed once both jobs are past the restart, so that they resume
		// their stores at a snapshot's version from Pebble checkpoints.
		killThenResume(t, bin, killPebbleScenario, "pebble", `"restarts":2`, func(s *jobState) bool { return s.NextFault >= 1 })
	})
}

// jobState is the part of a job.state file the test waits on.
type jobState struct {
	NextFault int `json:"nextFault"`
}

// killThenResume runs scenario text with --checkpoint, kills the process
// once every job's snapshot satisfies ready, resumes it, and compares the
// results with an uninterrupted run on the memory store.
func killThenResume(t *testing.T, bin, text, store, restarts string, ready func(*jobState) bool) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "kill.yaml")
	os.WriteFile(sc, []byte(text), 0o644)
	ck, killed, clean := filepath.Join(dir, "ck"), filepath.Join(dir, "killed"), filepath.Join(dir, "clean")
	args := []string{"run", sc, "--quiet", "--no-report", "--store", store, "--checkpoint", ck, "--snapshot-interval", "50ms", "--out", killed}

	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := 0
		for _, job := range []string{"pair", "within"} {
			data, err := os.ReadFile(filepath.Join(ck, job, "job.state"))
			var s jobState
			if err == nil && json.Unmarshal(data, &s) == nil && ready(&s) {
				n++
			}
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no snapshot ready within 60 s")
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
	if store == "pebble" {
		if ckpts, _ := filepath.Glob(filepath.Join(ck, "*", "query.*", "state", "0.checkpoints", "*")); len(ckpts) == 0 {
			t.Fatal("the killed run left no Pebble checkpoint")
		}
	}

	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "run", sc, "--quiet", "--no-report", "--store", "memory", "--out", clean).CombinedOutput(); err != nil {
		t.Fatalf("clean run: %v\n%s", err, out)
	}
	want := normalized(t, filepath.Join(clean, "summary.json"))
	got := strings.ReplaceAll(normalized(t, filepath.Join(killed, "summary.json")), `"store":"`+store+`"`, `"store":"memory"`)
	if want != got {
		t.Fatalf("resumed summary differs from an uninterrupted run:\n%s\n%s", want, got)
	}
	for _, f := range []string{"timeseries.csv", "progress/pair.jsonl", "progress/within.jsonl"} {
		a, _ := os.ReadFile(filepath.Join(clean, f))
		b, _ := os.ReadFile(filepath.Join(killed, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%s differs after resume (%d vs %d bytes)", f, len(a), len(b))
		}
	}
	if !strings.Contains(got, restarts) {
		t.Fatalf("the resumed run lacks %s", restarts)
	}
}
