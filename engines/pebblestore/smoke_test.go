package pebblestore

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBenchmarksRun runs every benchmark of the package once, in its short
// form (-benchtime 1x -short: the small sizes), in a child process, so
// that go test ./... catches a benchmark that fails its own checks (the
// store against the bare loop) or no longer runs.
func TestBenchmarksRun(t *testing.T) {
	if raceEnabled {
		t.Skip("the benchmarks' short form is too slow under the race detector")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=.", "-test.benchtime=1x", "-test.short")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the benchmarks failed: %v\n%s", err, out)
	}
	for _, name := range []string{"BenchmarkStore/op=add/", "BenchmarkStore/op=steady/", "BenchmarkBarePebble/", "BenchmarkEvict/", "BenchmarkCommit/fsync=true"} {
		if !strings.Contains(string(out), name) {
			t.Errorf("%s did not run:\n%s", name, out)
		}
	}
}
