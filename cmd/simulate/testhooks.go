//go:build dedupsim_testhooks

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/runner/runnertest"
)

// This file is compiled only with the build tag dedupsim_testhooks, which
// the tests of this package pass when they build the command
// (binary_test.go); a release build compiles testhooks_off.go instead, and
// its binary ignores testHooksEnv.

// testHooksEnv names the environment variable that the tests of this
// package set to drive `simulate run` from outside: FOR TESTS ONLY, not a
// user interface, and it never changes the results. Its value is a list
// of settings separated by ";":
//
//	snapshot-at=N,M,...   with --checkpoint, every job snapshots after its
//	                      batches N, M, ... (and not on the wall clock)
//	snapshot-every=K      with --checkpoint, every job snapshots after every
//	                      K-th batch (batches K-1, 2K-1, ...)
//	pause=JOB:N,...       the job JOB ("*" for every job) stops after the
//	                      N-th batch it runs in this process (after its
//	                      snapshot, if one was due; batch ids start again
//	                      after a lost checkpoint, counts do not), or with N
//	                      "end" once its stream is over, before it finishes;
//	                      it writes DIR/JOB.paused and waits until DIR/JOB.go
//	                      or DIR/go exists
//	pause-dir=DIR         the folder of those files (required with pause)
//	max-batch-rows=N      lowers the runner's limit on a batch's rows
//	                      (runnertest.Hooks.MaxBatchRows); plan passes it to
//	                      its cluster sizing (plan.SparkOptions), so that a
//	                      test meets the limit without millions of rows
//
// The kill and lock tests use it to hold a run at a chosen point instead
// of racing it.
const testHooksEnv = "DEDUPSIM_TEST_HOOKS"

// applyTestHooks sets opts' test hooks from testHooksEnv, if set.
func applyTestHooks(opts *runner.Options) error {
	spec := os.Getenv(testHooksEnv)
	if spec == "" {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: "+format, append([]any{testHooksEnv}, args...)...)
	}
	var h runnertest.Hooks
	snapAt := map[int64]bool{}
	every := int64(0)
	pauses := map[string]int64{} // job -> batch, -1 for end
	dir := ""
	for _, kv := range strings.Split(spec, ";") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "snapshot-at":
			for _, n := range strings.Split(v, ",") {
				b, err := strconv.ParseInt(n, 10, 64)
				if err != nil || b < 0 {
					return bad("snapshot-at %q: want batch ids", v)
				}
				snapAt[b] = true
			}
		case "snapshot-every":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return bad("snapshot-every %q: want a count of batches", v)
			}
			every = n
		case "pause":
			for _, p := range strings.Split(v, ",") {
				job, at, ok := strings.Cut(p, ":")
				if !ok || job == "" {
					return bad("pause %q: want JOB:BATCH or JOB:end", p)
				}
				b := int64(-1)
				if at != "end" {
					var err error
					if b, err = strconv.ParseInt(at, 10, 64); err != nil || b < 1 {
						return bad("pause %q: want JOB:BATCH or JOB:end", p)
					}
				}
				pauses[job] = b
			}
		case "pause-dir":
			dir = v
		case "max-batch-rows":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return bad("max-batch-rows %q: want a count of rows", v)
			}
			h.MaxBatchRows = n
		default:
			return bad("unknown setting %q", k)
		}
	}
	if len(snapAt) > 0 || every > 0 {
		h.SnapshotAt = func(_ string, next int64) bool {
			return snapAt[next-1] || every > 0 && next%every == 0
		}
	}
	if len(pauses) > 0 {
		if dir == "" {
			return bad("pause needs pause-dir")
		}
		var mu sync.Mutex
		ran := map[string]int64{}
		h.AfterBatch = func(job string, next int64, done bool) {
			at, ok := pauses[job]
			if !ok {
				at, ok = pauses["*"]
			}
			if !ok {
				return
			}
			mu.Lock()
			if !done {
				ran[job]++
			}
			n := ran[job]
			mu.Unlock()
			if done && at < 0 || !done && n == at {
				pauseUntilGo(dir, job, next)
			}
		}
	}
	*opts = runnertest.With(*opts, h)
	return nil
}

// pauseUntilGo announces that job is paused and waits for the go file.
func pauseUntilGo(dir, job string, next int64) {
	os.WriteFile(filepath.Join(dir, job+".paused"), []byte(strconv.FormatInt(next, 10)+"\n"), 0o644)
	for {
		for _, name := range []string{job + ".go", "go"} {
			if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
				return
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}
