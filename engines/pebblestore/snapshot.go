package pebblestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// Versioned reopen.
//
// A Pebble store keeps only its latest state, but a resumed run reopens it
// at the version of its last job snapshot, which can be several batches
// older (engines.Snapshotter). Snapshot therefore saves a copy of the
// store, a Pebble checkpoint, in a sibling folder the store owns:
//
//	<dir>/                         the live store
//	<dir>.checkpoints/<version>/   the store as of <version> committed batches:
//	                               PEBBLESTORE marker, sstables hard-linked to the
//	                               live store's, a copy of the MANIFEST and OPTIONS
//	<dir>.checkpoints/.<version>.tmp-*  a checkpoint being written
//
// Only the two newest checkpoints are kept: the one of the job snapshot
// being written, and the one of the job snapshot still on disk should the
// process die before the new one is written. Sstables are immutable, so the
// hard links cost no copy and stay valid whatever the live store compacts;
// a checkpoint's size is the sstables the live store has since dropped.
// Snapshot flushes the overlay first, so a checkpoint needs no changelog.
//
// OpenAt opens the live store if it is at the wanted version, and else
// rebuilds it from that version's checkpoint: the copy is made beside dir
// (".<base>.restoring-*": sstables hard-linked, every other file copied, as
// Pebble appends to or recycles them) and put in place of the live store
// by fileio.SwapDir (an atomic exchange, or the replaced store renamed
// aside to ".<base>.old-*" first), which then removes the replaced store.
// A process killed at any point leaves either the old store, the restored
// one or no store plus the checkpoint, from which the next OpenAt restores
// again; it removes the temporary folders it finds.

// checkpointsSuffix names the sibling folder of a store's checkpoints.
const checkpointsSuffix = ".checkpoints"

// keepCheckpoints is how many checkpoints Snapshot keeps.
const keepCheckpoints = 2

// CheckpointsDir returns the folder holding the checkpoints of the store in
// dir: a sibling of dir, so that the live store can be replaced as a whole.
func CheckpointsDir(dir string) string {
	return filepath.Clean(dir) + checkpointsSuffix
}

// Snapshot saves a checkpoint of the store at version, its current version
// (the number of committed batches), so that OpenAt can reopen the store at
// that version after later commits; it keeps the checkpoints of the two
// newest versions and removes the rest. It implements engines.Snapshotter.
// The store must have no uncommitted work.
func (s *Store) Snapshot(version int64) (err error) {
	if s.err != nil {
		return s.err
	}
	if err := s.sh.backgroundError(); err != nil {
		s.err = err
		return err
	}
	defer s.recoverFatal("snapshot", &err)
	if s.readOnly {
		return fmt.Errorf("pebblestore %s: snapshot: the store is open read-only", s.dir)
	}
	if have := s.version(); have != version {
		return fmt.Errorf("pebblestore %s: snapshot of version %d asked, the store is at version %d", s.dir, version, have)
	}
	if s.log.ops > 0 {
		return fmt.Errorf("pebblestore %s: snapshot of version %d: the current batch is not committed", s.dir, version)
	}
	// The checkpoint holds what Pebble holds: flush the overlay first, so
	// that it is the state of version, without changelogs.
	if err := s.waitFlush(); err != nil {
		s.err = fmt.Errorf("pebblestore %s: snapshot of version %d: flush: %s", s.dir, version, oneLine(err.Error()))
		return s.err
	}
	if s.flushed != version {
		if err := s.flush(); err != nil {
			s.err = fmt.Errorf("pebblestore %s: snapshot of version %d: flush: %s", s.dir, version, oneLine(err.Error()))
			return s.err
		}
	}
	root := CheckpointsDir(s.dir)
	if err := os.MkdirAll(root, 0o777); err != nil {
		return fmt.Errorf("pebblestore %s: snapshot: %w", s.dir, err)
	}
	// Folders left by a process killed in the middle of a checkpoint.
	if err := removeTemps(root); err != nil {
		return fmt.Errorf("pebblestore %s: snapshot: %w", s.dir, err)
	}
	final := filepath.Join(root, strconv.FormatInt(version, 10))
	tmp := fileio.TempName(final, "tmp")
	if err := s.db.Checkpoint(tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("pebblestore %s: snapshot of version %d: %w", s.dir, version, err)
	}
	// The marker makes the checkpoint a store OpenAt can move into place.
	if err := fileio.WriteFile(filepath.Join(tmp, markerName), []byte(markerContent)); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("pebblestore %s: snapshot of version %d: %w", s.dir, version, err)
	}
	// A checkpoint of the same version from a run that was resumed from
	// an older one holds the same batches, redone: it is replaced.
	if err := fileio.SwapDir(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("pebblestore %s: snapshot of version %d: %w", s.dir, version, err)
	}
	versions, err := listCheckpoints(s.dir)
	if err != nil {
		return err
	}
	// Newest first; every version above this one is from an abandoned
	// timeline and goes too.
	slices.Reverse(versions)
	kept := 0
	for _, v := range versions {
		if v <= version && kept < keepCheckpoints {
			kept++
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, strconv.FormatInt(v, 10))); err != nil {
			return fmt.Errorf("pebblestore %s: snapshot: removing an old checkpoint: %w", s.dir, err)
		}
	}
	return nil
}

// listCheckpoints returns the versions of the checkpoints of the store in
// dir, ascending. It removes nothing; a name that is neither a version nor
// a checkpoint being written is an error naming it.
func listCheckpoints(dir string) ([]int64, error) {
	root := CheckpointsDir(dir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	var out []int64
	for _, e := range ents {
		name := e.Name()
		if isTempDir(name) {
			continue
		}
		v, err := strconv.ParseInt(name, 10, 64)
		if err != nil || v < 0 || !e.IsDir() || strconv.FormatInt(v, 10) != name {
			return nil, fmt.Errorf("pebblestore %s: %s: not a checkpoint of this store", dir, filepath.Join(root, name))
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

// dropCheckpointsAfter removes the checkpoints of versions above version:
// a store reopened at version redoes those batches, and a checkpoint of
// theirs would belong to the abandoned run.
func dropCheckpointsAfter(dir string, version int64) error {
	versions, err := listCheckpoints(dir)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if v > version {
			if err := os.RemoveAll(filepath.Join(CheckpointsDir(dir), strconv.FormatInt(v, 10))); err != nil {
				return fmt.Errorf("pebblestore %s: %w", dir, err)
			}
		}
	}
	return nil
}

// OpenAt opens the store in dir at version, the number of committed batches:
// the live store if it is at that version, else the store rebuilt from the
// checkpoint Snapshot saved of that version, which replaces the live store.
// A missing or empty dir is a new, empty store at version 0. Checkpoints of
// later versions are removed: the caller redoes those batches. Without the
// state of version, OpenAt fails with an error naming what it found, and
// leaves dir and its checkpoints as they were.
func OpenAt(dir string, version int64, opts Options) (*Store, error) {
	entries, err := prepareOpen(dir, version, opts)
	if err != nil {
		return nil, err
	}
	found := "no store"
	if len(entries) > 0 {
		// Opening for writing changes the store's files (a new MANIFEST,
		// changelogs and staged sstables a killed process left removed):
		// without a checkpoint to fall back on, look at the version
		// read-only first, so that a failure leaves dir as it was.
		_, ckErr := checkpointOf(dir, version, "")
		s, err := open(dir, opts, ckErr != nil)
		if err != nil {
			return nil, err
		}
		have := s.version()
		if have == version && ckErr != nil {
			if err := s.Close(); err != nil {
				return nil, err
			}
			if s, err = open(dir, opts, false); err != nil {
				return nil, err
			}
		}
		if have == version {
			if err := dropCheckpointsAfter(dir, version); err != nil {
				s.Close()
				return nil, err
			}
			return s, nil
		}
		if err := s.Close(); err != nil {
			return nil, err
		}
		found = fmt.Sprintf("the store at version %d", have)
	} else if version == 0 {
		s, err := Open(dir, opts)
		if err != nil {
			return nil, err
		}
		if err := dropCheckpointsAfter(dir, 0); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	ck, err := checkpointOf(dir, version, found)
	if err != nil {
		return nil, err
	}
	return reopenFrom(dir, ck, version, opts)
}

// reopenFrom replaces the live store in dir by a copy of the checkpoint
// ck of version, opens it, checks that it is at version, and removes the
// checkpoints of later versions (the caller redoes those batches).
func reopenFrom(dir, ck string, version int64, opts Options) (*Store, error) {
	if err := restore(dir, ck); err != nil {
		return nil, err
	}
	s, err := open(dir, opts, false)
	if err != nil {
		return nil, err
	}
	if have := s.version(); have != version {
		s.Close()
		return nil, fmt.Errorf("pebblestore %s: the checkpoint %s holds version %d, not %d", dir, ck, have, version)
	}
	if err := dropCheckpointsAfter(dir, version); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// prepareOpen checks version and opts, removes what killed processes left
// in dir, and returns dir's entries, checked to be a store when there are
// any (none when dir does not exist).
func prepareOpen(dir string, version int64, opts Options) ([]os.DirEntry, error) {
	if version < 0 {
		return nil, fmt.Errorf("pebblestore %s: negative version %d", dir, version)
	}
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("pebblestore %s: invalid options: %w", dir, err)
	}
	if err := removeLeftovers(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	if len(entries) > 0 {
		if err := checkMarker(dir, entries); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// listed renders checkpoint versions for a message: "none" or "[1 2]".
func listed(versions []int64) string {
	if len(versions) == 0 {
		return "none"
	}
	return fmt.Sprint(versions)
}

// checkpointOf returns the checkpoint folder of version, checked to be a
// store, or an error saying what there is instead (found: what the live
// folder holds).
func checkpointOf(dir string, version int64, found string) (string, error) {
	versions, err := listCheckpoints(dir)
	if err != nil {
		return "", err
	}
	if !slices.Contains(versions, version) {
		return "", fmt.Errorf("pebblestore %s: no state of version %d: %s there, and checkpoints of versions %s in %s",
			dir, version, found, listed(versions), CheckpointsDir(dir))
	}
	ck := filepath.Join(CheckpointsDir(dir), strconv.FormatInt(version, 10))
	entries, err := os.ReadDir(ck)
	if err != nil {
		return "", fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	if err := checkMarker(ck, entries); err != nil {
		return "", err
	}
	return ck, nil
}

// CheckAt reports whether OpenAt(dir, version) would find the state of
// version, without writing anything: the live store is opened read-only.
// A resumed run checks every store this way before it changes anything.
func CheckAt(dir string, version int64, opts Options) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	found := "no store"
	if len(entries) > 0 {
		if err := checkMarker(dir, entries); err != nil {
			return err
		}
		s, err := open(dir, opts, true)
		if err != nil {
			return err
		}
		have := s.version()
		if err := s.Close(); err != nil {
			return err
		}
		if have == version {
			return nil
		}
		found = fmt.Sprintf("the store at version %d", have)
	} else if version == 0 {
		return nil
	}
	_, err = checkpointOf(dir, version, found)
	return err
}

// OpenReadOnly opens the store in dir for reading: Len, Range and
// LastCommitted work, Add, Evict, Commit and Snapshot fail, and nothing in
// dir is written: the changelogs after the newest flush are replayed into
// memory only. dir must be a store.
func OpenReadOnly(dir string, opts Options) (*Store, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("pebblestore %s: invalid options: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("pebblestore %s: empty folder, not a pebblestore", dir)
	}
	if err := checkMarker(dir, entries); err != nil {
		return nil, err
	}
	return open(dir, opts, true)
}

// removeLeftovers removes the temporary siblings of dir that a killed
// OpenAt or Open left: they are named after dir by this package, never
// anyone else's.
func removeLeftovers(dir string) error {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	ents, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		for _, kind := range []string{".restoring-", ".replaced-", ".creating-", ".old-"} {
			if strings.HasPrefix(n, "."+base+kind) {
				if err := os.RemoveAll(filepath.Join(parent, n)); err != nil {
					return fmt.Errorf("pebblestore %s: %w", dir, err)
				}
			}
		}
	}
	return nil
}

// restore replaces the store in dir (if any) with a copy of checkpoint ck.
func restore(dir, ck string) error {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	tmp, err := fileio.MkdirTemp(parent, "."+base+".restoring-")
	if err != nil {
		return fmt.Errorf("pebblestore %s: restore: %w", dir, err)
	}
	if err := copyStore(ck, tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("pebblestore %s: restore from %s: %w", dir, ck, err)
	}
	if err := fileio.SwapDir(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("pebblestore %s: restore: %w", dir, err)
	}
	return nil
}

// isTempDir reports whether name, in a store's checkpoints folder, is a
// checkpoint being written (fileio.TempName, or the fixed ".<version>.tmp"
// of earlier versions) or one a swap set aside.
func isTempDir(name string) bool {
	return strings.HasPrefix(name, ".") && (fileio.IsCheckpointTemp(name) || strings.Contains(name, ".old-"))
}

// removeTemps removes the checkpoints being written, or set aside, that a
// killed Snapshot left in the checkpoints folder root.
func removeTemps(root string) error {
	ents, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if isTempDir(e.Name()) {
			if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyStore copies the store files of src into the empty folder dst:
// sstables as hard links (Pebble never modifies one), everything else as a
// copy, since the reopened store appends to its MANIFEST or recycles files
// in place, which through a link would change the checkpoint.
func copyStore(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", filepath.Join(src, e.Name()))
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if strings.HasSuffix(e.Name(), ".sst") {
			if err := os.Link(from, to); err == nil {
				continue
			}
			// No hard links across devices or on this file system: copy.
		}
		if err := fileio.CopyFile(from, to); err != nil {
			return err
		}
	}
	return nil
}
