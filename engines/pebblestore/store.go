package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/fileio"
)

// markerName is the file that marks a directory as a pebblestore. Open
// refuses a non-empty directory without it before Pebble touches anything,
// so a foreign directory is never modified.
const markerName = "PEBBLESTORE"

// markerContent is the marker file's content.
const markerContent = "dedupsim pebblestore\nformat 1\n"

// The defaults of Options. Every store has its own cache and memtables, so
// a run with several queries multiplies them.
const (
	// DefaultCacheSize is the block cache, in bytes, of a Store whose
	// Options.CacheSize is 0.
	DefaultCacheSize int64 = 64 << 20
	// DefaultMemTableSize is the memtable size, in bytes, of a Store whose
	// Options.MemTableSize is 0.
	DefaultMemTableSize uint64 = 32 << 20
)

// Options configures a Store. The zero value is the default.
type Options struct {
	// CacheSize is the size in bytes of Pebble's block cache;
	// 0 means DefaultCacheSize.
	CacheSize int64
	// MemTableSize is the size in bytes of one Pebble memtable;
	// 0 means DefaultMemTableSize. Up to four may be in memory at once.
	MemTableSize uint64
	// Fsync makes every Commit fsync the WAL, so that a committed batch
	// survives a machine crash. Without it a committed batch survives a
	// killed process, which is all a simulation needs, and Commit is
	// cheaper.
	Fsync bool

	// fs replaces the operating system's file system (tests inject a full
	// disk with it).
	fs vfs.FS
	// exit and stderr replace os.Exit and os.Stderr for a fatal error on
	// a background goroutine (see errors.go).
	exit   func(code int)
	stderr io.Writer
}

// validate reports every problem of o at once.
func (o Options) validate() error {
	var errs []error
	if o.CacheSize < 0 {
		errs = append(errs, fmt.Errorf("CacheSize %d is negative", o.CacheSize))
	}
	if o.MemTableSize != 0 && o.MemTableSize < 64<<10 {
		errs = append(errs, fmt.Errorf("MemTableSize %d is below 64 KiB", o.MemTableSize))
	}
	if o.MemTableSize >= 4<<30 {
		errs = append(errs, fmt.Errorf("MemTableSize %d is not below 4 GiB, Pebble's limit", o.MemTableSize))
	}
	return errors.Join(errs...)
}

// Store is an engines.Store and engines.Ranger kept in a Pebble DB. See the
// package documentation for its layout and guarantees.
type Store struct {
	dir string
	db  *pebble.DB
	// release frees the block cache once db is closed.
	release func()
	wopts   *pebble.WriteOptions

	// batch and pend hold the work of the current micro-batch.
	batch *pebble.Batch
	pend  pending

	// committed is the metadata of the last Commit; n and low are the
	// current values, including the pending batch. clow is the lower bound
	// for reading the committed index, which pending Adds do not lower.
	committed meta
	n         int64
	low       int64
	clow      int64

	// Reusable buffers, so that Add and Evict do not allocate.
	kbuf, xbuf, hbuf []byte
	vbuf             [8]byte

	metrics Metrics
	// readOnly is set by OpenReadOnly: Pebble refuses every write.
	readOnly bool
	// sh is shared with Pebble's logger and event listener.
	sh *shared
	// err is returned by every call once the store is closed or a Commit
	// failed.
	err    error
	closed bool
	// broken is set once Pebble raised a fatal error in one of the
	// store's calls: its DB must not be used again, not even closed.
	broken bool
}

// Open creates a store in dir, or reopens the one there in the state of its
// last Commit. dir may be missing or empty; anything else must be a
// pebblestore (a directory with a PEBBLESTORE marker file and a Pebble DB
// holding the store's metadata key), or Open fails with an error naming the
// directory and what it found there, and leaves it untouched.
func Open(dir string, opts Options) (*Store, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("pebblestore %s: invalid options: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0:
		if err := create(dir, opts); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("pebblestore %s: %w", dir, err)
	default:
		if err := checkMarker(dir, entries); err != nil {
			return nil, err
		}
	}
	return open(dir, opts, false)
}

// checkMarker checks that a non-empty dir is a pebblestore.
func checkMarker(dir string, entries []os.DirEntry) error {
	path := filepath.Join(dir, markerName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		names := make([]string, 0, 3)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		more := ""
		if len(entries) > 3 {
			more = fmt.Sprintf(" and %d more", len(entries)-3)
		}
		return fmt.Errorf("pebblestore %s: not a pebblestore: no %s file, the directory holds %s%s; refusing to use it",
			dir, markerName, strings.Join(names, ", "), more)
	}
	if err != nil {
		return fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	if string(b) != markerContent {
		return fmt.Errorf("pebblestore %s: %s is not a pebblestore marker of a format this build reads: %q",
			dir, path, string(b))
	}
	return nil
}

// create makes a new store at dir, which is missing or empty. It builds the
// store in a temporary sibling directory and renames it into place, so that
// a process killed halfway leaves dir as it was (plus a hidden temporary
// directory) instead of a Pebble DB that Open would refuse as foreign.
func create(dir string, opts Options) error {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	tmp, err := fileio.MkdirTemp(parent, "."+base+".creating-")
	if err != nil {
		return fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	if err := populate(tmp, opts); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("pebblestore %s: creating: %w", dir, err)
	}
	// Rename cannot replace a directory on every OS; Remove only removes
	// an empty one, so a directory filled meanwhile is never lost.
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.RemoveAll(tmp)
		return fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	return nil
}

// populate writes the marker and an empty store into the new directory tmp.
func populate(tmp string, opts Options) (err error) {
	if err := fileio.WriteFile(filepath.Join(tmp, markerName), []byte(markerContent)); err != nil {
		return err
	}
	sh := newShared(tmp, opts)
	popts, release := pebbleOptions(opts, sh, false)
	defer release()
	popts.ErrorIfExists = true
	defer recoverOpen(tmp, &err)
	db, err := pebble.Open(tmp, popts)
	if err != nil {
		return openError(tmp, err)
	}
	if err := db.Set(metaKey, emptyMeta().append(nil), pebble.Sync); err != nil {
		db.Close()
		return err
	}
	if err := sh.backgroundError(); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// open opens the existing store at dir; readOnly opens it without
// writing anything to dir (see OpenReadOnly).
func open(dir string, opts Options, readOnly bool) (_ *Store, err error) {
	sh := newShared(dir, opts)
	popts, release := pebbleOptions(opts, sh, readOnly)
	popts.ErrorIfNotExists = true
	popts.ReadOnly = readOnly
	db, err := openDB(dir, popts)
	if err != nil {
		release()
		return nil, err
	}
	m, err := readMeta(db)
	if err != nil {
		db.Close()
		release()
		return nil, fmt.Errorf("pebblestore %s: %w", dir, err)
	}
	s := &Store{
		dir:       dir,
		db:        db,
		release:   release,
		wopts:     pebble.Sync, // see "Durability" in the package documentation
		batch:     db.NewBatch(),
		pend:      newPending(),
		committed: m,
		n:         m.n,
		low:       m.low,
		clow:      m.low,
		readOnly:  readOnly,
		sh:        sh,
	}
	return s, nil
}

// openDB opens the Pebble DB at dir, with a fatal error or a lock held
// elsewhere turned into a one-line error naming dir.
func openDB(dir string, popts *pebble.Options) (db *pebble.DB, err error) {
	defer recoverOpen(dir, &err)
	db, err = pebble.Open(dir, popts)
	if err != nil {
		return nil, openError(dir, err)
	}
	return db, nil
}

// readMeta reads the metadata record of db.
func readMeta(db *pebble.DB) (meta, error) {
	v, closer, err := db.Get(metaKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return meta{}, errors.New("no metadata key: a Pebble DB that is not a pebblestore, or a damaged one")
	}
	if err != nil {
		return meta{}, fmt.Errorf("reading metadata: %w", err)
	}
	m, err := decodeMeta(v)
	if cerr := closer.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return meta{}, fmt.Errorf("reading metadata: %w", err)
	}
	return m, nil
}

// pebbleOptions returns the Pebble options of a store and a function that
// releases the block cache once the DB is closed. sh receives Pebble's
// fatal and background errors; a read-only store's file system refuses
// every change and takes no lock file.
func pebbleOptions(opts Options, sh *shared, readOnly bool) (*pebble.Options, func()) {
	cacheSize := opts.CacheSize
	if cacheSize == 0 {
		cacheSize = DefaultCacheSize
	}
	memtable := opts.MemTableSize
	if memtable == 0 {
		memtable = DefaultMemTableSize
	}
	cache := pebble.NewCache(cacheSize)
	o := &pebble.Options{
		Cache:        cache,
		MemTableSize: memtable,
		// A flush falling behind on a 2-core machine queues memtables
		// instead of stalling the micro-batch that fills the current one.
		MemTableStopWritesThreshold: 4,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      storeLogger{sh: sh},
		EventListener: &pebble.EventListener{
			// A failing flush or compaction (a full disk): the next
			// Commit returns the first one (see errors.go).
			BackgroundError: func(err error) {
				msg := oneLine(err.Error())
				sh.bgErr.CompareAndSwap(nil, &msg)
			},
		},
	}
	base := vfs.Default
	if opts.fs != nil {
		base = opts.fs
	}
	switch {
	case readOnly:
		o.FS = readOnlyFS{base}
	case !opts.Fsync:
		o.FS = walNoFsyncFS{base}
	default:
		o.FS = base
	}
	o.Levels = make([]pebble.LevelOptions, 7)
	for i := range o.Levels {
		l := &o.Levels[i]
		// Random ids and 8-byte values do not compress.
		l.Compression = pebble.NoCompression
		// Most Adds look up an absent key: a filter answers without a
		// data block read.
		l.FilterPolicy = bloom.FilterPolicy(10)
		l.FilterType = pebble.TableFilter
	}
	o.EnsureDefaults()
	return o, cache.Unref
}

// Add inserts key with expiry expiresAt unless it is present, and reports
// whether it inserted. A key added or evicted earlier in the same batch is
// seen as such. Add copies key.
func (s *Store) Add(key []byte, expiresAt int64) (_ bool, err error) {
	if s.err != nil {
		return false, s.err
	}
	defer s.recoverFatal("add", &err)
	e, touched := s.pend.get(key)
	if touched && e.live {
		return false, nil
	}
	if !touched {
		s.kbuf = appendPrimary(s.kbuf[:0], key)
		_, closer, err := s.db.Get(s.kbuf)
		if err == nil {
			if err := closer.Close(); err != nil {
				return false, fmt.Errorf("pebblestore %s: add: %w", s.dir, err)
			}
			return false, nil
		}
		if !errors.Is(err, pebble.ErrNotFound) {
			return false, fmt.Errorf("pebblestore %s: add: %w", s.dir, err)
		}
	}
	// Absent, or evicted earlier in this batch whatever the DB still says.
	// Commit writes the entries.
	s.pend.addLive(key, expiresAt, e.inDB)
	if expiresAt != engines.NoExpiry {
		s.low = min(s.low, expiresAt)
	}
	s.n++
	return true, nil
}

// Evict removes every key whose expiry is at or below watermark, except
// NoExpiry keys, which it never removes, and returns how many it removed.
// It reads only the index entries it removes.
//
// For example, with keys a (expiry 10), b (20) and c (NoExpiry),
// Evict(15) removes a and returns 1; Evict(math.MaxInt64) then removes b
// and returns 1; c stays.
func (s *Store) Evict(watermark int64) (_ int, err error) {
	if s.err != nil {
		return 0, s.err
	}
	defer s.recoverFatal("evict", &err)
	hi := engines.EvictBound(watermark)
	if hi < s.low {
		return 0, nil
	}
	evicted := 0
	// Committed keys expiring in [clow, hi]. Every one of them is live:
	// one evicted earlier in this batch expired at or before an earlier
	// watermark, below clow.
	if hi >= s.clow {
		s.xbuf = appendIndexTime(s.xbuf[:0], s.clow)
		s.hbuf = appendIndexTime(s.hbuf[:0], hi+1)
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: s.xbuf, UpperBound: s.hbuf})
		if err != nil {
			return 0, fmt.Errorf("pebblestore %s: evict: %w", s.dir, err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			_, key, valid := splitIndex(it.Key())
			if !valid {
				it.Close()
				return 0, fmt.Errorf("pebblestore %s: evict: malformed index key %q", s.dir, it.Key())
			}
			if _, touched := s.pend.get(key); touched {
				// Unreachable by the invariant above; a key the batch
				// touched is the overlay's to evict.
				continue
			}
			s.pend.set(key, pendingEntry{inDB: true})
			evicted++
		}
		if err := it.Close(); err != nil {
			return 0, fmt.Errorf("pebblestore %s: evict: %w", s.dir, err)
		}
		s.clow = hi + 1
	}
	// Keys this batch added that expire by hi. Their entries are not in
	// Pebble yet: marking them dead is enough.
	evicted += s.pend.evictLive(hi)
	// One range tombstone removes every committed index entry in [low, hi];
	// this batch's own index entries are written at Commit, after it.
	s.xbuf = appendIndexTime(s.xbuf[:0], s.low)
	s.hbuf = appendIndexTime(s.hbuf[:0], hi+1)
	if err := s.batch.DeleteRange(s.xbuf, s.hbuf, nil); err != nil {
		return 0, fmt.Errorf("pebblestore %s: evict: %w", s.dir, err)
	}
	// clow is already past hi: the scan above moved it, or it was.
	s.low = hi + 1
	s.n -= int64(evicted)
	return evicted, nil
}

// Len returns the number of keys in the store, including the current
// batch's Adds and Evicts. It is exact and costs nothing: the count is kept
// in memory and committed with every batch.
func (s *Store) Len() int { return int(s.n) }

// Commit atomically writes every Add and Evict since the last Commit,
// together with batchID and Len, so that a reopened store is in exactly
// this state. Once Commit returns, the batch survives a killed process (and
// a machine crash with Options.Fsync). After a failed Commit every call
// returns its error; reopen the store to continue from the last Commit.
func (s *Store) Commit(batchID int64) (err error) {
	if s.err != nil {
		return s.err
	}
	if err := s.sh.backgroundError(); err != nil {
		s.err = err
		return err
	}
	defer s.recoverFatal("commit batch "+strconv.FormatInt(batchID, 10), &err)
	m := meta{hasBatch: true, batchID: batchID, n: s.n, low: s.low}
	err = s.writePending()
	if err == nil {
		s.xbuf = m.append(s.xbuf[:0])
		err = s.batch.Set(metaKey, s.xbuf, nil)
	}
	size := int64(len(s.batch.Repr()))
	if err == nil {
		err = s.batch.Commit(s.wopts)
	}
	if err != nil {
		// The batch is half written: only a reopen, back to the last
		// Commit, can continue.
		s.err = fmt.Errorf("pebblestore %s: commit batch %d: %w", s.dir, batchID, err)
		return s.err
	}
	s.batch.Reset()
	s.pend.reset()
	s.committed = m
	s.clow = s.low
	s.metrics.Commits++
	s.metrics.CommitBytes += size
	s.metrics.LastCommitBytes = size
	return nil
}

// writePending appends the batch's point writes to the pebble.Batch, after
// the range deletions of its Evicts: the primary entries in key order, then
// the index entries in index order. Sorted, each insert into the memtable
// starts from the splice of the previous one instead of from the top of the
// skiplist, and the index entries, whose times mostly exceed every
// committed one, append at the end of the index.
func (s *Store) writePending() error {
	kvs := s.pend.sortedByKey()
	for i := range kvs {
		e := &kvs[i]
		s.kbuf = append(s.kbuf[:0], primaryPrefix)
		s.kbuf = append(s.kbuf, e.key...)
		var err error
		switch {
		case e.live:
			binary.BigEndian.PutUint64(s.vbuf[:], uint64(e.expiresAt))
			err = s.batch.Set(s.kbuf, s.vbuf[:], nil)
		case e.inDB:
			err = s.batch.Delete(s.kbuf, nil)
		}
		if err != nil {
			return err
		}
	}
	sortByExpiry(kvs)
	for i := range kvs {
		e := &kvs[i]
		if !e.live || e.expiresAt == engines.NoExpiry {
			continue
		}
		s.xbuf = appendIndexTime(s.xbuf[:0], e.expiresAt)
		s.xbuf = append(s.xbuf, e.key...)
		if err := s.batch.Set(s.xbuf, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// Abort discards every Add and Evict since the last Commit, like Spark's
// StateStore.abort: the store is again in the state of the last Commit.
func (s *Store) Abort() {
	if s.err != nil {
		return
	}
	s.batch.Reset()
	s.pend.reset()
	s.n, s.low, s.clow = s.committed.n, s.committed.low, s.committed.low
}

// LastCommitted returns the batch id of the last Commit, in this process or
// before the store was reopened; ok is false if no batch was ever committed.
func (s *Store) LastCommitted() (batchID int64, ok bool) {
	return s.committed.batchID, s.committed.hasBatch
}

// Close discards uncommitted work and closes the store. Later calls on the
// store return an error; Close itself may be called again.
func (s *Store) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.err = fmt.Errorf("pebblestore %s: store is closed", s.dir)
	if s.broken {
		// Pebble's commit pipeline may be left locked by the fatal error:
		// closing the DB could wait forever. The process is about to
		// report the error; its files stay as the last Commit left them.
		s.release()
		return nil
	}
	err := s.closeDB()
	s.release()
	if err != nil {
		return fmt.Errorf("pebblestore %s: close: %s", s.dir, oneLine(err.Error()))
	}
	return nil
}

// closeDB closes the pending batch and the DB.
func (s *Store) closeDB() (err error) {
	defer s.recoverFatal("close", &err)
	s.batch.Close()
	return s.db.Close()
}

// Range calls fn with every key and its expiry in ascending byte order of
// the keys, including the current batch's Adds and without its Evicts,
// until fn returns false. key is only valid during the call, and fn must
// not call the store.
func (s *Store) Range(fn func(key []byte, expiresAt int64) bool) (err error) {
	if s.err != nil {
		return s.err
	}
	defer s.recoverFatal("range", &err)
	pend := s.pend.sortedByKey()
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte{primaryPrefix},
		UpperBound: []byte{primaryPrefix + 1},
	})
	if err != nil {
		return fmt.Errorf("pebblestore %s: range: %w", s.dir, err)
	}
	// emit yields a pending entry, if live.
	emit := func(e pendingKV) bool {
		return !e.live || fn([]byte(e.key), e.expiresAt)
	}
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		key := it.Key()[1:]
		for i < len(pend) && pend[i].key < string(key) {
			if !emit(pend[i]) {
				return closeIter(s.dir, it)
			}
			i++
		}
		if i < len(pend) && pend[i].key == string(key) {
			// The batch touched a committed key; its entry wins.
			if !emit(pend[i]) {
				return closeIter(s.dir, it)
			}
			i++
			continue
		}
		v := it.Value()
		if len(v) != 8 {
			it.Close()
			return fmt.Errorf("pebblestore %s: range: key %q has a %d-byte value, want 8", s.dir, key, len(v))
		}
		if !fn(key, int64(binary.BigEndian.Uint64(v))) {
			return closeIter(s.dir, it)
		}
	}
	if err := closeIter(s.dir, it); err != nil {
		return err
	}
	for ; i < len(pend); i++ {
		if !emit(pend[i]) {
			return nil
		}
	}
	return nil
}

func closeIter(dir string, it *pebble.Iterator) error {
	if err := it.Close(); err != nil {
		return fmt.Errorf("pebblestore %s: range: %w", dir, err)
	}
	return nil
}

// Metrics are a store's size and write counters, for comparing backends.
type Metrics struct {
	// DiskBytes is the space the store's files take on disk (Pebble's
	// DiskSpaceUsage: sstables, WAL, MANIFEST).
	DiskBytes uint64
	// MemTableBytes is the memory Pebble holds in memtables.
	MemTableBytes uint64
	// Commits counts the Commits since Open.
	Commits int64
	// CommitBytes is the total size of the batches committed since Open,
	// about what they wrote to the WAL (which adds a few bytes of framing
	// per 32 KiB block); LastCommitBytes is the last one's.
	CommitBytes     int64
	LastCommitBytes int64
}

// Metrics returns the store's current metrics. It is not meant for the hot
// path: it asks Pebble for a snapshot of its own metrics.
func (s *Store) Metrics() Metrics {
	m := s.metrics
	if !s.closed && !s.broken {
		pm := s.db.Metrics()
		m.DiskBytes = pm.DiskSpaceUsage()
		m.MemTableBytes = pm.MemTable.Size
	}
	return m
}
