package pebblestore

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
)

// fullDisk is a file system that fills up: once armed, every write to a
// file whose name matches fails with ENOSPC, as on a full disk.
type fullDisk struct {
	vfs.FS
	armed atomic.Bool
	match func(name string) bool
	// createOK lets files be created, so that only writes fail.
	createOK bool
}

func (d *fullDisk) wrap(f vfs.File, name string, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	return &fullFile{File: f, d: d, name: name}, nil
}

func (d *fullDisk) Create(name string) (vfs.File, error) {
	if d.armed.Load() && d.match(name) && !d.createOK {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	f, err := d.FS.Create(name)
	return d.wrap(f, name, err)
}

func (d *fullDisk) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := d.FS.ReuseForWrite(oldname, newname)
	return d.wrap(f, newname, err)
}

func (d *fullDisk) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := d.FS.OpenReadWrite(name, opts...)
	return d.wrap(f, name, err)
}

type fullFile struct {
	vfs.File
	d    *fullDisk
	name string
}

func (f *fullFile) full() bool { return f.d.armed.Load() && f.d.match(f.name) }

func (f *fullFile) Write(p []byte) (int, error) {
	if f.full() {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

func (f *fullFile) WriteAt(p []byte, off int64) (int, error) {
	if f.full() {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(p, off)
}

// oneLine fails the test unless err is a single line mentioning every one
// of want.
func wantOneLine(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("%s: the error is more than one line: %q", what, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: the error %q does not mention %q", what, msg, w)
		}
	}
}

// closeWithin closes s and fails the test if Close hangs.
func closeWithin(t *testing.T, s *Store) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		s.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs after the error")
	}
}

// TestFullDiskIsAnErrorNotAPanic fills the disk under a store's
// changelogs: the Commit whose changelog cannot be written returns a
// one-line error naming the store's folder and the cause, instead of a
// panic; every later call returns it, Close returns, and the reopened
// store is at the last batch committed before.
func TestFullDiskIsAnErrorNotAPanic(t *testing.T) {
	disk := &fullDisk{FS: vfs.Default, match: func(name string) bool {
		return strings.Contains(name, string(filepath.Separator)+changesDir+string(filepath.Separator))
	}}
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Open(dir, Options{fs: disk})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, "a", 1, true)
	mustCommit(t, s, 0)
	disk.armed.Store(true)
	mustAdd(t, s, "b", 2, true)
	err = s.Commit(1)
	wantOneLine(t, "Commit on a full disk", err, dir, "no space left on device", "commit batch 1")
	if _, err2 := s.Add([]byte("c"), 3); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("Add after the failed Commit: %v, want the Commit's error", err2)
	}
	closeWithin(t, s)
	disk.armed.Store(false)
	s, err = Open(dir, Options{fs: disk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b, ok := s.LastCommitted(); !ok || b != 0 || rangeAll(t, s) != "a=1;" {
		t.Fatalf("reopened at batch %d (%v) holding %q, want batch 0 holding a", b, ok, rangeAll(t, s))
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, changesDir)); len(ents) != 1 {
		t.Errorf("the changes folder holds %d files, want the one changelog (no temporary left)", len(ents))
	}
}

// TestFullDiskAtFlush fills the disk under the sstables a flush writes:
// the Commit that flushes returns one line naming the store's folder and
// the cause; the batch it committed is in its changelog, and the reopened
// store has it.
func TestFullDiskAtFlush(t *testing.T) {
	disk := &fullDisk{FS: vfs.Default, match: func(name string) bool {
		return strings.Contains(name, string(filepath.Separator)+stagingDir+string(filepath.Separator))
	}}
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Open(dir, Options{fs: disk, MemTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	disk.armed.Store(true)
	b, added := int64(0), 0
	for ; ; b++ {
		for i := range 50 {
			if _, err := s.Add(fmt.Appendf(nil, "%d-%d", b, i), b); err != nil {
				t.Fatal(err)
			}
			added++
		}
		if err = s.Commit(b); err != nil || b > 1000 {
			break
		}
	}
	wantOneLine(t, "Commit that flushes on a full disk", err, dir, "no space left on device", "flush", fmt.Sprintf("commit batch %d", b))
	closeWithin(t, s)
	disk.armed.Store(false)
	s, err = Open(dir, Options{fs: disk, MemTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if last, ok := s.LastCommitted(); !ok || last != b || s.Len() != added {
		t.Fatalf("reopened at batch %d (%v) with %d keys, want batch %d with %d", last, ok, s.Len(), b, added)
	}
}

// TestFullDiskAtOpen fills the disk before a store is created: Pebble
// creates its MANIFEST but cannot write it, which it reports through
// Fatalf inside Open, and Open returns one line.
func TestFullDiskAtOpen(t *testing.T) {
	disk := &fullDisk{FS: vfs.Default, createOK: true, match: func(name string) bool { return strings.Contains(filepath.Base(name), "MANIFEST") }}
	disk.armed.Store(true)
	dir := filepath.Join(t.TempDir(), "s")
	_, err := Open(dir, Options{fs: disk})
	wantOneLine(t, "Open on a full disk", err, "no space left on device", "MANIFEST flush failed")
	// Nothing is left where the store was to be.
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("a failed Open left %s", dir)
	}
}

// TestBackgroundErrorStopsTheNextCommit fills the disk for sstables only:
// the memtable flush fails in the background, which Pebble retries, and
// the next Commit returns that error, once, instead of the store going on
// with a flush that cannot succeed. The store's own writes reach Pebble as
// sstables it writes itself (TestFullDiskAtFlush); Pebble flushes its
// memtable when flushes are dropped, and compacts: those are the
// background work that fails here.
func TestBackgroundErrorStopsTheNextCommit(t *testing.T) {
	disk := &fullDisk{FS: vfs.Default, match: func(name string) bool {
		return strings.HasSuffix(name, ".sst") && !strings.Contains(name, string(filepath.Separator)+stagingDir+string(filepath.Separator))
	}}
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Open(dir, Options{fs: disk, MemTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	disk.armed.Store(true)
	// Keys expire two batches after they come, so flushes are dropped and
	// Pebble flushes the range deletions. Commits go on until the
	// memtables Pebble cannot flush fill up, when a Commit would wait
	// forever for the flush: the error must come before.
	done := make(chan error, 1)
	go func() {
		key := make([]byte, 64)
		for b := int64(0); b < 10000; b++ {
			for i := range 50 {
				copy(key, fmt.Sprintf("%d-%d", b, i))
				if _, err := s.Add(key, b); err != nil {
					done <- err
					return
				}
			}
			if _, err := s.Evict(b - 2); err != nil {
				done <- err
				return
			}
			if err := s.Commit(b); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Commit hangs on a flush that cannot succeed")
	}
	wantOneLine(t, "Commit after a failed flush", err, dir, "background flush or compaction failed", "no space left on device")
	closeWithin(t, s)
}

// TestFatalOnABackgroundGoroutineExitsWithOneLine calls the store's logger
// the way a Pebble flush would, from a goroutine of its own: one line on
// stderr naming the store, and exit status 1.
func TestFatalOnABackgroundGoroutineExitsWithOneLine(t *testing.T) {
	var out bytes.Buffer
	code := make(chan int, 1)
	sh := newShared("/ck/q/state/0", Options{exit: func(c int) { code <- c }, stderr: &out})
	go storeLogger{sh}.Fatalf("MANIFEST flush failed: %v\nmore", &os.PathError{Op: "write", Path: "MANIFEST-000001", Err: syscall.ENOSPC})
	if c := <-code; c != 1 {
		t.Fatalf("exit %d, want 1", c)
	}
	want := "pebblestore /ck/q/state/0: pebble: MANIFEST flush failed: write MANIFEST-000001: no space left on device ; more\n"
	if out.String() != want {
		t.Fatalf("stderr %q, want %q", out.String(), want)
	}
}

// TestReadOnlyOpenCreatesNothing opens a store read-only in a folder whose
// LOCK file is gone (a copy that skipped it) and in one that has it: no
// file is created, none is written or touched (modification times
// included).
func TestReadOnlyOpenCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Open(dir, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	for b := int64(0); b < 3; b++ {
		runBatch(t, s, b)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	state := func() map[string]string {
		out := map[string]string{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, _ := os.Lstat(p)
			out[p] = fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
			return nil
		})
		return out
	}
	for _, withLock := range []bool{true, false} {
		if !withLock {
			if err := os.Remove(filepath.Join(dir, "LOCK")); err != nil {
				t.Fatal(err)
			}
		}
		// Old modification times, so that a touch shows.
		old := time.Now().Add(-time.Hour)
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			return os.Chtimes(p, old, old)
		})
		before := state()
		r, err := OpenReadOnly(dir, smallOpts)
		if err != nil {
			t.Fatal(err)
		}
		if r.Len() == 0 {
			t.Error("the read-only store is empty")
		}
		r.Close()
		after := state()
		for p, v := range before {
			if after[p] != v {
				t.Errorf("LOCK present %v: %s changed: %s, then %s", withLock, p, v, after[p])
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok {
				t.Errorf("LOCK present %v: %s was created", withLock, p)
			}
		}
	}
}
