package pebblestore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/objstorage"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/dedupsim/dedupsim/engines"
)

// stagingDir is the folder, inside the store's, where a flush writes its
// sstables before Pebble ingests them. Open empties it.
const stagingDir = "staging"

// flush writes the overlay's live entries to Pebble and empties it: the
// expiring ones, with the metadata of the store's state, into a new
// flush's sstable, the NoExpiry ones into another (see the package
// documentation), ingested together in one atomic step. It then deletes
// the flushes dropped since the last flush, whose absence the new metadata
// records, and the changelogs the flush makes unnecessary. The store must
// have no uncommitted work: the metadata says the state is the last
// committed version's.
func (s *Store) flush() error {
	t0 := time.Now()
	defer func() { s.metrics.FlushTime += time.Since(t0) }()
	v := s.version()
	id := s.nextID
	items := s.ov.sortedByKey(func(i int) bool {
		e := &s.ov.ents[i]
		return !s.evl.dead(e.exp, e.epoch)
	})
	nexp := 0
	maxExp := int64(math.MinInt64)
	for _, it := range items {
		if e := &s.ov.ents[it.idx]; e.exp != engines.NoExpiry {
			nexp++
			maxExp = max(maxExp, e.exp)
		}
	}
	// The newest flush, if it holds no entry, only held the metadata this
	// flush replaces.
	live := s.flushes
	var superseded []uint64
	if k := len(live); k > 0 && live[k-1].entries == 0 {
		superseded = append(superseded, live[k-1].id)
		live = live[:k-1]
	}
	ref := flushRef{id: id, epoch: s.evl.epoch, maxExp: maxExp, entries: int64(nexp)}
	m := meta{hasBatch: s.hasBatch, batchID: s.batchID, n: s.n, evicts: s.evl, nextID: id + 1}
	for _, f := range live {
		m.live = append(m.live, f.flushRef)
	}
	m.live = append(m.live, ref)

	staging := s.fs.PathJoin(s.dir, stagingDir)
	if err := s.fs.MkdirAll(staging, 0o777); err != nil {
		return err
	}
	filter := newBloom(nexp)
	fpath := s.fs.PathJoin(staging, strconv.FormatUint(id, 10)+".sst")
	var val [8]byte
	written, err := s.writeTable(fpath, s.fopts, func(w *sstable.Writer) error {
		for _, it := range items {
			e := &s.ov.ents[it.idx]
			if e.exp == engines.NoExpiry {
				continue
			}
			key := s.ov.key(int(it.idx))
			s.kbuf = appendEntry(s.kbuf[:0], id, key)
			binary.BigEndian.PutUint64(val[:], uint64(e.exp))
			if err := w.Set(s.kbuf, val[:]); err != nil {
				return err
			}
			filter.add(e.hash)
		}
		s.kbuf = append(appendFlush(s.kbuf[:0], id), metaKind)
		return w.Set(s.kbuf, m.append(nil))
	})
	if err != nil {
		return err
	}
	paths := []string{fpath}
	if len(items) > nexp {
		npath := s.fs.PathJoin(staging, strconv.FormatUint(id, 10)+".forever.sst")
		n, err := s.writeTable(npath, s.wopts, func(w *sstable.Writer) error {
			for _, it := range items {
				if s.ov.ents[it.idx].exp != engines.NoExpiry {
					continue
				}
				s.kbuf = appendForever(s.kbuf[:0], s.ov.key(int(it.idx)))
				if err := w.Set(s.kbuf, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			s.fs.Remove(fpath)
			return err
		}
		written += n
		paths = append(paths, npath)
	}
	if s.hook != nil {
		s.hook("ingest")
	}
	err = s.db.Ingest(paths)
	for _, p := range paths {
		s.fs.Remove(p)
	}
	if err != nil {
		return err
	}
	if s.hook != nil {
		s.hook("ingested")
	}
	// Durable from here: the new metadata leaves the dropped flushes out,
	// so deleting them cannot lose a state that recovery reads.
	s.drops = append(s.drops, superseded...)
	if err := s.deleteFlushes(s.drops); err != nil {
		return err
	}
	s.drops = s.drops[:0]
	for _, it := range items {
		if s.ov.ents[it.idx].exp == engines.NoExpiry {
			s.forever.add(s.ov.ents[it.idx].hash)
		}
	}
	s.flushes = append(live, &flushState{flushRef: ref, filter: filter})
	s.nextID = id + 1
	s.flushed = v
	s.ov.reset()
	s.metrics.Flushes++
	s.metrics.FlushKeys += int64(len(items))
	s.metrics.FlushBytes += written
	s.logBytes = 0
	return removeChangelogs(s.fs, s.dir, v)
}

// deleteFlushes deletes the entries and metadata of the flushes ids from
// Pebble, with one range deletion each, and starts flushing Pebble's
// memtable so that the deletions reach the sstables they cover, which
// Pebble's delete-only compactions then remove whole.
func (s *Store) deleteFlushes(ids []uint64) error {
	if len(ids) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	var lo, hi []byte
	for _, id := range ids {
		lo = appendFlush(lo[:0], id)
		hi = appendFlush(hi[:0], id+1)
		if err := b.DeleteRange(lo, hi, nil); err != nil {
			return err
		}
	}
	if err := s.db.Apply(b, pebble.NoSync); err != nil {
		return err
	}
	_, err := s.db.AsyncFlush()
	return err
}

// writeTable writes an sstable at path with fill, and returns its size.
func (s *Store) writeTable(path string, o sstable.WriterOptions, fill func(w *sstable.Writer) error) (int64, error) {
	f, err := s.fs.Create(path)
	if err != nil {
		return 0, err
	}
	wr := &tableFile{f: f, bw: bufio.NewWriterSize(f, 1<<20), sync: s.fsync}
	w := sstable.NewWriter(wr, o)
	if err := fill(w); err != nil {
		w.Close()
		s.fs.Remove(path)
		return 0, err
	}
	if err := w.Close(); err != nil {
		s.fs.Remove(path)
		return 0, err
	}
	return wr.n, nil
}

// tableFile is the objstorage.Writable of a flush's sstable: buffered
// writes to a file of the store's file system, synced only with
// Options.Fsync (Pebble's own fsyncs every table it writes; a flush's
// changelogs, kept until it is ingested, make it durable against a killed
// process anyway).
type tableFile struct {
	f    vfs.File
	bw   *bufio.Writer
	sync bool
	n    int64
}

var _ objstorage.Writable = (*tableFile)(nil)

// Write implements objstorage.Writable.
func (t *tableFile) Write(p []byte) error {
	t.n += int64(len(p))
	_, err := t.bw.Write(p)
	return err
}

// Finish implements objstorage.Writable.
func (t *tableFile) Finish() error {
	err := t.bw.Flush()
	if err == nil && t.sync {
		err = t.f.Sync()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing an sstable: %w", err)
	}
	return nil
}

// Abort implements objstorage.Writable.
func (t *tableFile) Abort() { t.f.Close() }
