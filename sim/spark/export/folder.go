package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
)

// MarkerFile marks a folder as an export dedupsim wrote. It is written
// last, just before the folder is swapped in; only a folder that has it
// (or an empty one) may be replaced by a new export.
const MarkerFile = ".dedupsim-export"

const markerContent = "This folder is an export written by dedupsim (simulate export). dedupsim\n" +
	"replaces it when asked to export here again; it never replaces a folder without this file.\n"

// stagingKind names the temporary siblings of an export folder.
const stagingKind = "dedupsim-export-staging"

// CheckOut reports whether an export may be written at path: when nothing
// is there, when it is an empty folder, or when it is an export dedupsim
// wrote (it holds MarkerFile). Anything else (a file, a symlink, someone
// else's folder, a results folder, the root folder) is refused with one
// line, and nothing is touched.
func CheckOut(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if filepath.Dir(abs) == abs {
		return fmt.Errorf("%s: the root folder cannot be an export folder; choose a folder of its own, such as export-NAME", path)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %s", path, fileio.Reason(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: is a symlink; refusing to replace it (give the folder it points to, or another path)", path)
	case !fi.IsDir():
		return fmt.Errorf("%s: is a file, not an export folder; refusing to replace it (choose another path)", path)
	}
	if m, err := os.Lstat(filepath.Join(abs, MarkerFile)); err == nil && m.Mode().IsRegular() {
		return nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return fmt.Errorf("%s: %s", path, fileio.Reason(err))
	}
	if len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("%s: exists and is not a dedupsim export (it has no %s file); refusing to replace it (choose another path, or empty it yourself)", path, MarkerFile)
}

// staging is an export folder being built beside the folder it will
// replace, as metrics.Staging builds a results folder: fill dir, then
// publish it; discard it on any failure. A killed process leaves its
// staging folder behind; the next export to the same target removes it
// (it belongs to a live process as long as that process holds its lock).
type staging struct {
	dir       string
	target    string
	abs       string
	held      *fileio.StagingDir
	published bool
}

// stage checks target (CheckOut), removes the staging folders killed
// exports left beside it, and creates a new, empty staging folder in
// target's parent, so that the final swap is a rename within one file
// system.
func stage(target string) (*staging, error) {
	if err := CheckOut(target); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return nil, fmt.Errorf("export folder %s: %s", target, fileio.Reason(err))
	}
	metrics.SweepPublishLock(abs)
	held, err := fileio.NewStagingDir(abs, stagingKind)
	if err != nil {
		return nil, fmt.Errorf("export folder %s: %w", target, err)
	}
	return &staging{dir: held.Dir, target: target, abs: abs, held: held}, nil
}

// scratch returns a folder inside the staging folder for temporaries
// (the prediction's checkpoints), which publish removes.
func (s *staging) scratch() (string, error) {
	d := filepath.Join(s.dir, ".scratch")
	return d, os.MkdirAll(d, 0o777)
}

// publish completes the staging folder (the scratch folder removed, the
// written folders synced, the marker written) and puts it in place of the
// target in one rename (fileio.SwapDir), after checking the target again.
func (s *staging) publish() error {
	if err := os.RemoveAll(filepath.Join(s.dir, ".scratch")); err != nil {
		return fmt.Errorf("export folder %s: %w", s.target, err)
	}
	for _, d := range []string{batchesDir, expectedDir, "."} {
		if err := fileio.SyncDir(filepath.Join(s.dir, d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("export folder %s: %w", s.target, err)
		}
	}
	if err := fileio.WriteFile(filepath.Join(s.dir, MarkerFile), []byte(markerContent)); err != nil {
		return fmt.Errorf("export folder %s: %w", s.target, err)
	}
	// The publish lock makes checking and swapping one step for every
	// dedupsim process publishing into the same folder.
	pl, err := metrics.LockPublish(s.abs)
	if err != nil {
		return fmt.Errorf("export folder %s: %w", s.target, err)
	}
	if err := CheckOut(s.target); err != nil {
		metrics.UnlockPublish(s.abs, pl)
		return err
	}
	if err := fileio.SwapDir(s.dir, s.abs); err != nil {
		metrics.UnlockPublish(s.abs, pl)
		return fmt.Errorf("export folder %s: %w", s.target, err)
	}
	metrics.UnlockPublish(s.abs, pl)
	s.published = true
	fileio.SyncDir(filepath.Dir(s.abs))
	s.release()
	return nil
}

// discard removes the staging folder unless it was published.
func (s *staging) discard() {
	if s == nil || s.published {
		return
	}
	s.published = true
	os.RemoveAll(s.dir)
	s.release()
}

func (s *staging) release() { s.held.Release() }
