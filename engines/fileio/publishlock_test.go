package fileio

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLockPublishRechecksTheFile puts, deterministically, the interleaving
// the concurrent publish test hit only by chance (round 11 of 30): this
// process opens the lock file, another one then removes it and unlocks,
// and this one locks a file no longer there. LockPublish must see that it
// holds no lock on the lock file and try again, so that a third process
// cannot lock a new file at the same path at the same time.
func TestLockPublishRechecksTheFile(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "out")
	path := publishLockPath(abs)
	calls := 0
	try := func(p string) (*Lock, error) {
		calls++
		l, err := TryLock(p)
		if err == nil && calls == 1 {
			// The other process's unlockPublish, between open and lock.
			os.Remove(p)
		}
		return l, err
	}
	l, err := lockPublishWith(abs, try)
	if err != nil {
		t.Fatal(err)
	}
	defer unlockPublish(abs, l)
	if !l.Holds(path) {
		t.Fatal("LockPublish returned a lock on a removed lock file: another process can lock the path too")
	}
	if calls != 2 {
		t.Fatalf("%d lock attempts, want 2", calls)
	}
}
