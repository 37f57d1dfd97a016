package runner

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/dedupsim/dedupsim/metrics"
)

// Every batch's timeseries row and progress line goes to a part file as
// the batch completes, never into memory: a job's part files hold its
// rows in batch order, and the results files are their concatenation, so
// a run's memory does not grow with its length. A resumable job keeps its
// part files in its checkpoint folder (they must survive a kill), another
// job in the run's folder of temporaries (runfolder.TimeseriesPart and
// runfolder.ProgressPart name them).

// segment is n bytes of the file at path from offset off: what a job
// wrote to a part file.
type segment struct {
	path   string
	off, n int64
}

// partWriter appends to one part file, counting the bytes and, for a
// resumable job, hashing them as they go (the job snapshot records the
// hash, and a resume checks the file against it).
type partWriter struct {
	path string
	f    *os.File
	w    *bufio.Writer
	n    int64
	h    hash.Hash
}

// openPart opens the part file at path for appending after its first n
// bytes (0 truncates it). With hashed, the writer hashes what it writes,
// starting from state, the marshalled hash of those n bytes (nil for n 0).
func openPart(path string, n int64, hashed bool, state []byte) (*partWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	p := &partWriter{path: path, f: f, n: n}
	fail := func(err error) (*partWriter, error) {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Truncate(n); err != nil {
		return fail(err)
	}
	if _, err := f.Seek(n, io.SeekStart); err != nil {
		return fail(err)
	}
	if hashed {
		p.h = sha256.New()
		if len(state) > 0 {
			if err := p.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
				return fail(err)
			}
		} else if n > 0 {
			return fail(fmt.Errorf("no hash state for %d bytes", n))
		}
	}
	p.w = bufio.NewWriterSize(f, 64<<10)
	return p, nil
}

func (p *partWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if p.h != nil {
		p.h.Write(b[:n])
	}
	if err != nil {
		return n, fmt.Errorf("%s: %w", p.path, err)
	}
	return n, nil
}

// flush writes the buffered bytes to the file.
func (p *partWriter) flush() error {
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", p.path, err)
	}
	return nil
}

// mark returns the part's length, hash and hash state, for a job snapshot.
func (p *partWriter) mark() (partMark, error) {
	m := partMark{Len: p.n}
	if p.h == nil {
		return m, nil
	}
	m.SHA256 = hex.EncodeToString(p.h.Sum(nil))
	state, err := p.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return m, err
	}
	m.State = state
	return m, nil
}

func (p *partWriter) close() error { return p.f.Close() }

// partMark records a part file in a job snapshot or a finished job's
// done.json: its length, the SHA-256 of those bytes, and the hash state
// the resumed job continues from.
type partMark struct {
	Len    int64  `json:"len"`
	SHA256 string `json:"sha256"`
	State  []byte `json:"hashState,omitempty"`
}

// partFiles are a job's two part files: timeseries rows and progress
// lines.
type partFiles struct {
	ts, prog *partWriter
	row      []string
	buf      bytes.Buffer
	cw       *csv.Writer
}

// openParts opens a job's part files in dir. marks gives the lengths and
// hash states to continue from (zero to start over).
func openParts(tsPath, progPath string, hashed bool, marks [2]partMark) (*partFiles, error) {
	ts, err := openPart(tsPath, marks[0].Len, hashed, marks[0].State)
	if err != nil {
		return nil, err
	}
	prog, err := openPart(progPath, marks[1].Len, hashed, marks[1].State)
	if err != nil {
		ts.close()
		return nil, err
	}
	p := &partFiles{ts: ts, prog: prog}
	p.cw = csv.NewWriter(&p.buf)
	return p, nil
}

// add appends one batch's timeseries row and progress line.
func (p *partFiles) add(rec *metrics.BatchRecord, line []byte) error {
	p.row = rec.Record(p.row)
	p.buf.Reset()
	if err := p.cw.Write(p.row); err != nil {
		return err
	}
	p.cw.Flush()
	if _, err := p.ts.Write(p.buf.Bytes()); err != nil {
		return err
	}
	_, err := p.prog.Write(line)
	return err
}

func (p *partFiles) flush() error {
	if err := p.ts.flush(); err != nil {
		return err
	}
	return p.prog.flush()
}

func (p *partFiles) marks() ([2]partMark, error) {
	a, err := p.ts.mark()
	if err != nil {
		return [2]partMark{}, err
	}
	b, err := p.prog.mark()
	return [2]partMark{a, b}, err
}

func (p *partFiles) segments() [2]segment {
	return [2]segment{{path: p.ts.path, n: p.ts.n}, {path: p.prog.path, n: p.prog.n}}
}

func (p *partFiles) close() {
	p.ts.close()
	p.prog.close()
}
