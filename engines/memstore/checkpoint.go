package memstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// Checkpoint files, laid out like Spark's HDFSBackedStateStore: the state
// of version V (after batch V-1) is the newest V'.snapshot with V' <= V
// plus the deltas V'+1 .. V. Each commit appends one delta with the
// batch's changes, in the order they were made, to the open delta log
// (deltalog.go): a put record per key added, and an evict record per
// eviction that removed keys, holding the watermark it ran with rather
// than the keys it removed (eviction removes exactly the keys whose expiry
// is at or below the watermark's bound, so replaying it on the same state
// removes the same keys: half the bytes of a bounded query's delta, whose
// every key is put once and removed once). Full snapshots, put records
// only, are written in the background, as Spark's maintenance task writes
// them, so that recovery reads a bounded number of deltas (see
// Checkpointed).
const (
	snapshotMagic = "DDSMSNP1"
	// DefaultSnapshotEvery mirrors Spark's
	// spark.sql.streaming.stateStore.minDeltasForSnapshot (10).
	DefaultSnapshotEvery = 10

	recPut   = 'P'
	recEvict = 'E'

	// deltaReserve is the room the change log keeps at its start for
	// the delta's frame header (length, checksum, version).
	deltaReserve = frameHeader + frameMin
)

// changeLog collects a batch's changes for its delta.
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
// Every Commit appends the batch's delta to the open delta log, handed
// to the operating system (one write(2)) before Commit returns, without
// an fsync: a killed process (kill -9) loses no committed version, a
// machine crash may lose the last ones, as Spark's own files may be by
// default. A log is created at the first commit after a snapshot starts,
// so creating files costs one per snapshot, not one per batch.
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
	// the deltas (with their frames and the logs' headers), and the
	// snapshots started (counted when they start, at
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

	// cur is the delta log commits append to, nil until the first
	// commit after Open or after a snapshot starts; snaps the versions of
	// the finished snapshot files in the folder, in order.
	cur   *openLog
	snaps []int64
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
// store). It creates dir if needed. Deltas of later versions, left by a
// batch that was not committed to the query's commit log, are truncated
// from the delta logs (they are written again, byte for byte, when that
// batch runs again), and so is a record a kill cut short; snapshot files
// of later versions are ignored and overwritten; temporary files a killed
// process left are removed. A folder of an older dedupsim's layout (a
// delta file per batch) is refused in one line.
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
	if err := c.load(version, true); err != nil {
		c.cur.close()
		return nil, err
	}
	c.log.on = true
	c.log.buf = append(c.log.buf, make([]byte, deltaReserve)...)
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

// Commit appends the batch's delta (version batchID+1) to the delta log
// and starts a background snapshot when one is due.
func (c *Checkpointed) Commit(batchID int64) error {
	v := batchID + 1
	n := int64(0)
	if c.cur == nil {
		l, err := createLog(c.dir, v)
		if err != nil {
			return err
		}
		c.cur = l
		n += int64(logHeader)
	}
	// The change log starts with room for the delta's frame header (see
	// Open), so the record is written from it as it is.
	if err := c.cur.append(v, c.log.buf); err != nil {
		return err
	}
	n += int64(len(c.log.buf))
	c.BytesWritten += n
	c.log.buf = c.log.buf[:deltaReserve]
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
	// The deltas after v go to a new log, so that the logs this
	// snapshot covers are removed whole once no reopen needs them.
	if err := c.cur.close(); err != nil {
		return fmt.Errorf("memstore %s: %w", c.dir, err)
	}
	c.cur = nil
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
	if err == nil {
		c.addSnap(c.bg.version)
	}
	c.bg = nil
	return err
}

// addSnap records a finished snapshot file of version v.
func (c *Checkpointed) addSnap(v int64) {
	i, found := slices.BinarySearch(c.snaps, v)
	if !found {
		c.snaps = slices.Insert(c.snaps, i, v)
	}
}

// Close waits for a background snapshot under way to finish, then
// releases the store's memory. It returns the snapshot's error, if any.
func (c *Checkpointed) Close() error {
	err := c.join()
	if cerr := c.cur.close(); err == nil && cerr != nil {
		err = fmt.Errorf("memstore %s: %w", c.dir, cerr)
	}
	c.cur = nil
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
	c.cur.close()
	c.cur = nil
	c.Store.Close()
}

// dirFiles are the state files of a store's folder: the versions of its
// snapshot files and the first versions of its delta logs, in order.
type dirFiles struct {
	snaps, logs []int64
}

// listVersions lists the store's folder. A file that is not the store's,
// or a delta file of the layout of older dedupsim versions (a file per
// batch), is an error naming it.
func (c *Checkpointed) listVersions() (dirFiles, error) {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return dirFiles{}, fmt.Errorf("memstore %s: %w", c.dir, err)
	}
	var d dirFiles
	for _, e := range ents {
		name := e.Name()
		num := func(suffix string) (int64, error) {
			v, err := strconv.ParseInt(strings.TrimSuffix(name, suffix), 10, 64)
			if err != nil || v < 1 {
				return 0, fmt.Errorf("memstore %s: %s: not a state file of this store", c.dir, name)
			}
			return v, nil
		}
		switch {
		case fileio.IsCheckpointTemp(name):
			continue
		case strings.HasSuffix(name, ".delta"):
			return dirFiles{}, fmt.Errorf("memstore: %s: %w: a delta file of an older dedupsim (a file per batch; this version appends the deltas to %s files); use a new checkpoint folder", filepath.Join(c.dir, name), errCorrupt, logSuffix)
		case strings.HasSuffix(name, logSuffix):
			v, err := num(logSuffix)
			if err != nil {
				return dirFiles{}, err
			}
			d.logs = append(d.logs, v)
		case strings.HasSuffix(name, ".snapshot"):
			v, err := num(".snapshot")
			if err != nil {
				return dirFiles{}, err
			}
			d.snaps = append(d.snaps, v)
		default:
			return dirFiles{}, fmt.Errorf("memstore %s: %s: not a state file of this store", c.dir, name)
		}
	}
	slices.Sort(d.snaps)
	slices.Sort(d.logs)
	return d, nil
}

// baseOf returns the newest snapshot version at or below v, 0 for none.
func baseOf(snaps []int64, v int64) int64 {
	base := int64(0)
	for _, s := range snaps {
		if s <= v && s > base {
			base = s
		}
	}
	return base
}

// logPart is a delta log a version is rebuilt from: its content, its
// records of the versions read, and the length of the prefix that ends
// with the last of them (what a job snapshot checksums).
type logPart struct {
	path, name string
	first      int64
	data       []byte
	recs       []logRec
	upto       int64
}

// statePlan returns what rebuilding version v reads: the newest snapshot
// at or below v (0 for none), then the delta logs holding the versions
// after it, each with the records to replay. A missing delta is an error
// naming its version, a damaged log one naming the file and the byte.
func (c *Checkpointed) statePlan(d dirFiles, v int64) (int64, []logPart, error) {
	base := baseOf(d.snaps, v)
	var parts []logPart
	next := base + 1
	// seen names the last log read and where its valid part ends, for
	// the error of a missing delta.
	seen := ""
	for i, first := range d.logs {
		if first > v {
			break
		}
		if i+1 < len(d.logs) && d.logs[i+1] <= base+1 {
			// Every version in it is at or below base.
			continue
		}
		name := logName(first)
		path := filepath.Join(c.dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, nil, fmt.Errorf("memstore %s: %w", c.dir, err)
		}
		recs, valid, err := parseLog(path, data, first)
		if err != nil {
			return 0, nil, err
		}
		p := logPart{path: path, name: name, first: first, data: data[:valid]}
		seen = fmt.Sprintf(" (%s holds %d records, its valid part ends at byte %d of %d)", path, len(recs), valid, len(data))
		for _, r := range recs {
			if r.version < next || r.version > v {
				continue
			}
			if r.version != next {
				break
			}
			p.recs = append(p.recs, r)
			p.upto = r.end
			next++
		}
		if len(p.recs) > 0 {
			parts = append(parts, p)
		}
	}
	if next <= v {
		return 0, nil, fmt.Errorf("memstore %s: the delta of version %d is missing%s: cannot rebuild state version %d", c.dir, next, seen, v)
	}
	return base, parts, nil
}

// load rebuilds the state of version v from the newest snapshot at or
// below v and the deltas after it, replaying their records on the store
// (with the change log off) in the order they were written: a put adds
// its key, an evict record evicts at its watermark, as the batch did.
// With write (Open), it also removes the delta logs of later versions,
// truncates the one holding v after it, and opens it for appends.
func (c *Checkpointed) load(v int64, write bool) error {
	d, err := c.listVersions()
	if err != nil {
		return err
	}
	c.snaps = d.snaps
	if v == 0 && !write {
		return nil
	}
	base, parts, err := c.statePlan(d, v)
	if err != nil {
		return err
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
	for _, p := range parts {
		if p.first > base {
			c.deltaSince += int64(logHeader)
		}
		for _, r := range p.recs {
			if err := c.applyRecords(p.path, r.changes(p.data), true); err != nil {
				return err
			}
			c.deltaSince += r.end - r.off
		}
	}
	if !write {
		return nil
	}
	for _, first := range d.logs {
		if first > v {
			if err := os.Remove(filepath.Join(c.dir, logName(first))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("memstore %s: %w", c.dir, err)
			}
		}
	}
	if len(parts) > 0 {
		p := parts[len(parts)-1]
		if c.cur, err = reopenLog(p.path, p.first, v, p.data[:p.upto]); err != nil {
			return err
		}
	}
	return nil
}

var errCorrupt = errors.New("corrupt state file")

// checkHeader checks a snapshot file's magic and CRC-32 trailer and
// returns its records.
func checkHeader(path string, data []byte, magic string) ([]byte, error) {
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("memstore: %s: %w: bad header", path, errCorrupt)
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("memstore: %s: %w: checksum mismatch", path, errCorrupt)
	}
	return body[len(magic):], nil
}

// apply replays one snapshot file on the store and returns its size. A
// snapshot holds put records only.
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
	if err := c.applyRecords(path, recs, false); err != nil {
		return 0, err
	}
	return int64(len(data)), nil
}

// applyRecords replays the put records (and, with evict, the evict
// records) of a delta or a snapshot read from path.
func (c *Checkpointed) applyRecords(path string, recs []byte, evict bool) error {
	fail := func(why string) error {
		return fmt.Errorf("memstore: %s: %w: %s", path, errCorrupt, why)
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
				return fmt.Errorf("memstore %s: %w", c.dir, err)
			}
		case op == recEvict && evict:
			w, k := binary.Varint(recs)
			if k <= 0 {
				return fail("bad watermark")
			}
			recs = recs[k:]
			if _, err := c.Evict(w); err != nil {
				return fmt.Errorf("memstore %s: %w", c.dir, err)
			}
		default:
			return fail(fmt.Sprintf("unknown record %q", op))
		}
	}
	return nil
}
