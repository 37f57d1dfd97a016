package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	iofs "io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
)

// Changelogs.
//
// Every Commit writes the batch's changes to a file of its own,
// <dir>/changes/<version>.changes, before it returns: the operations that
// changed the state, in the order the batch made them (an Add that
// inserted, with its key and expiry; an Evict, with its watermark and how
// many keys it removed), after a header naming the version the batch
// starts from and its batch id, and followed by a CRC-32 of the whole.
// The file is written beside its name and renamed into place, through the
// store's file system, so that a killed process leaves it whole or absent
// (a ".<name>.tmp-*" at most, which readers skip and Open removes). Once
// the rename returned, the batch survives a killed process: the bytes are
// in the operating system's page cache (write(2)); they are fsynced only
// with Options.Fsync.
//
// Recovery replays the changelogs of the versions after the store's last
// flush through the same code that made them (Add and Evict), checking
// that every Add inserts again and every Evict removes as many keys, so a
// changelog that does not fit the state it is replayed on is refused
// rather than applied. A flush makes the changelogs before it unnecessary,
// and the store deletes them.
const (
	changesDir     = "changes"
	changesSuffix  = ".changes"
	changelogMagic = "DDSPCHG1"
	opPut          = 'P'
	opEvict        = 'E'
)

// changelog collects the operations of the current batch.
type changelog struct {
	buf []byte
	ops int
}

func (c *changelog) put(key []byte, exp int64) {
	c.buf = append(c.buf, opPut)
	c.buf = binary.AppendUvarint(c.buf, uint64(len(key)))
	c.buf = append(c.buf, key...)
	c.buf = binary.AppendVarint(c.buf, exp)
	c.ops++
}

func (c *changelog) evict(watermark int64, removed int) {
	c.buf = append(c.buf, opEvict)
	c.buf = binary.AppendVarint(c.buf, watermark)
	c.buf = binary.AppendUvarint(c.buf, uint64(removed))
	c.ops++
}

func (c *changelog) reset() {
	c.buf = c.buf[:0]
	c.ops = 0
}

// encodeChangelog returns the file of a batch: header, operations, CRC.
func encodeChangelog(dst []byte, prev int64, batchID int64, ops []byte) []byte {
	dst = append(dst[:0], changelogMagic...)
	dst = binary.AppendUvarint(dst, uint64(prev))
	dst = binary.AppendVarint(dst, batchID)
	dst = append(dst, ops...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst))
}

// changelogFile is a decoded changelog.
type changelogFile struct {
	prev    int64
	batchID int64
	ops     []byte
}

var errCorruptChangelog = errors.New("corrupt changelog")

// decodeChangelog checks a changelog's frame and returns its parts; the
// operations are checked as they are replayed (replayOps).
func decodeChangelog(data []byte) (changelogFile, error) {
	if len(data) < len(changelogMagic)+4 || string(data[:len(changelogMagic)]) != changelogMagic {
		return changelogFile{}, fmt.Errorf("%w: bad header", errCorruptChangelog)
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return changelogFile{}, fmt.Errorf("%w: checksum mismatch", errCorruptChangelog)
	}
	r := reader{b: body[len(changelogMagic):]}
	f := changelogFile{prev: int64(r.uvarint()), batchID: r.varint()}
	if r.err != nil || f.prev < 0 || f.batchID < 0 || f.batchID+1 <= f.prev {
		return changelogFile{}, fmt.Errorf("%w: bad versions", errCorruptChangelog)
	}
	f.ops = r.b
	return f, nil
}

// replayOps calls put and evict for each operation of ops, in order.
func replayOps(ops []byte, put func(key []byte, exp int64) error, evict func(watermark int64, removed int) error) error {
	r := reader{b: ops}
	for len(r.b) > 0 {
		op := r.b[0]
		r.b = r.b[1:]
		switch op {
		case opPut:
			key := r.bytes(r.uvarint())
			exp := r.varint()
			if r.err != nil {
				return fmt.Errorf("%w: truncated put", errCorruptChangelog)
			}
			if err := put(key, exp); err != nil {
				return err
			}
		case opEvict:
			w := r.varint()
			n := r.uvarint()
			if r.err != nil {
				return fmt.Errorf("%w: truncated evict", errCorruptChangelog)
			}
			if err := evict(w, int(n)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: unknown operation %q", errCorruptChangelog, op)
		}
	}
	return nil
}

func changelogName(version int64) string {
	return strconv.FormatInt(version, 10) + changesSuffix
}

// writeChangelog writes data as the changelog of version in dir/changes,
// whole or not at all (see the type's documentation).
func writeChangelog(fs vfs.FS, dir string, version int64, data []byte, fsync bool) error {
	cdir := fs.PathJoin(dir, changesDir)
	final := fs.PathJoin(cdir, changelogName(version))
	tmp := fileio.TempName(final, "tmp")
	f, err := fs.Create(tmp)
	if err != nil && isNotExist(err) {
		if err := fs.MkdirAll(cdir, 0o777); err != nil {
			return err
		}
		f, err = fs.Create(tmp)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, final)
	}
	if err != nil {
		fs.Remove(tmp)
		return err
	}
	if fsync {
		return syncDir(fs, cdir)
	}
	return nil
}

// syncDir fsyncs a folder of fs.
func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	return fileio.SyncClose(d)
}

// listChangelogs returns the versions of the changelogs in dir/changes,
// ascending, skipping files being written; a name that is neither is an
// error naming it. A missing folder holds none.
func listChangelogs(fs vfs.FS, dir string) ([]int64, error) {
	cdir := fs.PathJoin(dir, changesDir)
	names, err := fs.List(cdir)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []int64
	for _, n := range names {
		if fileio.IsCheckpointTemp(n) {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(n, changesSuffix), 10, 64)
		if err != nil || !strings.HasSuffix(n, changesSuffix) || v <= 0 || changelogName(v) != n {
			return nil, fmt.Errorf("%s: not a changelog of this store", fs.PathJoin(cdir, n))
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

// readChangelog reads and checks the changelog of version.
func readChangelog(fs vfs.FS, dir string, version int64) (changelogFile, error) {
	path := fs.PathJoin(dir, changesDir, changelogName(version))
	f, err := fs.Open(path)
	if err != nil {
		return changelogFile{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return changelogFile{}, err
	}
	if !st.Mode().IsRegular() {
		return changelogFile{}, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > fileio.MaxStateFileBytes {
		return changelogFile{}, fmt.Errorf("%s: larger than %s", path, interval.Size(fileio.MaxStateFileBytes))
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return changelogFile{}, fmt.Errorf("%s: %w", path, err)
	}
	c, err := decodeChangelog(data)
	if err != nil {
		return changelogFile{}, fmt.Errorf("%s: %w", path, err)
	}
	if c.batchID+1 != version {
		return changelogFile{}, fmt.Errorf("%s: %w: it holds batch %d", path, errCorruptChangelog, c.batchID)
	}
	return c, nil
}

// removeChangelogs removes the changelogs of versions up to through, and
// the files being written that a killed process left.
func removeChangelogs(fs vfs.FS, dir string, through int64) error {
	cdir := fs.PathJoin(dir, changesDir)
	names, err := fs.List(cdir)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return err
	}
	for _, n := range names {
		if !fileio.IsCheckpointTemp(n) {
			v, err := strconv.ParseInt(strings.TrimSuffix(n, changesSuffix), 10, 64)
			if err != nil || v > through {
				continue
			}
		}
		if err := fs.Remove(fs.PathJoin(cdir, n)); err != nil && !isNotExist(err) {
			return err
		}
	}
	return nil
}

// isNotExist reports whether err says a file or folder does not exist.
func isNotExist(err error) bool { return errors.Is(err, iofs.ErrNotExist) }
