package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/internal/expiry"
)

// recover rebuilds the in-memory state of the last committed batch from
// the store's files: the metadata of the newest flush, then every live
// flush's entries (the filters and the expiry index are rebuilt from them,
// and their count checked against the metadata's), then the changelogs of
// the batches committed after that flush, replayed. A read-write store
// also deletes what a killed process left: flushes the metadata leaves out
// (their range deletions were still in Pebble's memtable), changelogs
// older than the flush, and files being written.
func (s *Store) recover() error {
	s.resetMemory()
	ids, err := s.physicalFlushes()
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return errors.New("no flush metadata: a Pebble DB that is not a pebblestore, or a damaged one")
	}
	newest := ids[len(ids)-1]
	m, err := s.readMeta(newest)
	if err != nil {
		return fmt.Errorf("reading the metadata of flush %d: %w", newest, err)
	}
	if len(m.live) == 0 || m.live[len(m.live)-1].id != newest || m.nextID <= newest {
		return fmt.Errorf("the metadata of flush %d does not list it as the newest live flush", newest)
	}
	s.n, s.evl, s.nextID = m.n, m.evicts, m.nextID
	s.hasBatch, s.batchID = m.hasBatch, m.batchID
	s.flushed = m.version()
	live := map[uint64]bool{}
	for _, f := range m.live {
		live[f.id] = true
	}
	var stale []uint64
	for _, id := range ids {
		if !live[id] {
			stale = append(stale, id)
		}
	}
	count := int64(0)
	for i, ref := range m.live {
		if i > 0 && ref.id <= m.live[i-1].id {
			return fmt.Errorf("the metadata of flush %d lists its live flushes out of order", newest)
		}
		f := &flushState{flushRef: ref, filter: newBloom(int(ref.entries))}
		n, err := s.scanFlush(f)
		if err != nil {
			return err
		}
		count += n
		s.flushes = append(s.flushes, f)
	}
	n, err := s.scanForever()
	if err != nil {
		return err
	}
	count += n
	if count != s.n {
		return fmt.Errorf("the metadata of flush %d counts %d keys, the flushes hold %d live ones", newest, s.n, count)
	}
	if !s.readOnly {
		if err := s.deleteFlushes(stale); err != nil {
			return err
		}
		if err := s.clearStaging(); err != nil {
			return err
		}
	}
	if err := s.replay(); err != nil {
		return err
	}
	if !s.readOnly {
		return removeChangelogs(s.fs, s.dir, s.flushed)
	}
	return nil
}

// physicalFlushes returns the ids of the flushes Pebble holds, ascending,
// including dropped ones whose deletion was lost.
func (s *Store) physicalFlushes() ([]uint64, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte{flushPrefix},
		UpperBound: []byte{flushPrefix + 1},
	})
	if err != nil {
		return nil, err
	}
	var ids []uint64
	for ok := it.First(); ok; {
		id, valid := flushID(it.Key())
		if !valid {
			it.Close()
			return nil, fmt.Errorf("malformed key %q", fileio.Show(string(it.Key())))
		}
		ids = append(ids, id)
		if id == math.MaxUint64 {
			break
		}
		ok = it.SeekGE(appendFlush(s.kbuf[:0], id+1))
	}
	return ids, it.Close()
}

// readMeta reads the metadata of flush id.
func (s *Store) readMeta(id uint64) (meta, error) {
	key := append(appendFlush(nil, id), metaKind)
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return meta{}, errors.New("missing")
	}
	if err != nil {
		return meta{}, err
	}
	m, err := decodeMeta(v)
	if cerr := closer.Close(); err == nil {
		err = cerr
	}
	return m, err
}

// scanFlush reads the entries of flush f: the live ones go into the
// expiry index and f's filter. It returns how many are live and checks
// them against f's metadata.
func (s *Store) scanFlush(f *flushState) (int64, error) {
	lo := append(appendFlush(nil, f.id), entryKind)
	hi := append(appendFlush(nil, f.id), entryKind+1)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, err
	}
	var entries, live int64
	for ok := it.First(); ok; ok = it.Next() {
		v := it.Value()
		if len(v) != 8 {
			it.Close()
			return 0, fmt.Errorf("flush %d: key %q has a %d-byte value, want 8", f.id, fileio.Show(string(it.Key())), len(v))
		}
		exp := int64(binary.BigEndian.Uint64(v))
		if exp > f.maxExp || exp == engines.NoExpiry {
			it.Close()
			return 0, fmt.Errorf("flush %d: an entry expires at %d, past the flush's %d", f.id, exp, f.maxExp)
		}
		entries++
		if s.evl.dead(exp, f.epoch) {
			continue
		}
		live++
		s.exps.Push(expiry.Item{At: expiry.OrderKey(exp)})
		f.filter.add(s.hash(it.Key()[flushHeaderLen+1:]))
	}
	if err := it.Close(); err != nil {
		return 0, err
	}
	if entries != f.entries {
		return 0, fmt.Errorf("flush %d holds %d entries, its metadata says %d", f.id, entries, f.entries)
	}
	return live, nil
}

// scanForever adds the NoExpiry keys to their filter and counts them.
func (s *Store) scanForever() (int64, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte{foreverPrefix},
		UpperBound: []byte{foreverPrefix + 1},
	})
	if err != nil {
		return 0, err
	}
	n := int64(0)
	for ok := it.First(); ok; ok = it.Next() {
		s.forever.add(s.hash(it.Key()[1:]))
		n++
	}
	return n, it.Close()
}

// replay applies the changelogs of the versions after the last flush, in
// order, each of which must follow the one before.
func (s *Store) replay() error {
	versions, err := listChangelogs(s.fs, s.dir)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if v <= s.version() {
			continue
		}
		path := s.fs.PathJoin(s.dir, changesDir, changelogName(v))
		c, err := readChangelog(s.fs, s.dir, v)
		if err != nil {
			return err
		}
		if c.prev != s.version() {
			return fmt.Errorf("%s: %w: it follows version %d, the store is at version %d: a changelog is missing",
				path, errCorruptChangelog, c.prev, s.version())
		}
		err = replayOps(c.ops,
			func(key []byte, exp int64) error {
				ok, err := s.add(s.hash(key), key, exp)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("%s: %w: it adds key %q, which the state holds", path, errCorruptChangelog, fileio.Show(string(key)))
				}
				return nil
			},
			func(w int64, removed int) error {
				if n := s.evict(w); n != removed {
					return fmt.Errorf("%s: %w: its eviction at %d removed %d keys, now %d", path, errCorruptChangelog, w, removed, n)
				}
				return nil
			})
		if err != nil {
			if errors.Is(err, errCorruptChangelog) {
				return err
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		s.commitDone(c.batchID)
		s.logs = append(s.logs, logSize{version: v, bytes: int64(len(c.ops))})
		s.unflushed++
	}
	return nil
}

// clearStaging removes the sstables a killed flush left in the staging
// folder.
func (s *Store) clearStaging() error {
	dir := s.fs.PathJoin(s.dir, stagingDir)
	names, err := s.fs.List(dir)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return err
	}
	for _, n := range names {
		if err := s.fs.Remove(s.fs.PathJoin(dir, n)); err != nil && !isNotExist(err) {
			return err
		}
	}
	return nil
}
