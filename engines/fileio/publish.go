package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Folder is a kind of folder dedupsim builds beside its target and swaps
// in whole (a results folder, an export). A folder of the kind carries
// Marker, written last, just before the swap; only a folder that has it
// (or an empty folder, or nothing) may be replaced.
type Folder struct {
	// Noun names the kind in messages: "results folder".
	Noun string
	// A is Noun with its article: "a results folder".
	A string
	// Ours names a folder of the kind dedupsim wrote: "dedupsim results
	// folder".
	Ours string
	// Example is a path to suggest instead of the root: "results/NAME".
	Example string
	// Marker is the marker file's name, MarkerText its content.
	Marker, MarkerText string
	// StagingKind names the staging siblings (see NewStagingDir).
	StagingKind string
	// Sync are the subfolders Publish syncs besides the folder itself,
	// when they exist.
	Sync []string
}

// Check reports whether a folder of the kind may be written at path: when
// nothing is there, when it is an empty folder, or when it is one
// dedupsim wrote (it holds Marker). Anything else (a file, a symlink,
// someone else's folder, the root folder) is refused with one line, and
// nothing is touched.
func (k *Folder) Check(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if filepath.Dir(abs) == abs {
		return fmt.Errorf("%s: the root folder cannot be %s; choose a folder of its own, such as %s", path, k.A, k.Example)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %s", path, Reason(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: is a symlink; refusing to replace it (give the folder it points to, or another path)", path)
	case !fi.IsDir():
		return fmt.Errorf("%s: is a file, not %s; refusing to replace it (choose another path)", path, k.A)
	}
	if k.Has(abs) {
		return k.checkForeign(path, abs)
	}
	entries, err := os.ReadDir(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone since the Lstat: as if missing
	}
	if err != nil {
		return fmt.Errorf("%s: %s", path, Reason(err))
	}
	if len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("%s: exists and is not a %s (it has no %s file); refusing to replace it (choose another path, or empty it yourself)", path, k.Ours, k.Marker)
}

// Has reports whether dir carries the kind's marker.
func (k *Folder) Has(dir string) bool {
	m, err := os.Lstat(filepath.Join(dir, k.Marker))
	return err == nil && m.Mode().IsRegular()
}

// Staging is a folder of a kind being built beside the folder it will
// replace. Fill Dir, then Publish it; Discard it on any failure (it is
// safe to defer Discard: it does nothing after Publish).
//
// A killed process leaves its staging folder behind; the next Stage for
// the same target removes it (a staging folder belongs to a live process
// as long as that process holds its lock file).
type Staging struct {
	// Dir is the folder to write into.
	Dir string
	// Target is the folder that Publish replaces, as given.
	Target string

	kind      *Folder
	abs       string
	held      *StagingDir
	published bool
}

// Stage checks that target may be replaced (Check), removes the staging
// folders killed processes left beside it, and creates a new, empty
// staging folder in target's parent, so that the final swap is a rename
// within one file system.
func (k *Folder) Stage(target string) (*Staging, error) {
	if err := k.Check(target); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o777); err != nil {
		return nil, fmt.Errorf("%s %s: %w", k.Noun, target, err)
	}
	sweepPublishLock(abs)
	held, err := NewStagingDir(abs, k.StagingKind)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", k.Noun, target, err)
	}
	return &Staging{Dir: held.Dir, Target: target, kind: k, abs: abs, held: held}, nil
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

// Publish completes the staging folder (the scratch folder removed, the
// marker written, the folder and the kind's Sync subfolders synced) and
// puts it in place of the target in one rename (SwapDir). The target is
// checked again first, under the publish lock, which makes checking and
// swapping one step for every dedupsim process publishing into it: a
// folder that appeared there meanwhile and is not dedupsim's is not
// replaced.
func (s *Staging) Publish() error {
	fail := func(err error) error { return fmt.Errorf("%s %s: %w", s.kind.Noun, s.Target, err) }
	if s.published {
		return fail(errors.New("already published"))
	}
	if err := os.RemoveAll(filepath.Join(s.Dir, ".scratch")); err != nil {
		return fail(err)
	}
	for _, d := range s.kind.Sync {
		if err := SyncDir(filepath.Join(s.Dir, d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
	}
	marker, err := s.kind.markerContent(s.Dir)
	if err != nil {
		return fail(err)
	}
	if err := WriteFile(filepath.Join(s.Dir, s.kind.Marker), marker); err != nil {
		return fail(err)
	}
	if err := SyncDir(s.Dir); err != nil {
		return fail(err)
	}
	pl, err := lockPublish(s.abs)
	if err != nil {
		return fail(err)
	}
	if err := s.kind.Check(s.Target); err != nil {
		unlockPublish(s.abs, pl)
		return err
	}
	if err := SwapDir(s.Dir, s.abs); err != nil {
		unlockPublish(s.abs, pl)
		return fail(err)
	}
	unlockPublish(s.abs, pl)
	s.published = true
	// The swap is done; what follows only tidies up.
	SyncDir(filepath.Dir(s.abs))
	s.held.Release()
	return nil
}

// LinkFrom recreates the files and folders of src in the staging folder
// (which must hold nothing of the same names), as hard links where the
// file system allows, copies elsewhere. A folder redrawn in place (its
// files staged, some replaced by rename, the rest published as they were)
// never writes through a link to the original. Anything but regular files
// and folders in src is an error.
func (s *Staging) LinkFrom(src string) error {
	dst := s.Dir
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(to, 0o777)
		case d.Type().IsRegular():
			if err := os.Link(path, to); err == nil {
				return nil
			}
			return CopyFile(path, to)
		default:
			return fmt.Errorf("%s: not a regular file or folder; a results folder holds none", path)
		}
	})
}

// Discard removes the staging folder unless it was published.
func (s *Staging) Discard() {
	if s == nil || s.published {
		return
	}
	s.published = true
	os.RemoveAll(s.Dir)
	s.held.Release()
}
