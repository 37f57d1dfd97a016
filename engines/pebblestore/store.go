package pebblestore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	pebblebloom "github.com/cockroachdb/pebble/bloom"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/internal/expiry"
)

// markerName is the file that marks a directory as a pebblestore. Open
// refuses a non-empty directory without it before Pebble touches anything,
// so a foreign directory is never modified.
const markerName = "PEBBLESTORE"

// markerContent is the marker file's content. Format 2 is the layout of
// this package's documentation; format 1 (a WAL and an expiry index in
// Pebble) is refused.
const markerContent = "dedupsim pebblestore\nformat 2\n"

// The defaults of Options. Every store has its own cache and overlay, so a
// run with several queries multiplies them; Options.MemoryBudget sizes
// both from one number.
const (
	// DefaultCacheSize is the block cache, in bytes, of a Store whose
	// Options set neither CacheSize nor MemoryBudget.
	DefaultCacheSize int64 = 64 << 20
	// DefaultMemTableSize is the overlay, in bytes, of a Store whose
	// Options set neither MemTableSize nor MemoryBudget.
	DefaultMemTableSize uint64 = 64 << 20
	// minMemTableSize is the smallest overlay.
	minMemTableSize = 64 << 10
	// minCacheSize is the smallest block cache MemoryBudget leaves.
	minCacheSize = 1 << 20
	// DefaultCheckpointBatches is the most batches a Store whose Options
	// leave CheckpointBatches 0 commits between two flushes.
	DefaultCheckpointBatches = 1000
)

// Options configures a Store. The zero value is the default.
type Options struct {
	// CacheSize is the size in bytes of Pebble's block cache; 0 means
	// DefaultCacheSize, or its share of MemoryBudget.
	CacheSize int64
	// MemTableSize is the size in bytes of the overlay, the keys the store
	// holds in memory before it writes them to Pebble as sstables (a
	// flush); 0 means DefaultMemTableSize, or its share of MemoryBudget.
	// Bigger means fewer, larger flushes, which means fewer filters to
	// probe per lookup (see the package documentation).
	MemTableSize uint64
	// MemoryBudget, when positive, is the memory the store may give its
	// block cache and overlay together: half each, or what the one set
	// explicitly leaves to the other. The in-memory filters and expiry
	// counts grow with the live keys (about 2.5 and 16 bytes per key) and
	// are not part of it.
	MemoryBudget int64
	// CheckpointBatches is the most batches committed between two
	// flushes: a Commit flushes the overlay when it is full, or when this
	// many changelogs have been written since the last flush, however
	// little they added, so that recovery replays at most this many
	// changelogs and their files do not pile up in a run of nearly empty
	// batches. 0 means DefaultCheckpointBatches.
	CheckpointBatches int
	// Fsync makes every Commit fsync its changelog (and every flush its
	// sstables), so that a committed batch survives a machine crash.
	// Without it a committed batch survives a killed process, which is all
	// a simulation needs, and Commit is cheaper.
	Fsync bool

	// fs replaces the operating system's file system (tests inject a full
	// disk with it).
	fs vfs.FS
	// exit and stderr replace os.Exit and os.Stderr for a fatal error on
	// a background goroutine (see errors.go).
	exit   func(code int)
	stderr io.Writer
	// hook, if set, is called at named points of a flush (tests kill the
	// process there).
	hook func(point string)
}

// validate reports every problem of o at once.
func (o Options) validate() error {
	var errs []error
	if o.CacheSize < 0 {
		errs = append(errs, fmt.Errorf("CacheSize %d is negative", o.CacheSize))
	}
	if o.MemTableSize != 0 && o.MemTableSize < minMemTableSize {
		errs = append(errs, fmt.Errorf("MemTableSize %d is below 64 KiB", o.MemTableSize))
	}
	if o.MemTableSize >= 4<<30 {
		errs = append(errs, fmt.Errorf("MemTableSize %d is not below 4 GiB", o.MemTableSize))
	}
	if o.MemoryBudget < 0 {
		errs = append(errs, fmt.Errorf("MemoryBudget %d is negative", o.MemoryBudget))
	}
	if o.CheckpointBatches < 0 {
		errs = append(errs, fmt.Errorf("CheckpointBatches %d is negative", o.CheckpointBatches))
	}
	return errors.Join(errs...)
}

// sizes returns the block cache and overlay sizes o asks for.
func (o Options) sizes() (cache, overlay int64) {
	cache, overlay = o.CacheSize, int64(o.MemTableSize)
	if b := o.MemoryBudget; b > 0 {
		switch {
		case cache == 0 && overlay == 0:
			overlay = max(b/2, minMemTableSize)
			cache = max(b-overlay, minCacheSize)
		case cache == 0:
			cache = max(b-overlay, minCacheSize)
		case overlay == 0:
			overlay = max(b-cache, minMemTableSize)
		}
	}
	if cache == 0 {
		cache = DefaultCacheSize
	}
	if overlay == 0 {
		overlay = int64(DefaultMemTableSize)
	}
	return cache, min(overlay, 4<<30-1)
}

// overlayEntryBytes is what an overlay entry costs besides its key: the
// entry, its share of the table, and its share of the next flush's sort.
const overlayEntryBytes = 56

// Store is an engines.Store, engines.BatchAdder, engines.Ranger and
// engines.Snapshotter kept in a Pebble DB. See the package documentation
// for its layout and guarantees.
type Store struct {
	dir string
	db  *pebble.DB
	// release frees the block cache once db is closed.
	release func()
	// fs is the file system of the changelogs and the flushes' sstables.
	fs    vfs.FS
	popts *pebble.Options
	// wopts write the sstables of NoExpiry keys, fopts those of flushes:
	// without Pebble's table filter, which the store's own filters make
	// redundant (they answer for every lookup before Pebble sees it).
	wopts, fopts sstable.WriterOptions
	fsync        bool
	limit        int64 // overlay bytes that make a Commit flush
	cache        int64 // the block cache's size
	// ckptBatches is the most changelogs a Commit leaves unflushed.
	ckptBatches int
	seed        maphash.Seed
	hook        func(string)
	// stop is closed by Interrupt: a wait on the flush goroutine ends
	// there, whatever Pebble does.
	stop     chan struct{}
	stopOnce sync.Once
	sh       *shared
	ov       overlay
	exps     expiry.Index
	countF   func([]expiry.Item)
	evl      evictLog
	// flushes are the live flushes, oldest first; the last one holds the
	// newest metadata.
	flushes []*flushState
	forever growingBloom
	n       int64
	nextID  uint64
	// drops are the flushes dropped since the last flush: deleted from
	// Pebble right after the next one, whose metadata leaves them out.
	drops []uint64
	// hasBatch and batchID are the last committed batch; flushed is the
	// version of the last flush: the changelogs after it hold the rest.
	hasBatch bool
	batchID  int64
	flushed  int64
	log      changelog
	// logs are the sizes of the changelogs since the last flush;
	// unflushed counts those after the running flush's version, if any.
	logs      []logSize
	unflushed int
	// job is the flush running in the background, if any, whose frozen
	// overlay lookups read too; spare is the memory of the last flush's
	// overlay, for the next freeze.
	job   *flushJob
	spare overlay

	// it is the iterator of lookups in Pebble (see get), or nil.
	it *pebble.Iterator

	// Reusable buffers, so that Add, Evict and Commit do not allocate.
	kbuf, cbuf []byte
	// sink keeps AddBatch's look-ahead loads from being optimized away.
	sink uint32

	metrics Metrics
	// readOnly is set by OpenReadOnly: nothing is written.
	readOnly bool
	// err is returned by every call once the store is closed or a Commit
	// failed.
	err    error
	closed bool
	// broken is set once Pebble raised a fatal error in one of the
	// store's calls: its DB must not be used again, not even closed.
	broken bool
}

// logSize is the size of the changelog of a version.
type logSize struct {
	version int64
	bytes   int64
}

// flushState is a live flush: what its metadata says, and its filter.
type flushState struct {
	flushRef
	filter bloom
	// dropping is set by an Evict whose watermark reached maxExp: the
	// next Commit drops the flush.
	dropping bool
}

// Open creates a store in dir, or reopens the one there in the state of its
// last Commit. dir may be missing or empty; anything else must be a
// pebblestore (a directory with a PEBBLESTORE marker file and a Pebble DB
// holding the store's metadata), or Open fails with an error naming the
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
			dir, path, fileio.Show(string(b)))
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

// populate writes the marker and an empty store into the new directory
// tmp: a Pebble DB holding flush 0, whose metadata says version 0.
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
	s := newStore(tmp, db, popts, opts, sh, false)
	s.nextID = 0
	if err := s.flush(); err != nil {
		db.Close()
		return err
	}
	if err := sh.backgroundError(); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// newStore returns a store over db with empty in-memory state.
func newStore(dir string, db *pebble.DB, popts *pebble.Options, opts Options, sh *shared, readOnly bool) *Store {
	cache, overlay := opts.sizes()
	base := vfs.Default
	if opts.fs != nil {
		base = opts.fs
	}
	var fsys vfs.FS = base
	if readOnly {
		fsys = readOnlyFS{base}
	}
	wopts := popts.MakeWriterOptions(0, db.FormatMajorVersion().MaxTableFormat())
	wopts.Cache = nil
	fopts := wopts
	fopts.FilterPolicy = nil
	s := &Store{
		dir:         dir,
		db:          db,
		release:     func() {},
		fs:          fsys,
		popts:       popts,
		wopts:       wopts,
		fopts:       fopts,
		fsync:       opts.Fsync,
		limit:       overlay,
		cache:       cache,
		ckptBatches: cmp.Or(opts.CheckpointBatches, DefaultCheckpointBatches),
		seed:        maphash.MakeSeed(),
		hook:        opts.hook,
		stop:        make(chan struct{}),
		sh:          sh,
		readOnly:    readOnly,
	}
	s.countF = func([]expiry.Item) {}
	s.resetMemory()
	return s
}

// resetMemory empties the in-memory state (recover fills it again).
func (s *Store) resetMemory() {
	s.dropIter()
	s.ov = newOverlay()
	s.exps = expiry.New()
	s.evl = evictLog{}
	s.flushes = nil
	s.forever = growingBloom{}
	s.n = 0
	s.nextID = 0
	s.drops = nil
	s.hasBatch, s.batchID, s.flushed = false, 0, 0
	s.log.reset()
	s.logs = s.logs[:0]
	s.unflushed = 0
	s.job = nil
}

// open opens the existing store at dir and recovers its last committed
// state; readOnly opens it without writing anything to dir (see
// OpenReadOnly).
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
	s := newStore(dir, db, popts, opts, sh, readOnly)
	s.release = release
	if err := s.recover(); err != nil {
		if !s.broken {
			s.dropIter()
			db.Close()
		}
		release()
		if strings.HasPrefix(err.Error(), "pebblestore ") {
			return nil, err
		}
		return nil, fmt.Errorf("pebblestore %s: %w", dir, err)
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

// pebbleOptions returns the Pebble options of a store and a function that
// releases the block cache once the DB is closed. sh receives Pebble's
// fatal and background errors; a read-only store's file system refuses
// every change and takes no lock file.
func pebbleOptions(opts Options, sh *shared, readOnly bool) (*pebble.Options, func()) {
	cacheSize, _ := opts.sizes()
	cache := pebble.NewCache(cacheSize)
	o := &pebble.Options{
		Cache: cache,
		// Pebble's own memtable holds only the range deletions that drop
		// flushes: the store's writes reach Pebble as sstables.
		MemTableSize:                4 << 20,
		MemTableStopWritesThreshold: 4,
		// The changelogs make a committed batch durable (see changelog.go).
		DisableWAL:         true,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             storeLogger{sh: sh},
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
	o.FS = base
	if readOnly {
		o.FS = readOnlyFS{base}
	}
	o.Levels = make([]pebble.LevelOptions, 7)
	for i := range o.Levels {
		l := &o.Levels[i]
		// Random ids and 8-byte values do not compress.
		l.Compression = pebble.NoCompression
		// A lookup that gets past the store's own filters is mostly a
		// duplicate's, but the rest are absent keys: a table filter
		// answers for them without a data block read.
		l.FilterPolicy = pebblebloom.FilterPolicy(10)
		l.FilterType = pebble.TableFilter
	}
	o.EnsureDefaults()
	return o, cache.Unref
}

// hash returns the hash of key that the overlay and the filters use.
func (s *Store) hash(key []byte) uint64 { return maphash.Bytes(s.seed, key) }

// Add inserts key with expiry expiresAt unless it is present, and reports
// whether it inserted. A key added or evicted earlier in the same batch is
// seen as such. Add copies key.
func (s *Store) Add(key []byte, expiresAt int64) (_ bool, err error) {
	if err := s.writable(); err != nil {
		return false, err
	}
	defer s.recoverFatal("add", &err)
	ok, err := s.add(s.hash(key), key, expiresAt)
	if err != nil {
		return false, fmt.Errorf("pebblestore %s: add: %w", s.dir, err)
	}
	if ok {
		s.log.put(key, expiresAt)
	}
	return ok, nil
}

// addGroup is the number of keys AddBatch hashes, and whose overlay slot
// and filter blocks it loads, ahead of adding them.
const addGroup = 16

// AddBatch implements engines.BatchAdder: Add for each key of a run, in
// order. Most keys of a batch are new, and a new key is checked against
// the filter of every live flush: one cache line each, in filters that
// together outgrow the caches at millions of keys. So, in groups of
// addGroup keys, a first pass hashes every key and loads its overlay slot
// and its block of every filter; those loads do not depend on each other,
// so the processor overlaps their misses. The second pass adds the keys
// one by one with Add's own code, finding the lines in cache. Results are
// Add's exactly: the first pass only reads.
func (s *Store) AddBatch(keys []byte, ends []int32, expiresAt []int64, added []bool) (err error) {
	if err := s.writable(); err != nil {
		return err
	}
	defer s.recoverFatal("add", &err)
	var hs [addGroup]uint64
	start := int32(0)
	for g := 0; g < len(ends); g += addGroup {
		m := min(addGroup, len(ends)-g)
		var sink uint32
		off := start
		for k := range m {
			end := ends[g+k]
			h := s.hash(keys[off:end])
			hs[k] = h
			sink += s.ov.slots[uint32(h)>>s.ov.shift].idx
			for _, f := range s.flushes {
				sink += f.filter.block(h)[0]
			}
			for i := range s.forever.segs {
				sink += s.forever.segs[i].block(h)[0]
			}
			off = end
		}
		s.sink += sink
		off = start
		for k := range m {
			end := ends[g+k]
			key := keys[off:end]
			ok, err := s.add(hs[k], key, expiresAt[g+k])
			if err != nil {
				return fmt.Errorf("pebblestore %s: add: %w", s.dir, err)
			}
			if ok {
				s.log.put(key, expiresAt[g+k])
			}
			added[g+k] = ok
			off = end
		}
		start = off
	}
	return nil
}

// writable returns the error of a call that changes the store, if any.
func (s *Store) writable() error {
	if s.err != nil {
		return s.err
	}
	if s.readOnly {
		return fmt.Errorf("pebblestore %s: the store is open read-only", s.dir)
	}
	return nil
}

// add is Add for the key of hash h, without the changelog: the overlay
// first, then the NoExpiry keys and the flushes, newest first.
func (s *Store) add(h uint64, key []byte, exp int64) (bool, error) {
	if i := s.ov.lookup(h, key); i >= 0 {
		e := &s.ov.ents[i]
		if !s.evl.dead(e.exp, e.epoch) {
			return false, nil
		}
		// Evicted: added again in place. No other copy of the key is
		// live: it was absent everywhere when this entry was made.
		e.exp, e.epoch = exp, s.evl.epoch
	} else {
		present, err := s.stored(h, key)
		if err != nil || present {
			return false, err
		}
		s.ov.insert(h, key, exp, s.evl.epoch)
	}
	if exp != engines.NoExpiry {
		s.exps.Push(expiry.Item{At: expiry.OrderKey(exp)})
	}
	s.n++
	return true, nil
}

// stored reports whether key, of hash h, is live in Pebble: a NoExpiry key,
// or the entry of the newest flush holding it, if not dead. A key the
// filters rule out costs no lookup.
func (s *Store) stored(h uint64, key []byte) (bool, error) {
	if s.forever.has(h) {
		s.kbuf = appendForever(s.kbuf[:0], key)
		found, _, err := s.get(s.kbuf, nil)
		if err != nil || found {
			return found, err
		}
	}
	if s.job != nil {
		// The overlay being flushed: newer than every flush.
		ov := &s.job.ov
		if i := ov.lookup(h, key); i >= 0 {
			e := &ov.ents[i]
			return !s.evl.dead(e.exp, e.epoch), nil
		}
	}
	for i := len(s.flushes) - 1; i >= 0; i-- {
		f := s.flushes[i]
		if f.dropping || !f.filter.has(h) {
			continue
		}
		s.kbuf = appendEntry(s.kbuf[:0], f.id, key)
		var v [8]byte
		found, _, err := s.get(s.kbuf, v[:])
		if err != nil {
			return false, err
		}
		if found {
			// The newest copy decides: an older one is dead, since the key
			// was added again after it.
			return !s.evl.dead(int64(binary.BigEndian.Uint64(v[:])), f.epoch), nil
		}
	}
	return false, nil
}

// get looks key up in Pebble and copies its value into val (which must be
// as long as the value, if not nil). It seeks the store's lookup iterator
// rather than calling Pebble's Get, which allocates for every level it
// visits; the iterator is made at the first lookup after a Commit or a
// flush's install, so it sees every live flush.
func (s *Store) get(key, val []byte) (bool, int, error) {
	if s.it == nil {
		it, err := s.db.NewIter(nil)
		if err != nil {
			return false, 0, err
		}
		s.it = it
	}
	if !s.it.SeekGE(key) || !bytes.Equal(s.it.Key(), key) {
		return false, 0, s.it.Error()
	}
	v, err := s.it.ValueAndErr()
	if err != nil {
		return false, 0, err
	}
	n := len(v)
	if val != nil && n != len(val) {
		return false, 0, fmt.Errorf("key %q has a %d-byte value, want %d", fileio.Show(string(key)), n, len(val))
	}
	copy(val, v)
	return true, n, nil
}

// dropIter closes the lookup iterator, if any: it pins the sstables of
// its time, and does not see a flush ingested after it was made.
func (s *Store) dropIter() error {
	if s.it == nil {
		return nil
	}
	err := s.it.Close()
	s.it = nil
	return err
}

// Evict removes every key whose expiry is at or below watermark, except
// NoExpiry keys, which it never removes, and returns how many it removed.
// Its cost is what it removes: it counts them in the expiry index and
// records the watermark, without touching a stored entry.
//
// For example, with keys a (expiry 10), b (20) and c (NoExpiry),
// Evict(15) removes a and returns 1; Evict(math.MaxInt64) then removes b
// and returns 1; c stays.
func (s *Store) Evict(watermark int64) (_ int, err error) {
	if err := s.writable(); err != nil {
		return 0, err
	}
	n := s.evict(watermark)
	s.log.evict(watermark, n)
	return n, nil
}

// evict is Evict without the changelog.
func (s *Store) evict(watermark int64) int {
	b := engines.EvictBound(watermark)
	n := s.exps.PopUpTo(expiry.OrderKey(b), s.countF)
	if n > 0 {
		s.evl.record(b)
	}
	// A flush whose every entry expires by b holds only dead entries now.
	// The newest one holds the metadata and stays.
	for _, f := range s.flushes[:max(len(s.flushes)-1, 0)] {
		if !f.dropping && f.maxExp <= b {
			f.dropping = true
		}
	}
	s.n -= int64(n)
	return n
}

// Len returns the number of keys in the store, including the current
// batch's Adds and Evicts. It is exact and costs nothing.
func (s *Store) Len() int { return int(s.n) }

// version returns the store's version: the number of committed batches.
func (s *Store) version() int64 {
	if !s.hasBatch {
		return 0
	}
	return s.batchID + 1
}

// Commit makes every Add and Evict since the last Commit durable as the
// state of batchID: it writes them to the batch's changelog, whole, before
// it returns, and flushes the overlay to Pebble when it is full or when
// Options.CheckpointBatches batches were committed since the last flush
// (the flush runs in the background; see flush.go). Once
// Commit returns, the batch survives a killed process (and a machine crash
// with Options.Fsync). Batch ids must increase. After a failed Commit
// every call returns its error; reopen the store to continue from the last
// committed batch.
func (s *Store) Commit(batchID int64) (err error) {
	if err := s.writable(); err != nil {
		return err
	}
	if err := s.sh.backgroundError(); err != nil {
		s.err = err
		return err
	}
	if batchID < s.version() {
		return fmt.Errorf("pebblestore %s: commit batch %d: batch %d is already committed", s.dir, batchID, s.batchID)
	}
	defer s.recoverFatal("commit batch "+strconv.FormatInt(batchID, 10), &err)
	v := batchID + 1
	s.cbuf = encodeChangelog(s.cbuf, s.version(), batchID, s.log.buf)
	if err := writeChangelog(s.fs, s.dir, v, s.cbuf, s.fsync); err != nil {
		// Nothing is committed; only a reopen, back to the last Commit,
		// can continue.
		s.err = fmt.Errorf("pebblestore %s: commit batch %d: %s", s.dir, batchID, oneLine(err.Error()))
		return s.err
	}
	s.metrics.Commits++
	s.metrics.CommitBytes += int64(len(s.cbuf))
	s.metrics.LastCommitBytes = int64(len(s.cbuf))
	s.logs = append(s.logs, logSize{version: v, bytes: int64(len(s.cbuf))})
	s.unflushed++
	s.commitDone(batchID)
	err = s.dropIter()
	if err == nil {
		err = s.pollFlush()
	}
	if err == nil && (s.ov.keyBytes+int64(s.ov.len())*overlayEntryBytes >= s.limit || s.unflushed >= s.ckptBatches) {
		err = s.startFlush()
	}
	if err != nil {
		s.err = fmt.Errorf("pebblestore %s: commit batch %d: flush: %s", s.dir, batchID, oneLine(err.Error()))
		return s.err
	}
	return nil
}

// commitDone ends a batch that is committed: it drops the flushes its
// Evicts emptied and clears the changelog.
func (s *Store) commitDone(batchID int64) {
	s.hasBatch, s.batchID = true, batchID
	k := 0
	for _, f := range s.flushes {
		if f.dropping {
			s.drops = append(s.drops, f.id)
			continue
		}
		s.flushes[k] = f
		k++
	}
	clear(s.flushes[k:])
	s.flushes = s.flushes[:k]
	s.log.reset()
}

// Abort discards every Add and Evict since the last Commit, like Spark's
// StateStore.abort: the store is again in the state of the last Commit.
// It reloads that state from the store's files, so it costs as much as
// reopening the store.
func (s *Store) Abort() {
	if s.err != nil {
		return
	}
	func() {
		var err error
		defer s.recoverFatal("abort", &err)
		if err = s.waitFlush(); err == nil {
			err = s.recover()
		}
		if err != nil {
			s.err = fmt.Errorf("pebblestore %s: abort: %s", s.dir, oneLine(err.Error()))
		}
	}()
}

// LastCommitted returns the batch id of the last Commit, in this process or
// before the store was reopened; ok is false if no batch was ever committed.
func (s *Store) LastCommitted() (batchID int64, ok bool) {
	return s.batchID, s.hasBatch
}

// Close discards uncommitted work and closes the store. The committed
// batches stay in the changelogs and sstables, where Open finds them.
// Later calls on the store return an error; Close itself may be called
// again.
func (s *Store) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.job != nil {
		// A running flush stops before it ingests (an interrupted run
		// must not wait for an overlay of gigabytes to be written); one
		// that got past that point finishes. Either way it is not
		// installed: its changelogs stay, and a reopen replays them, or
		// skips those an ingested flush covers. After Interrupt, a flush
		// that has not finished is left running (it may be stuck in
		// Pebble's write stall): the DB is not closed under it.
		s.job.cancelled.Store(true)
		select {
		case <-s.job.done:
			if s.job.fatal {
				s.broken = true
			}
		case <-s.stop:
			s.broken = true
		}
		s.job = nil
	}
	s.err = fmt.Errorf("pebblestore %s: store is closed", s.dir)
	if s.broken {
		// Pebble's commit pipeline may be left locked by the fatal error:
		// closing the DB could wait forever. The process is about to
		// report the error; its files stay as the last Commit left them.
		s.release()
		return nil
	}
	err := s.dropIter()
	if cerr := s.closeDB(); err == nil {
		err = cerr
	}
	s.release()
	s.resetMemory()
	if err != nil {
		return fmt.Errorf("pebblestore %s: close: %s", s.dir, oneLine(err.Error()))
	}
	return nil
}

// closeDB closes the DB.
func (s *Store) closeDB() (err error) {
	defer s.recoverFatal("close", &err)
	return s.db.Close()
}

// MemorySizes returns the sizes, in bytes, of the store's block cache and
// of its overlay, as its Options set them (see Options.MemoryBudget).
func (s *Store) MemorySizes() (cache, overlay int64) { return s.cache, s.limit }

// Metrics are a store's sizes and write counters, for comparing backends.
type Metrics struct {
	// DiskBytes is the space the store's files take on disk: Pebble's
	// (sstables, MANIFEST) and the changelogs since the last flush.
	DiskBytes uint64
	// MemTableBytes is the memory of the keys not yet flushed: the
	// overlay (the frozen one too, during a flush), and Pebble's memtable
	// (range deletions only).
	MemTableBytes uint64
	// FilterBytes is the memory of the store's filters.
	FilterBytes uint64
	// Commits counts the Commits since Open.
	Commits int64
	// CommitBytes is the total size of the changelogs written since Open;
	// LastCommitBytes is the last one's.
	CommitBytes     int64
	LastCommitBytes int64
	// Flushes counts the flushes since Open, FlushKeys the keys they
	// wrote, FlushBytes the bytes of their sstables and FlushTime the time
	// they took.
	Flushes    int64
	FlushKeys  int64
	FlushBytes int64
	FlushTime  time.Duration
}

// Metrics returns the store's current metrics. It is not meant for the hot
// path: it asks Pebble for a snapshot of its own metrics.
func (s *Store) Metrics() Metrics {
	m := s.metrics
	if !s.closed && !s.broken {
		pm := s.db.Metrics()
		m.DiskBytes = pm.DiskSpaceUsage()
		for _, l := range s.logs {
			m.DiskBytes += uint64(l.bytes)
		}
		m.MemTableBytes = pm.MemTable.Size + uint64(s.ov.bytes())
		if s.job != nil {
			m.MemTableBytes += uint64(s.job.ov.bytes())
		}
		fb := s.forever.bytes()
		for _, f := range s.flushes {
			fb += f.filter.bytes()
		}
		m.FilterBytes = uint64(fb)
	}
	return m
}
