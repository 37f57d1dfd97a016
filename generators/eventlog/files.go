package eventlog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// fmtMicros renders microseconds since the epoch as RFC 3339 UTC.
func fmtMicros(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.999999Z07:00")
}

// readErr words an error of reading a file's bytes: a gzip stream that
// ends early or fails its checksum is truncated or corrupt.
func readErr(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
		return "a truncated or corrupt gzip file (" + err.Error() + ")"
	}
	return "cannot read: " + reason(err)
}

// wanted returns the columns a row is read for, in value order: the id
// columns, the event time, the arrival time, the extras.
func (r *Reader) wanted() []string {
	w := append([]string{}, r.spec.ID...)
	w = append(w, r.spec.EventTime, r.spec.ArrivalTime)
	w = append(w, r.spec.Extra...)
	return append(w, r.spec.Optional...)
}

// csvFile reads a CSV file with a header row.
type csvFile struct {
	path   string
	c      *csvReader
	idx    []int
	n      int
	closer func() error
}

func newCSVFile(r *Reader, path string, br *bufio.Reader, closer func() error) (*csvFile, error) {
	f := &csvFile{path: path, c: newCSVReader(br), closer: closer}
	err := f.c.next()
	if err == io.EOF {
		f.idx = nil // an empty file: no rows
		return f, nil
	}
	if err != nil {
		return nil, f.err(err)
	}
	header := make([]string, len(f.c.fields))
	for i, h := range f.c.fields {
		if i == 0 {
			h = bytes.TrimPrefix(h, []byte("\xef\xbb\xbf"))
		}
		header[i] = string(h)
	}
	f.n = len(header)
	required := len(r.wanted()) - len(r.spec.Optional)
	for k, w := range r.wanted() {
		i := indexOf(header, w)
		if i < 0 && k >= required {
			f.idx = append(f.idx, -1)
			continue
		}
		if i < 0 {
			return nil, &Error{File: path, Row: 1, Line: true, Column: w, Msg: "missing from the header (" + columnList(header) + ")"}
		}
		if j := slices.Index(header[i+1:], header[i]); j >= 0 {
			return nil, &Error{File: path, Row: 1, Line: true, Column: w, Msg: fmt.Sprintf("named twice in the header (columns %d and %d): want each column the log is read by named once", i+1, i+j+2)}
		}
		f.idx = append(f.idx, i)
	}
	return f, nil
}

// indexOf returns the index of name in header: an exact match, else the
// only match ignoring case; -1 when none.
func indexOf(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	found := -1
	for i, h := range header {
		if strings.EqualFold(h, name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// columnList renders a header for a message, cut when long.
func columnList(header []string) string {
	const most = 12
	var parts []string
	for i, h := range header {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(header)-most))
			break
		}
		parts = append(parts, show(h))
	}
	return "the file has " + strings.Join(parts, ", ")
}

func (f *csvFile) err(err error) error {
	if errors.Is(err, errQuote) {
		return &Error{File: f.path, Row: f.c.start, Line: true, Msg: err.Error()}
	}
	return &Error{File: f.path, Row: f.c.line + 1, Line: true, Msg: readErr(err)}
}

func (f *csvFile) next(vals []value) error {
	if f.idx == nil {
		return io.EOF
	}
	if err := f.c.next(); err != nil {
		if err == io.EOF {
			return err
		}
		return f.err(err)
	}
	if len(f.c.fields) != f.n {
		return &Error{File: f.path, Row: f.c.start, Line: true, Msg: fmt.Sprintf("has %d fields, the header %d", len(f.c.fields), f.n)}
	}
	for i, j := range f.idx {
		if j < 0 {
			vals[i] = value{missing: true}
			continue
		}
		vals[i] = value{b: f.c.fields[j]}
	}
	return nil
}

func (f *csvFile) row() (int64, bool) { return f.c.start, true }

// jsonlFile reads a file of JSON objects, one a line.
type jsonlFile struct {
	path   string
	c      *csvReader // only its line reading
	s      *jsonScanner
	closer func() error
}

func newJSONLFile(r *Reader, path string, br *bufio.Reader, closer func() error) *jsonlFile {
	return &jsonlFile{path: path, c: newCSVReader(br), s: newJSONScanner(r.wanted()), closer: closer}
}

func (f *jsonlFile) next(vals []value) error {
	var line []byte
	for {
		l, err := f.c.readLine()
		if err == io.EOF {
			return err
		}
		if err != nil {
			return &Error{File: f.path, Row: f.c.line + 1, Line: true, Msg: readErr(err)}
		}
		f.c.start = f.c.line
		if len(bytes.TrimSpace(l)) > 0 {
			line = l
			break
		}
	}
	if err := f.s.scan(line); err != nil {
		return &Error{File: f.path, Row: f.c.start, Line: true, Msg: err.Error()}
	}
	for i, v := range f.s.vals {
		switch v.kind {
		case jsonMissing:
			vals[i] = value{missing: true}
		case jsonNull:
			vals[i] = value{null: true}
		case jsonOther:
			return &Error{File: f.path, Row: f.c.start, Line: true, Column: f.s.keys[i], Msg: "an object or array, want a string or a number"}
		default:
			vals[i] = value{b: v.b}
		}
	}
	return nil
}

func (f *jsonlFile) row() (int64, bool) { return f.c.start, true }

func (f *csvFile) close() error   { return f.closer() }
func (f *jsonlFile) close() error { return f.closer() }
