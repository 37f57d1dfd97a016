package memstore

import (
	"bufio"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
)

// workload is a deterministic stream of batches: batch b adds rows new
// ids (every tenth row repeats an id of three batches back, evicted or
// not), each expiring at its id, but one id in forever (if set) that never
// expires (so that most slabs never empty), and
// then evicts up to the id lag batches back. Batch b depends on b alone,
// so the state of any version is known without the store.
type workload struct {
	rows int
	lag  int64
	// forever, if not 0: one id in forever never expires.
	forever int64
}

func wlKey(id int64) []byte { return fmt.Appendf(nil, "id-%08x-%04x-%020d", id, id%7919, id) }

// fataler is what the workload reports a failure to: a test, or the kill
// test's child.
type fataler interface {
	Fatalf(format string, args ...any)
}

// batch runs batch b on s (nil: the model only) and m, committing s when
// commit is set.
func (w workload) batch(t fataler, s engines.Store, m model, b int64, commit bool) {
	for i := range w.rows {
		id := b*int64(w.rows) + int64(i)
		if i%10 == 9 && id >= 3*int64(w.rows) {
			id -= 3 * int64(w.rows)
		}
		exp := id
		if w.forever > 0 && id%w.forever == 0 {
			exp = engines.NoExpiry
		}
		k := wlKey(id)
		want := m.add(string(k), exp)
		if s != nil {
			got, err := s.Add(k, exp)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if got != want {
				t.Fatalf("batch %d: Add(%s) = %v, model %v", b, k, got, want)
			}
		}
	}
	wm := (b + 1 - w.lag) * int64(w.rows)
	want := m.evict(wm)
	if s != nil {
		got, err := s.Evict(wm)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if got != want {
			t.Fatalf("batch %d: Evict(%d) = %d, model %d", b, wm, got, want)
		}
		if commit {
			if err := s.Commit(b); err != nil {
				t.Fatalf("%v", err)
			}
		}
	}
}

// modelAt is the state of version v.
func (w workload) modelAt(t fataler, v int64) model {
	m := model{}
	for b := range v {
		w.batch(t, nil, m, b, false)
	}
	return m
}

// snapshotVersions lists the versions of dir's snapshot files, ascending.
func snapshotVersions(t *testing.T, dir string) []int64 {
	t.Helper()
	var out []int64
	for _, n := range fileNames(t, dir) {
		if v, ok := strings.CutSuffix(n, ".snapshot"); ok && !strings.HasPrefix(n, ".") {
			x, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, x)
		}
	}
	return out
}

// TestBackgroundSnapshotsMatchModel runs a long stream through a
// checkpointed store whose snapshots are written in the background while
// the store keeps adding and evicting (slabs empty and are recycled as it
// goes): every snapshot file holds exactly the model's state of its
// version, every version reopens to the model's state, the snapshots are
// spaced by bytes (not one per version), and BytesWritten counts exactly
// the bytes of the files written.
func TestBackgroundSnapshotsMatchModel(t *testing.T) {
	w := workload{rows: 2000, lag: 10, forever: 97}
	dir := t.TempDir()
	c, err := Open(dir, 0, Options{SnapshotEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := model{}
	const batches = 60
	for b := range int64(batches) {
		w.batch(t, c, m, b, true)
		if b%15 == 0 && !maps.Equal(contents(t, c), m) {
			t.Fatalf("version %d: the store differs from the model", b+1)
		}
	}
	written := c.BytesWritten
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var onDisk int64
	for _, n := range fileNames(t, dir) {
		if strings.HasPrefix(n, ".") {
			t.Fatalf("a temporary file is left: %s", n)
		}
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		onDisk += fi.Size()
	}
	if written != onDisk {
		t.Fatalf("BytesWritten %d, the files hold %d", written, onDisk)
	}
	snaps := snapshotVersions(t, dir)
	if len(snaps) < 4 || len(snaps) > batches/3 {
		t.Fatalf("snapshots at versions %v: want them spaced by bytes of deltas, some and not at every version", snaps)
	}
	// The model's state at every version checked, in one replay.
	check := map[int64]bool{batches: true, snaps[1] + 1: true}
	for _, v := range snaps {
		check[v] = true
	}
	models := map[int64]model{}
	m = model{}
	for b := range int64(batches) {
		w.batch(t, nil, m, b, false)
		if check[b+1] {
			models[b+1] = maps.Clone(m)
		}
	}
	for _, v := range snaps {
		s := &Checkpointed{Store: New(), dir: dir}
		state, err := readStateFile(s.dir, fmt.Sprintf("%d.snapshot", v), snapshotMagic)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(model(state), models[v]) {
			t.Fatalf("%d.snapshot differs from the model's state of version %d", v, v)
		}
	}
	// Load reads as Open does; Open at a version truncates the deltas
	// after it (uncommitted), so it comes last.
	for _, v := range []int64{snaps[len(snaps)-1], snaps[1] + 1, batches} {
		r, err := Load(dir, v)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(contents(t, r), models[v]) {
			t.Fatalf("loaded at version %d: the store differs from the model", v)
		}
		r.Close()
	}
	for _, v := range []int64{batches, snaps[1] + 1} {
		r, err := Open(dir, v, Options{SnapshotEvery: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(contents(t, r), models[v]) {
			t.Fatalf("reopened at version %d: the store differs from the model", v)
		}
		r.Close()
	}
}

// TestSnapshotViewIsFrozen holds a background snapshot before it reads
// anything, then turns the whole state over many times (every slab that
// held a live key at the snapshot's version empties, since no key lives
// forever, and new keys need slabs): the snapshot must still write the
// state of its version.
func TestSnapshotViewIsFrozen(t *testing.T) {
	w := workload{rows: 3000, lag: 4}
	dir := t.TempDir()
	c, err := Open(dir, 0, Options{SnapshotEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m := model{}
	for b := range int64(6) {
		w.batch(t, c, m, b, true)
	}
	release := make(chan struct{})
	c.slabHook = func() { <-release }
	// The next commit whose deltas outweigh the last snapshot starts one.
	b := int64(6)
	for c.bg == nil || c.bg.version <= 6 {
		if b > 40 {
			t.Fatal("no snapshot started")
		}
		w.batch(t, c, m, b, true)
		b++
	}
	v := c.bg.version
	frozen := maps.Clone(m)
	if v != b {
		t.Fatalf("snapshot of version %d, the store is at %d", v, b)
	}
	// Adds and evictions, but no commit (which would wait for the held
	// snapshot halfway to the next).
	for range 5 * w.lag {
		w.batch(t, c, m, b, false)
		b++
	}
	close(release)
	if err := c.join(); err != nil {
		t.Fatal(err)
	}
	state, err := readStateFile(c.dir, fmt.Sprintf("%d.snapshot", v), snapshotMagic)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(model(state), frozen) {
		t.Fatalf("%d.snapshot: %d keys, not the state of its version (%d keys)", v, len(state), len(frozen))
	}
	if !maps.Equal(contents(t, c), m) {
		t.Fatal("the live store differs from the model")
	}
}

// waitGoroutines waits up to d for the goroutine count to come back to
// n.
// waitGoroutines waits until at most n goroutines run. With d above 0 it
// fails the test after d; with d 0 it waits as long as it takes (a
// goroutine left behind then ends in the test binary's timeout, with every
// stack), so that no clock decides on a slow machine.
func waitGoroutines(t *testing.T, n int, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(time.Millisecond) {
		if runtime.NumGoroutine() <= n {
			return
		}
		if d > 0 && time.Now().After(end) {
			t.Fatalf("%d goroutines, %d before the store was opened", runtime.NumGoroutine(), n)
		}
	}
}

// TestCloseAndAbortEndTheSnapshot: Close waits for a snapshot under way,
// which is then complete; Abort cancels it, leaving no file; neither
// leaves a goroutine behind.
func TestCloseAndAbortEndTheSnapshot(t *testing.T) {
	w := workload{rows: 40_000, lag: 100}
	for _, abort := range []bool{false, true} {
		t.Run(fmt.Sprintf("abort=%v", abort), func(t *testing.T) {
			// The snapshot is held at its first slab until Close or Abort
			// is called: until ending is set, right before the call, and
			// for Abort until it has asked the snapshot to stop. No clock
			// decides, so a slow machine cannot let the snapshot finish
			// before the call.
			var ending atomic.Bool
			base := runtime.NumGoroutine()
			dir := t.TempDir()
			c, err := Open(dir, 0, Options{SnapshotEvery: 1})
			if err != nil {
				t.Fatal(err)
			}
			var bg *bgSnapshot // set before ending
			c.slabHook = func() {
				for !ending.Load() || abort && !bg.cancel.Load() {
					time.Sleep(time.Millisecond)
				}
			}
			m := model{}
			w.batch(t, c, m, 0, true)
			if c.bg == nil {
				t.Fatal("no snapshot started")
			}
			bg = c.bg
			ending.Store(true)
			if abort {
				c.Abort()
			} else if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			names := fileNames(t, dir)
			// The snapshot's goroutine may be between closing its done
			// channel and exiting: it must end; one left behind would keep
			// this wait going until the test binary's timeout.
			waitGoroutines(t, base, 0)
			if abort {
				if !slicesEqual(names, []string{"1.log"}) {
					t.Fatalf("after Abort: files %v, want only 1.log", names)
				}
				return
			}
			if !slicesEqual(names, []string{"1.log", "1.snapshot"}) {
				t.Fatalf("after Close: files %v, want 1.log and 1.snapshot", names)
			}
			state, err := readStateFile(dir, "1.snapshot", snapshotMagic)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(model(state), m) {
				t.Fatal("1.snapshot differs from the state")
			}
		})
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// killWorkload is the kill test's stream: a few dozen slabs of state,
// snapshots slowed down so that kills land in them.
var killWorkload = workload{rows: 2000, lag: 25, forever: 97}

// TestMain runs the kill test's child instead of the tests when
// $MEMSTORE_KILL_DIR is set (see runKillChild).
func TestMain(m *testing.M) {
	if dir := os.Getenv("MEMSTORE_KILL_DIR"); dir != "" {
		runKillChild(dir)
		return
	}
	os.Exit(m.Run())
}

// childFail ends the kill test's child with a message.
type childFail struct{}

func (childFail) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kill child: "+format+"\n", args...)
	os.Exit(2)
}

// runKillChild is the kill test's child process: it opens the store in dir
// at $MEMSTORE_KILL_VERSION and commits batch after batch, printing each
// version once Commit has returned, until it is killed.
func runKillChild(dir string) {
	var f childFail
	v, err := strconv.ParseInt(os.Getenv("MEMSTORE_KILL_VERSION"), 10, 64)
	if err != nil {
		f.Fatalf("%v", err)
	}
	c, err := Open(dir, v, Options{SnapshotEvery: 1})
	if err != nil {
		f.Fatalf("%v", err)
	}
	c.slabHook = func() { time.Sleep(time.Millisecond) }
	w := killWorkload
	m := w.modelAt(f, v)
	out := bufio.NewWriter(os.Stdout)
	for b := v; b < v+100_000; b++ {
		w.batch(f, c, m, b, true)
		fmt.Fprintf(out, "committed %d\n", b+1)
		out.Flush()
	}
	f.Fatalf("not killed")
}

// TestKillDuringBackgroundSnapshots kills a process with SIGKILL at random
// moments while it commits batches and writes snapshots in the
// background, and reopens its store at the last version it reported
// committed: the state must be the model's of that version, whatever was
// under way. The next child goes on from there. Some kills must land
// during a snapshot (an unfinished one left its temporary file).
func TestKillDuringBackgroundSnapshots(t *testing.T) {
	w := killWorkload
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(14, 2))
	last := int64(0)
	midSnapshot := 0
	// The model, advanced to each kill's last version.
	m, mv := model{}, int64(0)
	for kill := 0; kill < 8 || midSnapshot == 0; kill++ {
		if kill == 40 {
			t.Fatal("no kill landed during a background snapshot")
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "MEMSTORE_KILL_DIR="+dir, "MEMSTORE_KILL_VERSION="+strconv.FormatInt(last, 10))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan int64, 1<<16)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					lines <- n
				}
			}
			close(lines)
		}()
		// Let it commit a few batches, then kill it at a random moment.
		for range 3 {
			if _, ok := <-lines; !ok {
				t.Fatal("the child ended before it was killed")
			}
		}
		time.Sleep(time.Duration(rng.IntN(150_000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		for v := range lines {
			last = v
		}
		for _, n := range fileNames(t, dir) {
			if strings.HasPrefix(n, ".") && strings.Contains(n, ".snapshot.tmp-") {
				midSnapshot++
			}
		}
		c, err := Open(dir, last, Options{SnapshotEvery: 1})
		if err != nil {
			t.Fatalf("kill %d: reopen at version %d: %v", kill, last, err)
		}
		for ; mv < last; mv++ {
			w.batch(t, nil, m, mv, false)
		}
		if !maps.Equal(contents(t, c), m) {
			t.Fatalf("kill %d: reopened at version %d, the state differs from the model", kill, last)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(snapshotVersions(t, dir)) == 0 {
		t.Fatal("no snapshot was ever finished")
	}
	t.Logf("reached version %d; %d kills during a snapshot", last, midSnapshot)
}
