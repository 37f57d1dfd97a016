package pebblestore

import (
	"fmt"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"os"
	"path/filepath"
	"slices"
)

// StateFiles lists the files that RestoreAt(dir, version) rebuilds the
// store from: every file of the checkpoint Snapshot saved of version
// (<dir>.checkpoints/<version>/), sorted; none for version 0, the empty
// store. A resumed run records their checksums with each job snapshot and
// checks them before it restores the store, so an edited or swapped
// sstable is refused instead of resumed from. It writes nothing; a
// missing checkpoint, or anything in it but regular files, is an error
// naming it.
func StateFiles(dir string, version int64) ([]string, error) {
	if version == 0 {
		return nil, nil
	}
	ck, err := savedCheckpoint(dir, version)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(ck)
	if err != nil {
		return nil, fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		p := filepath.Join(ck, e.Name())
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("pebblestore %s: %s: not a regular file", dir, p)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// RestoreAt opens the store in dir at version from the checkpoint that
// Snapshot saved of that version (the files StateFiles lists), whatever
// the live store holds: the live store is replaced by a copy of the
// checkpoint (sstables hard-linked), as OpenAt does when the live store is
// at another version. Version 0 is a new, empty store. Checkpoints of later
// versions are removed: the caller redoes those batches. A resumed run
// opens its stores this way, so that what it resumes from is exactly what
// it verified. Without the checkpoint, RestoreAt fails with an error naming
// it and leaves dir as it was.
func RestoreAt(dir string, version int64, opts Options) (*Store, error) {
	entries, err := prepareOpen(dir, version, opts)
	if err != nil {
		return nil, err
	}
	if version == 0 {
		if err := dropCheckpointsAfter(dir, 0); err != nil {
			return nil, err
		}
		if len(entries) > 0 {
			if err := replaceWithEmpty(dir); err != nil {
				return nil, err
			}
		}
		return Open(dir, opts)
	}
	ck, err := savedCheckpoint(dir, version)
	if err != nil {
		return nil, err
	}
	return reopenFrom(dir, ck, version, opts)
}

// replaceWithEmpty removes the store in dir by moving it aside first, so
// that a process killed meanwhile leaves either the store or nothing (the
// moved folder is a leftover the next open removes).
func replaceWithEmpty(dir string) error {
	d := fileio.TempName(dir, "replaced")
	err := os.Rename(dir, d)
	if err == nil {
		err = os.RemoveAll(d)
	}
	if err != nil {
		return fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	return nil
}

// savedCheckpoint returns the folder of the checkpoint Snapshot saved of
// version, checked to be a store, or an error naming what is missing.
func savedCheckpoint(dir string, version int64) (string, error) {
	versions, err := listCheckpoints(dir)
	if err != nil {
		return "", err
	}
	if !slices.Contains(versions, version) {
		return "", fmt.Errorf("pebblestore %s: no checkpoint of version %d in %s (it holds %s)", dir, version, CheckpointsDir(dir), listed(versions))
	}
	return checkpointOf(dir, version, "")
}
