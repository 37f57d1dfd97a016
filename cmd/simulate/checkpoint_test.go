package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// treeState describes every entry under dir without following links: type
// and mode, modification time, and for a file its size and content hash.
// Equal states mean nothing was created, removed, written or touched.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v %d", fi.Mode(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %d %x", len(data), sha256.Sum256(data))
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// settledTree returns treeState(dir) once two readings 500 ms apart agree:
// a held process's background work has ended. A folder that never
// settles ends in the test binary's timeout; no deadline of its own
// decides, so a slow machine cannot fail it.
func settledTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	prev := treeState(t, dir)
	for {
		time.Sleep(500 * time.Millisecond)
		cur := treeState(t, dir)
		if fmt.Sprint(cur) == fmt.Sprint(prev) {
			return cur
		}
		prev = cur
	}
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if w, ok := after[k]; !ok {
			t.Errorf("%s: %s vanished", what, k)
		} else if w != v {
			t.Errorf("%s: %s changed: %s, then %s", what, k, v, w)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

// oneLine fails the test unless stderr is one line holding every want.
func oneLine(t *testing.T, what, stderr string, want ...string) {
	t.Helper()
	if stderr == "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("%s: want one line on stderr, got %q", what, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr %q does not say %q", what, stderr, w)
		}
	}
}

// TestSecondProcessOnACheckpointIsRefused runs two `simulate run` processes
// on one checkpoint folder: the first is held after a few batches (test
// hooks), the second must exit non-zero at once with one line naming the
// folder and the first's pid, and leave the folder exactly as it was;
// `simulate state` refuses the folder too while the run holds it. The
// first then finishes normally.
func TestSecondProcessOnACheckpointIsRefused(t *testing.T) {
	sc := writeScenario(t, killScenario)
	dir := t.TempDir()
	ck, pause := filepath.Join(dir, "ck"), filepath.Join(dir, "pause")
	os.Mkdir(pause, 0o755)
	args := func(out string, store string) []string {
		// --workers 2: both jobs must reach their pause; with one worker
		// (GOMAXPROCS=1) the first paused job would hold the only slot.
		return []string{"run", sc, "--quiet", "--no-report", "--workers", "2", "--store", store, "--checkpoint", ck, "--out", filepath.Join(dir, out)}
	}
	first := start(t, "snapshot-every=2;pause=*:5", pause, args("first", "pebble")...)
	first.waitFiles(t, filepath.Join(pause, "pair.paused"), filepath.Join(pause, "within.paused"))
	// The paused run's own Pebble may still finish a compaction it started
	// before the pause; wait for the folder to settle so that only the
	// second process could change it from here on.
	before := settledTree(t, ck)
	holder := "process " + strconv.Itoa(first.cmd.Process.Pid)
	// The same run, and another store (which the folder's run.json would
	// refuse too, but the lock comes first).
	for _, store := range []string{"pebble", "memory"} {
		// It gives up at once (the lock is tried without waiting); a
		// second run that waited for the lock would wait on the held
		// first one forever, which the test binary's timeout reports.
		code, second := runProc(t, "", "", args("second", store)...)
		if code == 0 {
			t.Fatalf("a second run on a folder in use exited 0")
		}
		oneLine(t, "second run", second.stderr.String(), "checkpoint "+ck+": in use by "+holder)
	}
	if _, err := os.Stat(filepath.Join(dir, "second")); err == nil {
		t.Error("the refused run wrote its results folder")
	}
	code, _, errs := simulate(t, "state", ck)
	if code == 0 {
		t.Error("simulate state read a checkpoint a run is writing")
	}
	oneLine(t, "state", errs, ck, holder)
	sameTree(t, "checkpoint in use", before, treeState(t, ck))

	os.WriteFile(filepath.Join(pause, "go"), nil, 0o644)
	<-first.done // a first run that never finishes ends in the test binary's timeout
	if code := first.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the first run: exit %d: %s", code, first.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "first", "summary.json")); err != nil {
		t.Fatal("the first run wrote no results")
	}
}

// TestStateWritesNothing reads run checkpoints of both stores with
// `simulate state` from a tree made read-only (and, for Pebble, with one
// store's LOCK file removed, as a copy may leave it): it succeeds, and no
// file or folder is created, changed or touched.
func TestStateWritesNothing(t *testing.T) {
	sc := writeScenario(t, stateScenario)
	for _, store := range []string{"memory", "pebble"} {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			ck := filepath.Join(dir, "ck")
			if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--store", store, "--checkpoint", ck, "--out", filepath.Join(dir, "out")); code != 0 {
				t.Fatalf("run: %s", errs)
			}
			if store == "pebble" {
				locks, _ := filepath.Glob(filepath.Join(ck, "*", "query.*", "state", "0", "LOCK"))
				if len(locks) == 0 {
					t.Fatal("no Pebble LOCK file")
				}
				os.Remove(locks[0])
			}
			// Old times, so that a touch shows; then read-only.
			old := time.Now().Add(-time.Hour)
			filepath.WalkDir(ck, func(p string, d fs.DirEntry, err error) error { return os.Chtimes(p, old, old) })
			if out, err := exec.Command("chmod", "-R", "a-w", ck).CombinedOutput(); err != nil {
				t.Fatalf("chmod: %v %s", err, out)
			}
			t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", ck).Run() })
			before := treeState(t, ck)
			for _, args := range [][]string{{ck}, {ck, "--query", "within", "--format", "json"}} {
				code, out, errs := simulate(t, append([]string{"state"}, args...)...)
				if code != 0 || !strings.Contains(out, "within") {
					t.Fatalf("state %v: exit %d: %s", args, code, errs)
				}
			}
			// A query checkpoint inside the run checkpoint, directly.
			qs, _ := filepath.Glob(filepath.Join(ck, "pair", "query.*"))
			if code, _, errs := simulate(t, "state", qs[len(qs)-1]); code != 0 {
				t.Fatalf("state %s: %s", qs[len(qs)-1], errs)
			}
			sameTree(t, "state", before, treeState(t, ck))
		})
	}
}

// TestFullDiskIsOneLine runs with the checkpoint on a 3 MB tmpfs, which
// fills up: the run fails with one line naming the cause, exit status 1,
// no panic and no results, for both stores. It needs to mount a tmpfs
// (root): CI runs as root, so under CI (the CI variable set) it fails
// when it cannot mount; elsewhere it says on stderr, visible without -v,
// that it did not run. Pebble's own tests inject a full disk without it.
func TestFullDiskIsOneLine(t *testing.T) {
	if os.Geteuid() != 0 {
		cannotMount(t, "mounting a tmpfs needs root, and this test runs as uid "+strconv.Itoa(os.Geteuid()))
	}
	sc := writeScenario(t, strings.Replace(killScenario, "rate: 150/s", "rate: 1500/s", 1))
	for _, store := range []string{"memory", "pebble"} {
		t.Run(store, func(t *testing.T) {
			mnt := filepath.Join(t.TempDir(), "small")
			os.Mkdir(mnt, 0o755)
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt).CombinedOutput(); err != nil {
				cannotMount(t, fmt.Sprintf("cannot mount a tmpfs here (%v: %s)", err, bytes.TrimSpace(out)))
			}
			t.Cleanup(func() { exec.Command("umount", mnt).Run() })
			out := filepath.Join(t.TempDir(), "out")
			code, p := runProc(t, "", "", "run", sc, "--quiet", "--no-report", "--store", store, "--checkpoint", filepath.Join(mnt, "ck"), "--out", out)
			if code != 1 {
				t.Fatalf("exit %d on a full disk, want 1: %s", code, p.stderr.String())
			}
			oneLine(t, "full disk", p.stderr.String(), "no space left on device", filepath.Join(mnt, "ck"))
			if strings.Contains(p.stderr.String(), "panic") || strings.Contains(p.stderr.String(), "goroutine") {
				t.Errorf("a panic: %s", p.stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a failed run wrote its results folder")
			}
			ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				t.Errorf("killed by %v", ws.Signal())
			}
		})
	}
}

// cannotMount ends a test that needs to mount a tmpfs and cannot (why
// says why): a failure under CI, which runs as root and must run it;
// elsewhere a skip that is also printed on stderr, so that a plain
// `go test` shows the test did not run.
func cannotMount(t *testing.T, why string) {
	t.Helper()
	fatal, msg := mountVerdict(os.Getenv("CI") != "", t.Name(), why)
	if fatal {
		t.Fatal(msg)
	}
	fmt.Fprintln(os.Stderr, msg)
	t.Skip(msg)
}

// mountVerdict decides for cannotMount: fatal under CI; the message names
// the test, why, and where a full disk is tested without a mount.
func mountVerdict(ci bool, name, why string) (fatal bool, msg string) {
	if ci {
		return true, fmt.Sprintf("%s: %s, but CI must run it (CI runs as root)", name, why)
	}
	return false, fmt.Sprintf("%s: NOT RUN: %s; engines/pebblestore's TestFullDisk* inject a full disk without a mount", name, why)
}

// TestMountVerdict: a test that cannot mount its tmpfs fails under CI and
// says it did not run elsewhere.
func TestMountVerdict(t *testing.T) {
	if fatal, msg := mountVerdict(true, "TestX", "no root"); !fatal || !strings.Contains(msg, "CI must run it") {
		t.Errorf("under CI: fatal %v, %q", fatal, msg)
	}
	if fatal, msg := mountVerdict(false, "TestX", "no root"); fatal || !strings.HasPrefix(msg, "TestX: NOT RUN: no root") {
		t.Errorf("outside CI: fatal %v, %q", fatal, msg)
	}
}
