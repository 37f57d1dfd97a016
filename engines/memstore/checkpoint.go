package memstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// Checkpoint files, laid out like Spark's HDFSBackedStateStore: the state
// of version V (after batch V-1) is the newest V'.snapshot with V' <= V
// plus the deltas V'+1 .. V. Each commit writes one delta with the batch's
// changes, in the order they were made: a put record per key added, and an
// evict record per eviction that removed keys, holding the watermark it
// ran with rather than the keys it removed (eviction removes exactly the
// keys whose expiry is at or below the watermark's bound, so replaying it
// on the same state removes the same keys: half the bytes of a bounded
// query's delta, whose every key is put once and removed once). Full
// snapshots, put records only, are written in the background, as Spark's
// maintenance task writes them, so that recovery reads a bounded number of
// deltas (see Checkpointed).
const (
	deltaMagic    = "DDSMDLT2"
	snapshotMagic = "DDSMSNP1"
	// oldDeltaMagic heads the deltas of dedupsim versions that logged
	// every removed key ('R' records); they are refused, not misread.
	oldDeltaMagic = "DDSMDLT1"
	// DefaultSnapshotEvery mirrors Spark's
	// spark.sql.streaming.stateStore.minDeltasForSnapshot (10).
	DefaultSnapshotEvery = 10

	recPut   = 'P'
	recEvict = 'E'
)

// changeLog collects a batch's changes for its delta file.
type changeLog struct {
	on  bool
	buf []byte
	n   int
}

func (l *changeLog) put(key []byte, expiresAt int64) {
	l.buf = append(l.buf, recPut)
	l.buf = binary.AppendUvarint(l.buf, uint64(len(key)))
	l.buf = append(l.buf, key...)
	l.buf = binary.AppendVarint(l.buf, expiresAt)
	l.n++
}

// evict records an eviction at watermark that removed n keys.
func (l *changeLog) evict(watermark int64, n int) {
	l.buf = append(l.buf, recEvict)
	l.buf = binary.AppendVarint(l.buf, watermark)
	l.n += n
}

// Options configure a checkpointed store.
type Options struct {
	// SnapshotEvery is the least number of versions between snapshots
	// [DefaultSnapshotEvery].
	SnapshotEvery int64
}

// Checkpointed is a Store that writes its state to a directory, so that a
// restarted query can reload it.
//
// Every Commit writes the batch's delta file, handed to the operating
// system (write(2), then a rename) before Commit returns, without an
// fsync: a killed process (kill -9) loses no committed version, a machine
// crash may lose the last ones, as Spark's own files may be by default.
//
// A snapshot file, the whole state of a version, is written by a
// background goroutine from a frozen view of the store (see view.go), one
// at a time. The commit that starts one pays a copy of the arena's
// live-record bitmaps (a bit per 8 bytes of keys); the walk, the encoding
// and the write run beside the query. A snapshot starts at the first
// commit at least SnapshotEvery versions after the last one whose deltas
// since hold at least as many bytes as that snapshot: so the snapshots of
// a run write at most about as many bytes as its deltas do (total work
// linear in the run's rows, however long it runs), and a recovery reads a
// snapshot plus at most about as many bytes again of deltas. The
// versions snapshotted depend only on the history of the store, never on
// timing. A snapshot file is written under a temporary name, synced,
// renamed into place and its folder synced: a reader never sees an
// unfinished one, and once it is visible it is durable. Until it is, the
// deltas it covers are all there: only Snapshot removes files, and only
// those covered by a finished snapshot no reopen needs.
//
// Close waits for a snapshot under way; Abort cancels it (its temporary
// file is removed). Either way no goroutine outlives them.
type Checkpointed struct {
	*Store
	dir           string
	snapshotEvery int64
	// BytesWritten counts the checkpoint bytes written by all commits:
	// the deltas, and the snapshots started (counted when they start, at
	// the size they are written at, so that it does not depend on when
	// they finish).
	BytesWritten int64
	// SnapshotBytes is the part of BytesWritten that went to snapshots.
	SnapshotBytes int64
	// version is the number of committed batches: the state's version.
	version int64
	// snapped and snapVersion record the last Snapshot call on this
	// store: the oldest version a reopen may still need (see Snapshot).
	snapped     bool
	snapVersion int64

	// lastSnap is the version of the last snapshot started (or found at
	// Open), lastSnapBytes its size, deltaSince the bytes of the deltas
	// written after it.
	lastSnap, lastSnapBytes, deltaSince int64
	// bg is the background snapshot under way or not yet joined, nil if
	// none; viewBuf the bitmap copies of the last view, reused.
	bg      *bgSnapshot
	viewBuf []uint64
	// slabHook, if set (tests), is called by the snapshot's goroutine
	// before it reads each slab of the view.
	slabHook func()
}

// bgSnapshot is one background snapshot.
type bgSnapshot struct {
	version int64
	done    chan struct{}
	cancel  atomic.Bool
	err     error // set before done is closed
}

// Open opens the checkpointed store in dir at the given version (the number
// of committed batches, like Spark's state store version; 0 for an empty
// store). It creates dir if needed. Files of later versions, left by a batch
// that was not committed to the query's commit log, are ignored and will be
// overwritten when that batch runs again; temporary files a killed process
// left are removed.
func Open(dir string, version int64, opts Options) (*Checkpointed, error) {
	if opts.SnapshotEvery <= 0 {
		opts.SnapshotEvery = DefaultSnapshotEvery
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("memstore %s: %w", dir, err)
	}
	c := &Checkpointed{Store: New(), dir: dir, snapshotEvery: opts.SnapshotEvery, version: version}
	c.arena.track = true
	c.arena.bits = [][]uint64{nil}
	if err := c.removeTemps(); err != nil {
		return nil, err
	}
	if version > 0 {
		if err := c.load(version); err != nil {
			return nil, err
		}
	}
	c.log.on = true
	c.log.buf = append(c.log.buf, deltaMagic...)
	return c, nil
}

// removeTemps removes the temporary files of this store's atomic writes
// that a killed process left behind (".<n>.snapshot.tmp-*" and
// ".<n>.delta.tmp-*"), which readers skip.
func (c *Checkpointed) removeTemps() error {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("memstore %s: %w", c.dir, err)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !fileio.IsTemp(name) {
			continue
		}
		if !strings.Contains(name, ".snapshot.tmp-") && !strings.Contains(name, ".delta.tmp-") {
			continue
		}
		if err := os.Remove(filepath.Join(c.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("memstore %s: %w", c.dir, err)
		}
	}
	return nil
}

// Commit writes the batch's delta file (version batchID+1) and starts a
// background snapshot when one is due.
func (c *Checkpointed) Commit(batchID int64) error {
	v := batchID + 1
	// The change log starts with the delta's header (see Open), so the
	// file is written from it as it is, plus its trailer.
	n, err := c.writeFile(fmt.Sprintf("%d.delta", v), c.log.buf)
	if err != nil {
		return err
	}
	c.log.buf = c.log.buf[:len(deltaMagic)]
	c.log.n = 0
	c.version = v
	c.deltaSince += n
	if c.bg != nil && c.deltaSince >= c.lastSnapBytes/2 {
		// Halfway to the next snapshot: the last one has long finished
		// (it wrote as many bytes as half of these deltas took batches to
		// make), so waiting for it costs nothing, and its slabs are
		// recycled at a point that depends on the history alone.
		if err := c.join(); err != nil {
			return err
		}
		c.arena.unpin()
	}
	if v-c.lastSnap >= c.snapshotEvery && c.deltaSince >= c.lastSnapBytes {
		return c.startSnapshot(v)
	}
	return nil
}

// startSnapshot freezes the state of version v and writes it in the
// background.
func (c *Checkpointed) startSnapshot(v int64) error {
	if err := c.join(); err != nil {
		return err
	}
	c.arena.unpin()
	var vw view
	vw, c.viewBuf = c.arena.freeze(c.viewBuf)
	size := int64(len(snapshotMagic)) + c.arena.enc + 4
	c.BytesWritten += size
	c.SnapshotBytes += size
	c.lastSnap, c.lastSnapBytes, c.deltaSince = v, size, 0
	bg := &bgSnapshot{version: v, done: make(chan struct{})}
	c.bg = bg
	dir, path, hook := c.dir, filepath.Join(c.dir, fmt.Sprintf("%d.snapshot", v)), c.slabHook
	go func() {
		defer close(bg.done)
		if err := writeView(dir, path, vw, size, &bg.cancel, hook); err != nil {
			bg.err = fmt.Errorf("memstore %s: snapshot of version %d: %w", dir, v, err)
		}
	}()
	return nil
}

// join waits for the background snapshot, if any, and returns its error.
// The arena stays pinned: the caller unpins it where the history says.
func (c *Checkpointed) join() error {
	if c.bg == nil {
		return nil
	}
	<-c.bg.done
	err := c.bg.err
	c.bg = nil
	return err
}

// Close waits for a background snapshot under way to finish, then
// releases the store's memory. It returns the snapshot's error, if any.
func (c *Checkpointed) Close() error {
	err := c.join()
	if cerr := c.Store.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abort cancels a background snapshot under way (it leaves no file, or,
// if it was already renamed into place, a complete one), waits for its
// goroutine to end, and releases the store's memory, writing nothing
// more: what a killed process leaves, without the kill.
func (c *Checkpointed) Abort() {
	if c.bg != nil {
		c.bg.cancel.Store(true)
		<-c.bg.done
		c.bg = nil
	}
	c.Store.Close()
}

// writeFile writes data plus a CRC-32 trailer atomically, through
// fileio.WriteFileNoSync: a killed process never leaves a torn file (at
// most a temporary ".<name>.tmp-*", which listVersions skips); a power
// loss may lose the last versions, which a restart then reports missing.
func (c *Checkpointed) writeFile(name string, data []byte) (int64, error) {
	data = binary.BigEndian.AppendUint32(data, crc32.ChecksumIEEE(data))
	if err := fileio.WriteFileNoSync(filepath.Join(c.dir, name), data); err != nil {
		return 0, fmt.Errorf("memstore %s: write %s: %w", c.dir, name, err)
	}
	c.BytesWritten += int64(len(data))
	return int64(len(data)), nil
}

// load rebuilds the state of version v from the newest snapshot at or
// below v and the deltas after it, replaying their records on the store
// (with the change log off) in the order they were written: a put adds
// its key, an evict record evicts at its watermark, as the batch did.
func (c *Checkpointed) load(v int64) error {
	snaps, deltas, err := c.listVersions()
	if err != nil {
		return err
	}
	base := int64(0)
	for _, s := range snaps {
		if s <= v && s > base {
			base = s
		}
	}
	// The snapshot schedule resumes where the history left it: the last
	// snapshot at or below v, and the bytes of the deltas since.
	c.lastSnap, c.lastSnapBytes, c.deltaSince = base, 0, 0
	if base > 0 {
		n, err := c.apply(fmt.Sprintf("%d.snapshot", base), snapshotMagic)
		if err != nil {
			return err
		}
		c.lastSnapBytes = n
	}
	for u := base + 1; u <= v; u++ {
		if !deltas[u] {
			return fmt.Errorf("memstore %s: %d.delta is missing: cannot rebuild state version %d", c.dir, u, v)
		}
		n, err := c.apply(fmt.Sprintf("%d.delta", u), deltaMagic)
		if err != nil {
			return err
		}
		c.deltaSince += n
	}
	return nil
}

func (c *Checkpointed) listVersions() (snaps []int64, deltas map[int64]bool, err error) {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("memstore %s: %w", c.dir, err)
	}
	deltas = map[int64]bool{}
	for _, e := range ents {
		name := e.Name()
		switch {
		case fileio.IsCheckpointTemp(name):
			continue
		case strings.HasSuffix(name, ".delta"):
			v, err := strconv.ParseInt(strings.TrimSuffix(name, ".delta"), 10, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("memstore %s: %s: not a state file of this store", c.dir, name)
			}
			deltas[v] = true
		case strings.HasSuffix(name, ".snapshot"):
			v, err := strconv.ParseInt(strings.TrimSuffix(name, ".snapshot"), 10, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("memstore %s: %s: not a state file of this store", c.dir, name)
			}
			snaps = append(snaps, v)
		default:
			return nil, nil, fmt.Errorf("memstore %s: %s: not a state file of this store", c.dir, name)
		}
	}
	return snaps, deltas, nil
}

var errCorrupt = errors.New("corrupt state file")

// checkHeader checks a state file's magic and CRC-32 trailer and returns
// its records. A delta of the older format is refused in one line.
func checkHeader(path string, data []byte, magic string) ([]byte, error) {
	if magic == deltaMagic && len(data) >= len(oldDeltaMagic) && string(data[:len(oldDeltaMagic)]) == oldDeltaMagic {
		return nil, fmt.Errorf("memstore: %s: %w: a delta of an older dedupsim (format %s, this version reads %s); use a new checkpoint folder", path, errCorrupt, oldDeltaMagic, deltaMagic)
	}
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("memstore: %s: %w: bad header", path, errCorrupt)
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("memstore: %s: %w: checksum mismatch", path, errCorrupt)
	}
	return body[len(magic):], nil
}

// apply replays one delta or snapshot file on the store and returns its
// size. A snapshot holds put records only.
func (c *Checkpointed) apply(name, magic string) (int64, error) {
	path := filepath.Join(c.dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("memstore %s: %w", c.dir, err)
	}
	recs, err := checkHeader(path, data, magic)
	if err != nil {
		return 0, err
	}
	fail := func(why string) (int64, error) {
		return 0, fmt.Errorf("memstore: %s: %w: %s", path, errCorrupt, why)
	}
	for len(recs) > 0 {
		op := recs[0]
		recs = recs[1:]
		switch {
		case op == recPut:
			n, k := binary.Uvarint(recs)
			if k <= 0 || n > uint64(len(recs)-k) {
				return fail("bad key length")
			}
			key := recs[k : k+int(n)]
			recs = recs[k+int(n):]
			exp, k := binary.Varint(recs)
			if k <= 0 {
				return fail("bad expiry")
			}
			recs = recs[k:]
			if _, err := c.Add(key, exp); err != nil {
				return 0, fmt.Errorf("memstore %s: %w", c.dir, err)
			}
		case op == recEvict && magic == deltaMagic:
			w, k := binary.Varint(recs)
			if k <= 0 {
				return fail("bad watermark")
			}
			recs = recs[k:]
			if _, err := c.Evict(w); err != nil {
				return 0, fmt.Errorf("memstore %s: %w", c.dir, err)
			}
		default:
			return fail(fmt.Sprintf("unknown record %q", op))
		}
	}
	return int64(len(data)), nil
}
