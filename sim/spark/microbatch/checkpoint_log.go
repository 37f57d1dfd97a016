package microbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// The batch log is one file, "log" in the checkpoint folder: an 8-byte
// magic, then records, each
//
//	length   uint32, big-endian: the length of the body
//	crc      uint32, big-endian: CRC-32C (Castagnoli) of the body
//	body     kind (1 byte: 'o' offsets, 'c' commit), the batch id
//	         (int64, big-endian), then the entry as JSON, as Spark's
//	         offsets/<id> and commits/<id> files hold it after "v1"
//
// Records are appended in the order the query writes them; a batch run
// again (after a restart) appends new records, and the newest record of a
// batch and kind is the one read. A record cut short at the end of the
// file (its length runs past the end, or its checksum fails and it ends
// the file) is one a kill or a crash interrupted: it is read as never
// written, as a missing offsets/<id> file was, and the next append
// truncates it away. A bad record followed by others is damage, and the
// checkpoint is refused.

// LogName is the batch log's file name in a query checkpoint folder.
const LogName = logName

const (
	logName  = "log"
	logMagic = "DDSLOG1\n"
	// logHeader is the length and checksum before each body; logBodyMin
	// the kind and batch id that start it.
	logHeader  = 8
	logBodyMin = 9
	// logMaxBody bounds a body (a source position is a few hundred
	// bytes): a larger length is damage, or a torn tail.
	logMaxBody = 1 << 24

	kindOffsets = 'o'
	kindCommit  = 'c'
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// logRecord is one record: its kind, batch id and framed bytes.
type logRecord struct {
	kind  byte
	batch int64
	frame []byte
}

// payload returns the record's JSON entry.
func (r logRecord) payload() []byte { return r.frame[logHeader+logBodyMin:] }

func kindIndex(kind byte) int {
	if kind == kindOffsets {
		return 0
	}
	return 1
}

func kindName(kind byte) string {
	if kind == kindOffsets {
		return "offsets"
	}
	return "commit"
}

// frameRecord returns a record's framed bytes.
func frameRecord(kind byte, batch int64, payload []byte) []byte {
	buf := make([]byte, logHeader+logBodyMin, logHeader+logBodyMin+len(payload))
	buf[logHeader] = kind
	binary.BigEndian.PutUint64(buf[logHeader+1:], uint64(batch))
	buf = append(buf, payload...)
	body := buf[logHeader:]
	binary.BigEndian.PutUint32(buf[0:], uint32(len(body)))
	binary.BigEndian.PutUint32(buf[4:], crc32.Checksum(body, castagnoli))
	return buf
}

// batchLog is the log as on disk: its records, the length of its valid
// part and the oldest batch it holds (-1 for none).
type batchLog struct {
	path   string
	recs   []logRecord
	size   int64
	oldest int64
	// torn is set when the file holds more than size bytes (a torn
	// tail), which the next append truncates.
	torn bool
	// f is the file appends go to, opened at the first one.
	f *os.File
	// dirSynced is set once the folder has been synced since the log
	// was loaded or last rewritten: until it is, a crash may bring back
	// the log's old name (the rewrite's rename lost), without the records
	// appended since.
	dirSynced bool
}

// loadLog reads the log of the checkpoint in dir. It changes nothing on
// disk.
func loadLog(dir string) (*batchLog, error) {
	path := filepath.Join(dir, logName)
	// The log is never a link: appends and rewrites would go elsewhere.
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, &fileio.NotRegularError{Path: path, Mode: fi.Mode()}
	}
	f, err := fileio.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: missing: %w", path, ErrNotCheckpoint)
		}
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	recs, size, err := parseLog(path, data)
	if err != nil {
		return nil, err
	}
	l := &batchLog{path: path, recs: recs, size: size, torn: size < int64(len(data)), oldest: -1}
	for _, r := range recs {
		if l.oldest < 0 || r.batch < l.oldest {
			l.oldest = r.batch
		}
	}
	return l, nil
}

// parseLog returns the records of a log file's content and the length of
// its valid part (all of it but a torn tail).
func parseLog(path string, data []byte) ([]logRecord, int64, error) {
	if !bytes.HasPrefix(data, []byte(logMagic)) {
		if len(data) < len(logMagic) && bytes.HasPrefix([]byte(logMagic), data) {
			// Creation torn by a crash: an empty log.
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("%s: not a dedupsim batch log (want it to start %q): %w", path, logMagic, ErrNotCheckpoint)
	}
	var recs []logRecord
	off := len(logMagic)
	for off < len(data) {
		rest := data[off:]
		if len(rest) < logHeader {
			break // torn tail
		}
		n := int(binary.BigEndian.Uint32(rest))
		if n > logMaxBody || logHeader+n > len(rest) {
			if off+logHeader+n >= len(data) {
				break // torn tail: the record runs past the end
			}
			return nil, 0, fmt.Errorf("%s: damaged record at byte %d: %w", path, off, ErrNotCheckpoint)
		}
		frame := rest[:logHeader+n]
		body := frame[logHeader:]
		if n < logBodyMin || crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(rest[4:]) || (body[0] != kindOffsets && body[0] != kindCommit) {
			if off+len(frame) == len(data) {
				break // the last record, torn
			}
			return nil, 0, fmt.Errorf("%s: damaged record at byte %d (checksum, length or kind): %w", path, off, ErrNotCheckpoint)
		}
		batch := int64(binary.BigEndian.Uint64(body[1:]))
		if batch < 0 {
			return nil, 0, fmt.Errorf("%s: record at byte %d: negative batch id %d: %w", path, off, batch, ErrNotCheckpoint)
		}
		recs = append(recs, logRecord{kind: body[0], batch: batch, frame: frame})
		off += len(frame)
	}
	return recs, int64(off), nil
}

// append writes one record at the end of the valid part of the log.
func (l *batchLog) append(kind byte, batch int64, payload []byte) error {
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = &fileio.NotRegularError{Path: l.path, Mode: fi.Mode()}
		}
		if err == nil && (l.torn || fi.Size() != l.size) {
			// A torn tail, or a log whose creation was torn.
			if l.size == 0 {
				_, err = f.WriteAt([]byte(logMagic), 0)
				l.size = int64(len(logMagic))
			}
			if err == nil {
				err = f.Truncate(l.size)
			}
			l.torn = false
		}
		if err != nil {
			f.Close()
			return err
		}
		l.f = f
	}
	frame := frameRecord(kind, batch, payload)
	if _, err := l.f.WriteAt(frame, l.size); err != nil {
		// A short write leaves a torn tail, cut at the next load.
		l.torn = true
		l.f.Close()
		l.f = nil
		return fmt.Errorf("%s: %w", l.path, err)
	}
	l.size += int64(len(frame))
	l.recs = append(l.recs, logRecord{kind: kind, batch: batch, frame: frame})
	if l.oldest < 0 || batch < l.oldest {
		l.oldest = batch
	}
	return nil
}

// sync makes the appended records durable, and the log's name: after a
// rewrite, the rename that put the new log in place.
func (l *batchLog) sync() error {
	f := l.f
	if f == nil {
		// Appended to by an earlier handle, maybe not synced.
		var err error
		if f, err = fileio.Open(l.path); err != nil {
			return err
		}
		defer f.Close()
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	if !l.dirSynced {
		if err := fileio.SyncDir(filepath.Dir(l.path)); err != nil {
			return fmt.Errorf("%s: %w", l.path, err)
		}
		l.dirSynced = true
	}
	return nil
}

// close closes the file appends go to.
func (l *batchLog) close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// rewrite replaces the log with the records keep keeps, written to a
// temporary name, synced, then renamed over it: a kill leaves the old log
// or the new one.
func (l *batchLog) rewrite(keep func(logRecord) bool) error {
	var kept []logRecord
	buf := []byte(logMagic)
	oldest := int64(-1)
	for _, r := range l.recs {
		if !keep(r) {
			continue
		}
		buf = append(buf, r.frame...)
		kept = append(kept, r)
		if oldest < 0 || r.batch < oldest {
			oldest = r.batch
		}
	}
	if err := l.close(); err != nil {
		return err
	}
	if err := fileio.WriteFile(l.path, buf); err != nil {
		return err
	}
	// The frames now point into buf, so the old ones can go.
	off := len(logMagic)
	for i := range kept {
		n := len(kept[i].frame)
		kept[i].frame = buf[off : off+n : off+n]
		off += n
	}
	l.recs, l.size, l.oldest, l.torn, l.dirSynced = kept, int64(len(buf)), oldest, false, false
	return nil
}

// BatchRecords returns the framed bytes of the newest offsets record and
// then the newest commit record of batch batchID in the log of the
// checkpoint in dir, and the log's path: what a restart right after a
// resume from batchID+1 reads, which a job snapshot records the checksum
// of. ok is false when the log holds no record of either kind for the
// batch.
func BatchRecords(dir string, batchID int64) (path string, recs []byte, ok bool, err error) {
	path = filepath.Join(dir, logName)
	l, err := loadLog(dir)
	if err != nil {
		return path, nil, false, err
	}
	_, at := latestEntries(l.recs)
	for k := range at {
		r, found := at[k][batchID]
		if !found {
			return path, nil, false, nil
		}
		recs = append(recs, r.frame...)
	}
	return path, recs, true, nil
}
