package memstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Checkpoint files, laid out like Spark's HDFSBackedStateStore: the state
// of version V (after batch V-1) is the newest V'.snapshot with V' <= V
// plus the deltas V'+1 .. V. Each commit writes one delta with the keys put
// and removed in that batch; every SnapshotEvery versions a full snapshot
// is written too, so recovery reads a bounded number of deltas.
const (
	deltaMagic    = "DDSMDLT1"
	snapshotMagic = "DDSMSNP1"
	// DefaultSnapshotEvery mirrors Spark's
	// spark.sql.streaming.stateStore.minDeltasForSnapshot (10).
	DefaultSnapshotEvery = 10

	recPut    = 'P'
	recRemove = 'R'
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

func (l *changeLog) remove(key []byte) {
	l.buf = append(l.buf, recRemove)
	l.buf = binary.AppendUvarint(l.buf, uint64(len(key)))
	l.buf = append(l.buf, key...)
	l.n++
}

// Options configure a checkpointed store.
type Options struct {
	// SnapshotEvery is the number of versions between full snapshots
	// [DefaultSnapshotEvery].
	SnapshotEvery int64
}

// Checkpointed is a Store that writes its state to a directory on every
// Commit, so that a restarted query can reload it.
type Checkpointed struct {
	*Store
	dir           string
	snapshotEvery int64
	// BytesWritten counts the checkpoint bytes written by all commits.
	BytesWritten int64
	// version is the number of committed batches: the state's version.
	version int64
	// snapped and snapVersion record the last Snapshot call on this
	// store: the oldest version a reopen may still need (see Snapshot).
	snapped     bool
	snapVersion int64
}

// Open opens the checkpointed store in dir at the given version (the number
// of committed batches, like Spark's state store version; 0 for an empty
// store). It creates dir if needed. Files of later versions, left by a batch
// that was not committed to the query's commit log, are ignored and will be
// overwritten when that batch runs again.
func Open(dir string, version int64, opts Options) (*Checkpointed, error) {
	if opts.SnapshotEvery <= 0 {
		opts.SnapshotEvery = DefaultSnapshotEvery
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("memstore %s: %w", dir, err)
	}
	c := &Checkpointed{Store: New(), dir: dir, snapshotEvery: opts.SnapshotEvery, version: version}
	if version > 0 {
		if err := c.load(version); err != nil {
			return nil, err
		}
	}
	c.log.on = true
	return c, nil
}

// Commit writes the batch's delta file (version batchID+1) and, every
// SnapshotEvery versions, a snapshot.
func (c *Checkpointed) Commit(batchID int64) error {
	v := batchID + 1
	var b bytes.Buffer
	b.WriteString(deltaMagic)
	b.Write(c.log.buf)
	if err := c.writeFile(fmt.Sprintf("%d.delta", v), b.Bytes()); err != nil {
		return err
	}
	c.log.buf = c.log.buf[:0]
	c.log.n = 0
	c.version = v
	if v%c.snapshotEvery == 0 {
		return c.writeSnapshot(v)
	}
	return nil
}

func (c *Checkpointed) writeSnapshot(v int64) error {
	// Keys in arena order: a sequential walk of the arena (the slot order
	// would read it at random), and a deterministic order for the same
	// history. Sorting by key bytes cost most of a checkpointed run's time.
	refs := make([]uint32, 0, c.tab.n)
	for _, sl := range c.tab.slots {
		if sl.ref != 0 {
			refs = append(refs, sl.ref)
		}
	}
	slices.Sort(refs)
	var b bytes.Buffer
	b.WriteString(snapshotMagic)
	var tmp []byte
	for _, ref := range refs {
		k := c.arena.key(ref)
		tmp = tmp[:0]
		tmp = append(tmp, recPut)
		tmp = binary.AppendUvarint(tmp, uint64(len(k)))
		tmp = append(tmp, k...)
		tmp = binary.AppendVarint(tmp, c.arena.expiry(ref))
		b.Write(tmp)
	}
	return c.writeFile(fmt.Sprintf("%d.snapshot", v), b.Bytes())
}

// writeFile writes data plus a CRC-32 trailer atomically, through
// fileio.WriteFileNoSync: a killed process never leaves a torn file (at
// most a temporary ".<name>.tmp-*", which listVersions skips); a power
// loss may lose the last versions, which a restart then reports missing.
func (c *Checkpointed) writeFile(name string, data []byte) error {
	data = binary.BigEndian.AppendUint32(data, crc32.ChecksumIEEE(data))
	if err := fileio.WriteFileNoSync(filepath.Join(c.dir, name), data); err != nil {
		return fmt.Errorf("memstore %s: write %s: %w", c.dir, name, err)
	}
	c.BytesWritten += int64(len(data))
	return nil
}

// load rebuilds the state of version v from the newest snapshot at or
// below v and the deltas after it.
func (c *Checkpointed) load(v int64) error {
	snaps, deltas, err := c.listVersions()
	if err != nil {
		return err
	}
	state := make(map[string]int64)
	base := int64(0)
	for _, s := range snaps {
		if s <= v && s > base {
			base = s
		}
	}
	if base > 0 {
		if err := c.apply(fmt.Sprintf("%d.snapshot", base), snapshotMagic, state); err != nil {
			return err
		}
	}
	for u := base + 1; u <= v; u++ {
		if !deltas[u] {
			return fmt.Errorf("memstore %s: %d.delta is missing: cannot rebuild state version %d", c.dir, u, v)
		}
		if err := c.apply(fmt.Sprintf("%d.delta", u), deltaMagic, state); err != nil {
			return err
		}
	}
	// The store is built only from the final state: a key put and removed
	// within the replayed deltas never enters the expiry index.
	for k, exp := range state {
		if _, err := c.Add([]byte(k), exp); err != nil {
			return fmt.Errorf("memstore %s: %w", c.dir, err)
		}
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

// apply reads one delta or snapshot file into state.
func (c *Checkpointed) apply(name, magic string, state map[string]int64) error {
	path := filepath.Join(c.dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("memstore %s: %w", c.dir, err)
	}
	fail := func(why string) error {
		return fmt.Errorf("memstore: %s: %w: %s", path, errCorrupt, why)
	}
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return fail("bad header")
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return fail("checksum mismatch")
	}
	r := bytes.NewReader(body[len(magic):])
	for {
		op, err := r.ReadByte()
		if err == io.EOF {
			return nil
		}
		n, err := binary.ReadUvarint(r)
		if err != nil || n > uint64(r.Len()) {
			return fail("bad key length")
		}
		key := make([]byte, n)
		io.ReadFull(r, key)
		switch op {
		case recPut:
			exp, err := binary.ReadVarint(r)
			if err != nil {
				return fail("bad expiry")
			}
			state[string(key)] = exp
		case recRemove:
			delete(state, string(key))
		default:
			return fail(fmt.Sprintf("unknown record %q", op))
		}
	}
}
