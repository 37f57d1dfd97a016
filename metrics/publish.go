package metrics

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// MarkerFile is the file that marks a folder as a results folder dedupsim
// wrote. It is written last, just before the folder is swapped in, so a
// folder that has it is complete; only a folder that has it (or an empty
// folder) may be replaced by a new one.
const MarkerFile = ".dedupsim-results"

const markerContent = "This folder was written by dedupsim. dedupsim replaces it when asked to\n" +
	"write results here again; it never replaces a folder without this file.\n"

// stagingKind names the temporary siblings of a results folder.
const stagingKind = "dedupsim-staging"

// Staging is a results folder being built beside the folder it will
// replace. Fill Dir, then Publish it; Discard it on any failure (it is
// safe to defer Discard: it does nothing after Publish).
//
// A killed process leaves its staging folder behind; the next Stage for
// the same target removes it (a staging folder belongs to a live process
// as long as that process holds its lock file).
type Staging struct {
	// Dir is the folder to write the results into.
	Dir string
	// Target is the folder that Publish replaces, as given.
	Target string

	abs       string
	staging   *fileio.StagingDir
	published bool
}

// Stage checks that target may be replaced (see CheckReplaceable), removes
// staging folders that killed runs left beside it, and creates a new,
// empty staging folder in target's parent (so the final swap is a rename
// within one file system).
func Stage(target string) (*Staging, error) {
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	if err := CheckReplaceable(target); err != nil {
		return nil, err
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return nil, fmt.Errorf("results folder %s: %w", target, err)
	}
	SweepPublishLock(abs)
	st, err := fileio.NewStagingDir(abs, stagingKind)
	if err != nil {
		return nil, fmt.Errorf("results folder %s: %w", target, err)
	}
	return &Staging{Dir: st.Dir, Target: target, abs: abs, staging: st}, nil
}

// ScratchDir returns a folder inside the staging folder for temporaries
// that must not outlive the run (Publish removes it), creating it.
func (s *Staging) ScratchDir() (string, error) {
	d := filepath.Join(s.Dir, ".scratch")
	if err := os.MkdirAll(d, 0o777); err != nil {
		return "", err
	}
	return d, nil
}

// Publish completes the staging folder (it removes the scratch folder and
// writes the marker) and puts it in place of the target in one rename
// (see fileio.SwapDir). The target is checked again first: a folder that
// appeared there meanwhile and is not dedupsim's is not replaced.
func (s *Staging) Publish() error {
	if s.published {
		return fmt.Errorf("results folder %s: already published", s.Target)
	}
	if err := os.RemoveAll(filepath.Join(s.Dir, ".scratch")); err != nil {
		return fmt.Errorf("results folder %s: %w", s.Target, err)
	}
	if err := fileio.WriteFile(filepath.Join(s.Dir, MarkerFile), []byte(markerContent)); err != nil {
		return fmt.Errorf("results folder %s: %w", s.Target, err)
	}
	if err := fileio.SyncDir(s.Dir); err != nil {
		return fmt.Errorf("results folder %s: %w", s.Target, err)
	}
	pl, err := LockPublish(s.abs)
	if err != nil {
		return fmt.Errorf("results folder %s: %w", s.Target, err)
	}
	if err := CheckReplaceable(s.Target); err != nil {
		UnlockPublish(s.abs, pl)
		return err
	}
	if err := fileio.SwapDir(s.Dir, s.abs); err != nil {
		UnlockPublish(s.abs, pl)
		return fmt.Errorf("results folder %s: %w", s.Target, err)
	}
	UnlockPublish(s.abs, pl)
	s.published = true
	// The swap is done; what follows only tidies up.
	fileio.SyncDir(filepath.Dir(s.abs))
	s.release()
	return nil
}

// Discard removes the staging folder unless it was published.
func (s *Staging) Discard() {
	if s == nil || s.published {
		return
	}
	s.published = true
	os.RemoveAll(s.Dir)
	s.release()
}

func (s *Staging) release() { s.staging.Release() }

// CheckReplaceable reports whether dedupsim may replace the folder path
// with a new results folder: when nothing is there, when it is an empty
// folder, or when it is a results folder dedupsim wrote (it holds
// MarkerFile). Anything else (a file, a symlink, a folder of someone
// else's, the root folder) is refused with one line, and nothing is
// touched.
func CheckReplaceable(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if filepath.Dir(abs) == abs {
		return fmt.Errorf("%s: the root folder cannot be a results folder; choose a folder of its own, such as results/NAME", path)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: is a symlink; refusing to replace it (give the folder it points to, or another path)", path)
	case !fi.IsDir():
		return fmt.Errorf("%s: is a file, not a results folder; refusing to replace it (choose another path)", path)
	}
	if m, err := os.Lstat(filepath.Join(abs, MarkerFile)); err == nil && m.Mode().IsRegular() {
		return nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("%s: exists and is not a dedupsim results folder (it has no %s file); refusing to replace it (choose another path, or empty it yourself)", path, MarkerFile)
}

// IsResultsFolder reports whether dir carries the results marker.
func IsResultsFolder(dir string) bool {
	m, err := os.Lstat(filepath.Join(dir, MarkerFile))
	return err == nil && m.Mode().IsRegular()
}
