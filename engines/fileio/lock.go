package fileio

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// LockedError reports a lock held by another process (or another open of
// the same lock in this one).
type LockedError struct {
	// Path is the lock file.
	Path string
	// PID is the holder's process id as it wrote it, 0 if unknown.
	PID int
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s: locked by process %d", e.Path, e.PID)
	}
	return fmt.Sprintf("%s: locked by another process", e.Path)
}

// Lock is an exclusive advisory lock (flock(2)) on a lock file, released
// by Unlock or when the process dies, however it dies.
type Lock struct {
	f *os.File
}

// TryLock takes the exclusive lock on the file at path, creating it (mode
// 0666 less the umask) if needed, and records the caller's pid in it. It
// never waits: a lock held elsewhere returns a *LockedError naming the
// holder's pid.
func TryLock(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	return lockOpen(f, path)
}

// lockOpen takes the exclusive lock on the open file f (at path) without
// waiting, and records the caller's pid in it; it closes f on failure.
func lockOpen(f *os.File, path string) (*Lock, error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Path: path, PID: readPID(path)}
		}
		return nil, fmt.Errorf("%s: lock: %w", path, err)
	}
	err := f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

func readPID(path string) int {
	data, err := ReadFile(path, 64)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return pid
}

// Unlock releases the lock. The lock file stays, so the next holder
// reuses it.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
