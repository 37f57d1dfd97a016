package pebblestore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/objstorage"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"
)

// stagingDir is the folder, inside the store's, where a flush writes its
// sstables before Pebble ingests them. Open empties it.
const stagingDir = "staging"

// Flushes.
//
// A flush writes the overlay's live entries to Pebble and empties it: the
// expiring ones, with the metadata of the store's state, into a new
// flush's sstable, the NoExpiry ones into another (see the package
// documentation), ingested together in one atomic step. It then deletes
// the flushes dropped before it, whose absence its metadata records. Once
// the store installs it, the changelogs it covers are deleted.
//
// A Commit that finds the overlay full freezes it: a new, empty overlay
// takes the next batches' keys, and a goroutine writes the frozen one, off
// the critical path (flushJob.run). Until the store installs the flush,
// at a later Commit, lookups read the frozen overlay as they read the
// active one; nothing in it changes (a key evicted and added again gets an
// entry in the active overlay), and the goroutine decides which entries
// are live with a copy of the evict log taken at the freeze, so the two
// share only what neither writes. Entries evicted after the freeze are
// written, and are dead in the flush by the evictions recorded after its
// epoch, as they were in the overlay. One flush runs at a time: a Commit
// that fills the overlay again waits for the running one.

// flushJob is one flush: the frozen overlay and the state it records, and
// what the goroutine hands back.
type flushJob struct {
	ov      overlay
	evl     evictLog
	id      uint64
	version int64
	// m is the metadata to write, but for this flush's own reference,
	// which the goroutine appends.
	m meta
	// drops are the flushes to delete once this one is ingested, and
	// superseded the one among them that was the newest, holding only
	// the metadata this flush replaces.
	drops      []uint64
	superseded uint64
	hasSuper   bool
	done       chan struct{}
	// cancelled, set by Close, makes write stop before it ingests: the
	// staged sstables are removed and the changelogs keep every batch.
	cancelled atomic.Bool

	// Results.
	ref     flushRef
	filter  bloom
	forever []uint64
	keys    int64
	bytes   int64
	dur     time.Duration
	err     error
	fatal   bool
	// sink keeps write's look-ahead loads from being optimized away.
	sink uint32
}

// freeze starts a flush of the overlay: it records the store's state, and
// gives the store a new overlay (the memory of the last flush's, if any).
// The store must have no uncommitted work, and no flush running.
func (s *Store) freeze() *flushJob {
	j := &flushJob{
		ov:      s.ov,
		evl:     s.evl.clone(),
		id:      s.nextID,
		version: s.version(),
		drops:   append([]uint64(nil), s.drops...),
		done:    make(chan struct{}),
	}
	s.drops = s.drops[:0]
	s.unflushed = 0
	live := s.flushes
	if k := len(live); k > 0 && live[k-1].entries == 0 {
		j.superseded, j.hasSuper = live[k-1].id, true
		j.drops = append(j.drops, live[k-1].id)
		live = live[:k-1]
	}
	j.m = meta{hasBatch: s.hasBatch, batchID: s.batchID, n: s.n, evicts: j.evl, nextID: j.id + 1}
	for _, f := range live {
		j.m.live = append(j.m.live, f.flushRef)
	}
	s.nextID++
	s.ov = s.spare
	s.spare = overlay{}
	if s.ov.slots == nil {
		s.ov = newOverlay()
	}
	return j
}

// flush writes the overlay to Pebble now, after the running flush if any,
// and installs it. The store must have no uncommitted work.
func (s *Store) flush() error {
	if err := s.waitFlush(); err != nil {
		return err
	}
	j := s.freeze()
	s.runJob(j)
	return s.install(j)
}

// startFlush starts a flush of the overlay in a goroutine, after waiting
// for the running one.
func (s *Store) startFlush() error {
	if err := s.waitFlush(); err != nil {
		return err
	}
	s.job = s.freeze()
	go s.runJob(s.job)
	return nil
}

// waitFlush waits for the running flush, if any, and installs it. After
// Interrupt it does not wait: a flush stuck in Pebble's write stall (a
// disk that was full) never returns, and the job waiting on it ignored
// SIGTERM.
func (s *Store) waitFlush() error {
	if s.job == nil {
		return nil
	}
	select {
	case <-s.job.done:
	case <-s.stop:
		select {
		case <-s.job.done:
		default:
			return errInterrupted
		}
	}
	return s.install(s.job)
}

// errInterrupted is the error of a wait on a flush that Interrupt ended.
var errInterrupted = errors.New("interrupted while a flush was running (it may be stuck in Pebble's write stall); the store's files stay as the last Commit left them")

// Interrupt makes every wait of the store on its flush goroutine, now and
// later, return at once (waitFlush, Close): the store then fails, its
// files as the last Commit left them, which a reopen recovers. It is safe
// to call from any goroutine, at any time, more than once; a run calls it
// when it is cancelled (SIGTERM).
func (s *Store) Interrupt() { s.stopOnce.Do(func() { close(s.stop) }) }

// WaitFlush waits for the running flush, if any, to be written and
// ingested, and makes it part of the store. Close cancels a running flush
// instead; a caller that reports what the store wrote (bench-stores) waits
// first, so that the figures do not depend on how far the background
// flush got when the run ended.
func (s *Store) WaitFlush() error {
	if err := s.writable(); err != nil {
		return err
	}
	if err := s.waitFlush(); err != nil {
		s.err = fmt.Errorf("pebblestore %s: flush: %s", s.dir, oneLine(err.Error()))
		return s.err
	}
	return nil
}

// pollFlush installs the running flush if it is done.
func (s *Store) pollFlush() error {
	if s.job == nil {
		return nil
	}
	select {
	case <-s.job.done:
		return s.install(s.job)
	default:
		return nil
	}
}

// install makes a finished flush part of the store: its filter joins the
// live flushes' and its NoExpiry keys the forever filter, the frozen
// overlay is kept for the next freeze, and the changelogs it covers go.
func (s *Store) install(j *flushJob) error {
	s.job = nil
	if err := s.dropIter(); err != nil {
		return err
	}
	if j.err != nil {
		if j.fatal {
			s.broken = true
		}
		return j.err
	}
	if j.hasSuper {
		for i, f := range s.flushes {
			if f.id == j.superseded {
				s.flushes = append(s.flushes[:i], s.flushes[i+1:]...)
				break
			}
		}
	}
	s.flushes = append(s.flushes, &flushState{flushRef: j.ref, filter: j.filter})
	for _, h := range j.forever {
		s.forever.add(h)
	}
	s.flushed = j.version
	s.metrics.Flushes++
	s.metrics.FlushKeys += j.keys
	s.metrics.FlushBytes += j.bytes
	s.metrics.FlushTime += j.dur
	j.ov.reset()
	s.spare = j.ov
	k := 0
	for _, l := range s.logs {
		if l.version > j.version {
			s.logs[k] = l
			k++
		}
	}
	s.logs = s.logs[:k]
	return removeChangelogs(s.fs, s.dir, j.version)
}

// runJob runs j and reports that it is done; a Pebble fatal error raised
// in it becomes its error (see errors.go), and breaks the store.
func (s *Store) runJob(j *flushJob) {
	t0 := time.Now()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatalError)
			if !ok {
				panic(r)
			}
			j.err, j.fatal = errors.New(f.msg), true
		}
		j.dur = time.Since(t0)
		close(j.done)
	}()
	j.err = s.write(j)
}

// cancelCheckEvery is how many entries a flush writes between two looks
// at its cancelled flag.
const cancelCheckEvery = 4096

// errFlushCancelled is the result of a flush that Close cancelled.
var errFlushCancelled = errors.New("flush cancelled by Close")

// flushLookahead is how many entries ahead of the one it writes a flush
// loads the key and the filter block of: the entries are read in key
// order, at random in the overlay's memory.
const flushLookahead = 16

// write writes j's sstables, ingests them and deletes the flushes j
// drops. It runs on its own goroutine: it reads only j, and the store's
// settings and DB, which Pebble allows from several goroutines.
func (s *Store) write(j *flushJob) error {
	ov := &j.ov
	items := ov.sortedByKey(func(i int) bool {
		e := &ov.ents[i]
		return !j.evl.dead(e.exp, e.epoch)
	})
	items, forever := ov.splitByExpiry(items)
	nexp := len(items)
	maxExp := int64(math.MinInt64)
	for _, it := range items {
		maxExp = max(maxExp, ov.ents[it.idx].exp)
	}
	j.ref = flushRef{id: j.id, epoch: j.evl.epoch, maxExp: maxExp, entries: int64(nexp)}
	j.m.live = append(j.m.live, j.ref)
	j.filter = newBloom(nexp)
	j.keys = int64(nexp + len(forever))

	staging := s.fs.PathJoin(s.dir, stagingDir)
	if err := s.fs.MkdirAll(staging, 0o777); err != nil {
		return err
	}
	fpath := s.fs.PathJoin(staging, strconv.FormatUint(j.id, 10)+".sst")
	var kbuf []byte
	var val [8]byte
	var sink uint32
	// touch loads the key of items[a], and with filter its filter block,
	// a few entries ahead of the one written.
	touch := func(items []sortItem, a int, filter bool) {
		if a >= len(items) {
			return
		}
		e := &ov.ents[items[a].idx]
		if e.klen > 0 {
			sink += uint32(ov.key(int(items[a].idx))[0])
		}
		if filter {
			sink += j.filter.block(e.hash)[0]
		}
	}
	written, err := s.writeTable(fpath, s.fopts, func(w *sstable.Writer) error {
		for i, it := range items {
			if i%cancelCheckEvery == 0 && j.cancelled.Load() {
				return errFlushCancelled
			}
			touch(items, i+flushLookahead, true)
			e := &ov.ents[it.idx]
			kbuf = appendEntry(kbuf[:0], j.id, ov.key(int(it.idx)))
			binary.BigEndian.PutUint64(val[:], uint64(e.exp))
			if err := w.Set(kbuf, val[:]); err != nil {
				return err
			}
			j.filter.add(e.hash)
		}
		kbuf = append(appendFlush(kbuf[:0], j.id), metaKind)
		return w.Set(kbuf, j.m.append(nil))
	})
	if err != nil {
		j.sink = sink
		return err
	}
	paths := []string{fpath}
	if len(forever) > 0 {
		npath := s.fs.PathJoin(staging, strconv.FormatUint(j.id, 10)+".forever.sst")
		n, err := s.writeTable(npath, s.wopts, func(w *sstable.Writer) error {
			for i, it := range forever {
				if i%cancelCheckEvery == 0 && j.cancelled.Load() {
					return errFlushCancelled
				}
				touch(forever, i+flushLookahead, false)
				kbuf = appendForever(kbuf[:0], ov.key(int(it.idx)))
				if err := w.Set(kbuf, nil); err != nil {
					return err
				}
				j.forever = append(j.forever, ov.ents[it.idx].hash)
			}
			return nil
		})
		if err != nil {
			s.fs.Remove(fpath)
			j.sink = sink
			return err
		}
		written += n
		paths = append(paths, npath)
	}
	j.sink = sink
	j.bytes = written
	if s.hook != nil {
		s.hook("ingest")
	}
	if j.cancelled.Load() {
		for _, p := range paths {
			s.fs.Remove(p)
		}
		return errFlushCancelled
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
	return s.deleteFlushes(j.drops)
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
	if s.hook != nil {
		// Apply and AsyncFlush wait in Pebble's write stall
		// (makeRoomForWrite) while its memtables cannot be flushed.
		s.hook("stall")
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
