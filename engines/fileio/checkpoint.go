package fileio

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// TryLockNoFollow is TryLock for a lock file inside a folder that others
// may have written to: it never follows a symlink at path (O_NOFOLLOW) and
// refuses anything that is not a regular file, checked on the open file,
// so a planted link or FIFO cannot make the lock create, truncate or block
// on a file elsewhere. A lock held elsewhere returns a *LockedError naming
// the holder's pid.
func TryLockNoFollow(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|nonblock, 0o666)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &NotRegularError{Path: path, Mode: os.ModeSymlink}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return lockOpen(f, path)
}

// ProbeLock reports whether the lock file at path is held by a process,
// without creating, truncating or keeping anything: it opens an existing
// regular file read-only (which works on a read-only mount), takes a
// shared lock and releases it at once. A missing file is not held. A held
// lock returns a *LockedError naming the holder's pid.
func ProbeLock(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|nonblock, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return &NotRegularError{Path: path, Mode: os.ModeSymlink}
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &LockedError{Path: path, PID: readPID(path)}
		}
		return fmt.Errorf("%s: lock: %w", path, err)
	}
	return nil
}
