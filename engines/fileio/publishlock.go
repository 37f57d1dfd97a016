package fileio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// publishWait bounds how long Publish waits for another process's publish
// into the same target: a publish is a check and a rename, milliseconds.
const publishWait = time.Minute

// publishLockPath is the lock file that serializes the publishes of one
// target: beside it, hidden, named after it.
func publishLockPath(abs string) string {
	return filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+".dedupsim-publish.lock")
}

// lockPublish takes the publish lock of the folder abs (an absolute
// path), waiting for another process's publish to end, so that checking
// the target and swapping it are one step for every dedupsim process:
// two runs into one --out both publish, one after the other, instead of the second finding a folder
// where it checked there was none. The lock file is removed while held
// (unlockPublish); a process that opened it before then finds its lock on
// a file no longer there (Lock.Holds) and opens it again.
func lockPublish(abs string) (*Lock, error) {
	return lockPublishWith(abs, TryLock)
}

// lockPublishWith is lockPublish with the lock attempt passed in, so that a
// test can put another process's unlock between opening the lock file and
// locking it.
func lockPublishWith(abs string, tryLock func(path string) (*Lock, error)) (*Lock, error) {
	path := publishLockPath(abs)
	deadline := time.Now().Add(publishWait)
	for {
		l, err := tryLock(path)
		if err == nil {
			if l.Holds(path) {
				return l, nil
			}
			l.Unlock()
			continue
		}
		var locked *LockedError
		if !errors.As(err, &locked) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another process (pid %d) has been publishing into it for %v", locked.PID, publishWait)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// unlockPublish removes the publish lock file and releases it.
func unlockPublish(abs string, l *Lock) {
	os.Remove(publishLockPath(abs))
	l.Unlock()
}

// sweepPublishLock removes the publish lock file a killed process left,
// when no process holds it.
func sweepPublishLock(abs string) {
	path := publishLockPath(abs)
	if _, err := os.Lstat(path); err != nil {
		return
	}
	l, err := TryLock(path)
	if err != nil {
		return
	}
	unlockPublish(abs, l)
}
