package memstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Snapshot implements engines.Snapshotter. The store keeps every version
// in its files already, so it saves nothing; it removes the files that no
// reopen can need any more, since a long run otherwise keeps every delta
// forever.
//
// A reopen may need the state of version and of the previous Snapshot's
// version (a job snapshot written at that version is the one still on disk
// should the process die before the next). So Snapshot keeps every file
// needed to rebuild the previous Snapshot's version or any later one: the
// newest snapshot file at or below that version and everything after it.
// It removes the snapshot files older than that one and the delta logs
// whose every delta it covers (a log starts after each snapshot, so the
// deltas a snapshot covers fill whole logs). The previous Snapshot is known only within this Checkpointed: the
// first call after Open removes nothing, since a Snapshot made before the
// store was reopened (by a restart) may be the one on disk.
//
// For example, with a snapshot file every 10 versions and Snapshot called
// at versions 12 and then 27, the second call keeps 10.snapshot, 11.log
// (deltas 11 .. 20), 20.snapshot and 21.log (21 .. 27), and removes 1.log
// (deltas 1 .. 10).
//
// Snapshot first waits for a background snapshot under way: the files of
// version must not change once the caller has listed them (StateFiles),
// and a snapshot file at or below version appearing later would change
// them. So the snapshot files it keeps and removes are all finished and
// durable. The wait is the one place a snapshot's time can fall on the
// query's path: a resumable run calls Snapshot about once a second.
func (c *Checkpointed) Snapshot(version int64) error {
	if version != c.version {
		return fmt.Errorf("memstore %s: snapshot of version %d asked, the store is at version %d", c.dir, version, c.version)
	}
	if c.log.n > 0 {
		return fmt.Errorf("memstore %s: snapshot of version %d: the current batch is not committed", c.dir, version)
	}
	if err := c.join(); err != nil {
		return err
	}
	if c.snapped {
		if err := c.prune(c.snapVersion); err != nil {
			return err
		}
	}
	c.snapped, c.snapVersion = true, version
	return nil
}

// prune removes the files that rebuilding version keep, or any later
// version, does not read.
func (c *Checkpointed) prune(keep int64) error {
	d, err := c.listVersions()
	if err != nil {
		return err
	}
	base := baseOf(d.snaps, keep)
	if base == 0 {
		// Every version up to keep is rebuilt from the first delta on.
		return nil
	}
	remove := func(name string) error {
		if err := os.Remove(filepath.Join(c.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("memstore %s: pruning: %w", c.dir, err)
		}
		return nil
	}
	for _, s := range d.snaps {
		if s < base {
			if err := remove(fmt.Sprintf("%d.snapshot", s)); err != nil {
				return err
			}
		}
	}
	c.snaps = slices.DeleteFunc(c.snaps, func(s int64) bool { return s < base })
	for i, first := range d.logs {
		// A log's deltas run up to the next log's first version.
		if i+1 < len(d.logs) && d.logs[i+1] <= base+1 && (c.cur == nil || c.cur.first != first) {
			if err := remove(logName(first)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Load rebuilds the state of version (the number of committed batches) from
// the checkpoint files in dir, for reading: it never writes to dir, and the
// Store it returns does not either. A missing folder, a missing file or a
// corrupted one is an error naming it.
func Load(dir string, version int64) (*Store, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("memstore %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("memstore %s: not a folder", dir)
	}
	// A Checkpointed that is never committed: its change log is off, and
	// only load reads its files.
	c := &Checkpointed{Store: New(), dir: dir}
	// Version 0 reads no file, but a folder of someone else's files is
	// still not a store: load lists it all the same.
	if err := c.load(version, false); err != nil {
		c.Store.Close()
		return nil, err
	}
	return c.Store, nil
}

// Check reports whether Open(dir, version) would find the files of
// version intact, without building the state (a resumed run checks every
// store before any job changes a file, and holding every job's state at
// once for that would multiply the memory of the resume): every file Open
// would read exists, with its header and checksum intact. It never writes.
func Check(dir string, version int64) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) && version == 0 {
		// What Open creates.
		return nil
	}
	c := &Checkpointed{dir: dir}
	d, err := c.listVersions()
	if err != nil {
		return err
	}
	if version == 0 {
		return nil
	}
	// The plan reads every delta log it needs and checks each record's
	// checksum.
	base, _, err := c.statePlan(d, version)
	if err != nil {
		return err
	}
	if base > 0 {
		return c.verify(fmt.Sprintf("%d.snapshot", base), snapshotMagic)
	}
	return nil
}

// verify checks a snapshot file's header and checksum, as apply does
// before it reads the records.
func (c *Checkpointed) verify(name, magic string) error {
	path := filepath.Join(c.dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("memstore %s: %w", c.dir, err)
	}
	_, err = checkHeader(path, data, magic)
	return err
}
