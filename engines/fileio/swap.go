package fileio

import (
	"errors"
	"fmt"
	"os"
)

var errExchangeUnsupported = errors.New("atomic exchange unsupported")

// SwapDir puts the folder staging in place of target in one step and
// removes what target held before. When target does not exist this is one
// rename. When it does, on Linux the two are exchanged atomically
// (renameat2 RENAME_EXCHANGE), so a reader, or a crash, sees either the
// old folder or the new one, whole; elsewhere (or on a file system without
// the exchange) target is first renamed aside, which leaves a moment in
// which target does not exist, and the old folder survives under
// ".<base>.old-*" if the process dies in that moment.
func SwapDir(staging, target string) error {
	if _, err := os.Lstat(target); errors.Is(err, os.ErrNotExist) {
		return os.Rename(staging, target)
	}
	err := exchange(staging, target)
	if err == nil {
		// staging now holds the old folder.
		return os.RemoveAll(staging)
	}
	if !errors.Is(err, errExchangeUnsupported) {
		return err
	}
	old := TempName(target, "old")
	if err := os.Rename(target, old); err != nil {
		return err
	}
	if err := os.Rename(staging, target); err != nil {
		if rerr := os.Rename(old, target); rerr != nil {
			return fmt.Errorf("%w (the previous folder is kept at %s)", err, old)
		}
		return err
	}
	return os.RemoveAll(old)
}
