package memstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"os"
	"path/filepath"
	"syscall"
)

// The deltas are appended to delta logs, one open at a time: "<F>.log"
// holds the deltas of versions F, F+1, ... in order, and a new one starts
// with the first commit after a snapshot starts (so a snapshot's deltas
// never share a log with the deltas it covers, and pruning removes whole
// logs). A log is
//
//	magic    "DDSMLOG1"
//	first    int64, big-endian: F, as in the file's name
//
// then one record per version:
//
//	length   uint32, big-endian: the length of the body
//	crc      uint32, big-endian: CRC-32C (Castagnoli) of the body
//	body     the version (int64, big-endian), then the batch's changes:
//	         put and evict records, as a delta file held them
//
// A record is appended with one write(2) when its batch commits, without
// fsync, as a delta file was written: a killed process loses no committed
// version. A record cut short at the end of the log (its length runs past
// the end, its checksum fails and it ends the file, or the rest of the
// file is zeros) is one a kill or a crash interrupted: it reads as never
// written, and the next Open truncates it. A bad record followed by others
// is damage, refused in one line naming the file and the byte offset.
// Records of versions after the one a store is opened at (batches run but
// never committed to the query's commit log) are truncated by Open: they
// will be written again, byte for byte, when their batches run again.
const (
	logMagic  = "DDSMLOG1"
	logSuffix = ".log"
	// logHeader is the magic and first version; frameHeader the length
	// and checksum before each body, frameMin the version that starts
	// it.
	logHeader   = len(logMagic) + 8
	frameHeader = 8
	frameMin    = 8
	// maxFrame bounds a body: a larger length is damage or a torn tail.
	maxFrame = 1 << 31
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// logRec is one record of a delta log: its version and where its frame
// lies in the file.
type logRec struct {
	version  int64
	off, end int64
}

// body returns the record's changes (after the version) in data.
func (r logRec) changes(data []byte) []byte {
	return data[r.off+frameHeader+frameMin : r.end]
}

// parseLog returns the records of the delta log at path, whose name says
// it starts at version first, and the length of its valid part: all of it
// but a torn tail. A log whose header was torn holds no record (valid 0).
func parseLog(path string, data []byte, first int64) ([]logRec, int64, error) {
	var head [logHeader]byte
	copy(head[:], logMagic)
	binary.BigEndian.PutUint64(head[len(logMagic):], uint64(first))
	if len(data) < logHeader {
		if bytes.HasPrefix(head[:], data) {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("memstore: %s: %w: not a delta log of this store (want it to start %q)", path, errCorrupt, logMagic)
	}
	if string(data[:len(logMagic)]) != logMagic {
		return nil, 0, fmt.Errorf("memstore: %s: %w: not a delta log of this store (want it to start %q)", path, errCorrupt, logMagic)
	}
	if got := int64(binary.BigEndian.Uint64(data[len(logMagic):])); got != first {
		return nil, 0, fmt.Errorf("memstore: %s: %w: the log of version %d named as the log of version %d", path, errCorrupt, got, first)
	}
	var recs []logRec
	off := int64(logHeader)
	size := int64(len(data))
	for off < size {
		rest := data[off:]
		if allZero(rest) || len(rest) < frameHeader {
			break // torn tail
		}
		n := int64(binary.BigEndian.Uint32(rest))
		if n > maxFrame || frameHeader+n > int64(len(rest)) {
			break // torn tail: the record runs past the end
		}
		body := rest[frameHeader : frameHeader+n]
		if n < frameMin || crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(rest[4:]) {
			if off+frameHeader+n == size {
				break // the last record, torn
			}
			return nil, 0, fmt.Errorf("memstore: %s: %w: damaged record at byte %d (length or checksum)", path, errCorrupt, off)
		}
		v := int64(binary.BigEndian.Uint64(body))
		if want := first + int64(len(recs)); v != want {
			return nil, 0, fmt.Errorf("memstore: %s: %w: the record at byte %d holds version %d, want %d", path, errCorrupt, off, v, want)
		}
		recs = append(recs, logRec{version: v, off: off, end: off + frameHeader + n})
		off += frameHeader + n
	}
	return recs, off, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// logName returns the name of the delta log starting at version first.
func logName(first int64) string { return fmt.Sprintf("%d%s", first, logSuffix) }

// openLog is the delta log commits append to.
type openLog struct {
	path  string
	first int64
	f     *os.File
	// size is the length written, last the version of its last record
	// (first-1 for none).
	size, last int64
	// sum is the SHA-256 of the log's first size bytes, kept as they are
	// written, so that a job snapshot names the log without reading it.
	sum hash.Hash
}

// createLog creates the delta log of versions from first on, with its
// header (replacing any file of that name: Open removed the logs of
// uncommitted versions, so one is only a leftover of those).
func createLog(dir string, first int64) (*openLog, error) {
	path := filepath.Join(dir, logName(first))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return nil, fmt.Errorf("memstore %s: %w", dir, err)
	}
	var head [logHeader]byte
	copy(head[:], logMagic)
	binary.BigEndian.PutUint64(head[len(logMagic):], uint64(first))
	if _, err := f.Write(head[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("memstore %s: %w", dir, err)
	}
	l := &openLog{path: path, first: first, f: f, size: int64(logHeader), last: first - 1, sum: sha256.New()}
	l.sum.Write(head[:])
	return l, nil
}

// reopenLog opens the existing log at path for appends after its first
// valid bytes (data), cutting off the rest: a torn tail, or the records of
// versions never committed. last is the version of its last kept record.
func reopenLog(path string, first, last int64, data []byte) (*openLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err == nil && fi.Size() != int64(len(data)) {
		err = f.Truncate(int64(len(data)))
	}
	if err == nil && len(data) < logHeader {
		// Its creation was torn: write the header again.
		var head [logHeader]byte
		copy(head[:], logMagic)
		binary.BigEndian.PutUint64(head[len(logMagic):], uint64(first))
		_, err = f.WriteAt(head[:], 0)
		data = head[:]
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("memstore: %s: %w", path, err)
	}
	l := &openLog{path: path, first: first, f: f, size: int64(len(data)), last: last, sum: sha256.New()}
	l.sum.Write(data)
	return l, nil
}

// append writes version's frame (frame starts with frameHeader+frameMin
// bytes reserved for the length, checksum and version, which it fills).
func (l *openLog) append(version int64, frame []byte) error {
	if version != l.last+1 {
		return fmt.Errorf("memstore: %s: version %d appended after version %d", l.path, version, l.last)
	}
	body := frame[frameHeader:]
	binary.BigEndian.PutUint64(body, uint64(version))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	binary.BigEndian.PutUint32(frame[4:], crc32.Checksum(body, castagnoli))
	if _, err := l.f.WriteAt(frame, l.size); err != nil {
		// A short write leaves a torn tail, which Open cuts off.
		return fmt.Errorf("memstore: %s: %w", l.path, err)
	}
	l.size += int64(len(frame))
	l.last = version
	l.sum.Write(frame)
	return nil
}

// hexSum returns the SHA-256 of what was written so far.
func (l *openLog) hexSum() string {
	var b [sha256.Size]byte
	return hex.EncodeToString(l.sum.Sum(b[:0]))
}

func (l *openLog) close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
