package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTooManyOpenFilesIsRefusedUpFront: a Pebble query with thousands of
// shuffle partitions failed after minutes with "too many open files". Under
// a hard limit of 1,000 descriptors, 200 partitions (about 2,400 files)
// must be refused at once in one line; under the same soft limit with a
// higher hard one, the run raises its soft limit and runs. (Scaled down:
// a hard limit of 150 and 20 partitions.)
func TestTooManyOpenFilesIsRefusedUpFront(t *testing.T) {
	sc := writeScenario(t, strings.Replace(smallScenario, "queries:", "store: pebble\nspark: {partitions: 20}\nqueries:", 1))
	bin := simulateBinary(t)
	runUnder := func(ulimit string) (int, string, time.Duration) {
		cmd := exec.Command("sh", "-c", ulimit+` && exec "$0" "$@"`, bin, "run", sc, "--quiet", "--no-report", "--out", t.TempDir()+"/o")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		t0 := time.Now()
		cmd.Run()
		return cmd.ProcessState.ExitCode(), stderr.String(), time.Since(t0)
	}
	code, errs, took := runUnder("ulimit -n 150")
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "files open") || !strings.Contains(errs, "limit of 150") {
		t.Fatalf("exit %d after %v: %q; want exit 1 and one line on the open-file limit", code, took, errs)
	}
	if took > 10*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	if code, errs, _ := runUnder("ulimit -Hn 20000 && ulimit -Sn 150"); code != 0 {
		t.Fatalf("a raisable soft limit: exit %d: %s", code, errs)
	}
}
