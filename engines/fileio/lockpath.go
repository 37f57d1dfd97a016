package fileio

import "os"

// Holds reports whether the lock is on the file now at path: false when
// the file was removed or replaced after the lock's file was opened, as
// when another process swept a stale lock file between this process's
// open and its flock. A lock on a file no longer at path protects nothing.
func (l *Lock) Holds(path string) bool {
	held, err := l.f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(held, now)
}

// RandomName returns 12 random hex digits, for a name no other process
// picks.
func RandomName() string { return randomSuffix() }
