package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// hooksScenario is a short run of one query: six batches.
const hooksScenario = `# run by the test-hook tests
name: hooks
seed: 3
duration: 1m
trigger: 10s
workload:
  rate: 5/s
queries:
  - name: q
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
`

// TestReleaseBinaryIgnoresTestHooks checks that the test hooks cannot be
// reached from the command as it ships: built without hooksTag, the
// binary holds no trace of hooksEnv, and a run told to pause after its
// first batch runs to its end instead, writing no pause file. The same
// run of the binary built with the tag pauses there, without results,
// until the test lets it go: the hooks the kill tests rely on work.
func TestReleaseBinaryIgnoresTestHooks(t *testing.T) {
	sc := writeScenario(t, hooksScenario)
	for _, c := range []struct {
		name  string
		bin   string
		hooks bool
	}{
		{"release", releaseBinary(t), false},
		{"with " + hooksTag, simulateBinary(t), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile(c.bin)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(b, []byte(hooksEnv)); got != c.hooks {
				t.Errorf("the binary holds %s: %v, want %v", hooksEnv, got, c.hooks)
			}
			dir := t.TempDir()
			pause, out := filepath.Join(dir, "pause"), filepath.Join(dir, "out")
			os.Mkdir(pause, 0o755)
			p := startBinary(t, c.bin, "pause=*:1", pause, "run", sc, "--quiet", "--no-report", "--out", out)
			if c.hooks {
				p.waitFiles(t, filepath.Join(pause, "q.paused"))
				if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
					t.Fatal("the paused run wrote its results")
				}
				if err := os.WriteFile(filepath.Join(pause, "go"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				<-p.done
			} else {
				p.waitEnd(t, filepath.Join(pause, "q.paused"))
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("exit %d: %s", code, p.stderr.String())
			}
			if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
				t.Fatalf("the run wrote no results: %v", err)
			}
			_, err = os.Stat(filepath.Join(pause, "q.paused"))
			if paused := err == nil; paused != c.hooks {
				t.Errorf("the run paused: %v, want %v", paused, c.hooks)
			}
		})
	}
}

// waitEnd waits until the process ends, and fails the test if the file
// paused appears first (a paused run would wait forever); a run that
// neither ends nor pauses ends in the test binary's timeout, not on a
// deadline of its own.
func (p *proc) waitEnd(t *testing.T, paused string) {
	t.Helper()
	for {
		select {
		case <-p.done:
			return
		case <-time.After(5 * time.Millisecond):
			if _, err := os.Stat(paused); err == nil {
				t.Fatal("the run paused: the test hooks are compiled in")
			}
		}
	}
}
