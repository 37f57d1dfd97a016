package fileio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// StagingDir is a folder being built beside the folder abs it will
// replace (a sibling, so the final swap is a rename within one file
// system), named "."+base(abs)+"."+kind+"-<random>" and held by a lock
// file of the same name plus ".lock" for as long as its process lives.
type StagingDir struct {
	// Dir is the staging folder.
	Dir      string
	lock     *Lock
	lockPath string
}

// NewStagingDir removes the staging folders of kind that dead processes
// left beside abs (those whose lock file no process holds) and creates a
// new, empty one under its lock. The lock comes before the folder, and a
// sweep removes a lock file while holding it, so a live staging folder is
// never swept.
func NewStagingDir(abs, kind string) (*StagingDir, error) {
	sweepStagingDirs(abs, kind)
	for range 100 {
		dir := TempName(abs, kind)
		lockPath := dir + ".lock"
		lock, err := TryLock(lockPath)
		var locked *LockedError
		if errors.As(err, &locked) {
			continue // another process's sweep holds it for a moment
		}
		if err != nil {
			return nil, err
		}
		if !lock.Holds(lockPath) {
			// Swept between our open and our flock: take another name.
			lock.Unlock()
			continue
		}
		if err := os.Mkdir(dir, 0o777); err != nil {
			os.Remove(lockPath)
			lock.Unlock()
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return nil, err
		}
		return &StagingDir{Dir: dir, lock: lock, lockPath: lockPath}, nil
	}
	return nil, fmt.Errorf("could not create a staging folder beside it")
}

// Release removes the lock file and releases the lock; the folder stays
// (it is the published folder now, or the caller removed it).
func (s *StagingDir) Release() {
	os.Remove(s.lockPath)
	s.lock.Unlock()
}

// sweepStagingDirs removes the staging folders of kind beside abs whose
// lock is free: their process is gone.
func sweepStagingDirs(abs, kind string) {
	esc := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	parent, base := filepath.Dir(abs), filepath.Base(abs)
	locks, _ := filepath.Glob(filepath.Join(parent, "."+esc.Replace(base)+"."+kind+"-*.lock"))
	for _, lockPath := range locks {
		l, err := TryLock(lockPath)
		if err != nil {
			continue // a live process's, or not ours to judge
		}
		// The lock file goes while held: a process that opened it
		// before then finds its lock on a file no longer there (Holds).
		os.RemoveAll(strings.TrimSuffix(lockPath, ".lock"))
		os.Remove(lockPath)
		l.Unlock()
	}
}
