package eventlog

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Record is one row of a log. Its slices are reused by the next call of
// Next: copy what must outlive it.
type Record struct {
	// File is the path of the file the row is in; FileIndex its place in
	// the log's list of files.
	File      string
	FileIndex int
	// Row is the row's line number (from 1, CSV and JSON lines: the line
	// it starts on) or, for Parquet (Line false), its index from 0.
	Row  int64
	Line bool
	// ID is the id: the value of the one id column, or, for a composite
	// id, each column's value preceded by its length as a uvarint, so
	// that distinct ids never encode alike.
	ID []byte
	// IDParts are the values of the id columns, in Spec.ID order.
	IDParts [][]byte
	// EventTime and Arrival are the time columns, in microseconds since
	// the epoch (UTC).
	EventTime, Arrival int64
	// Extra are the values of Spec.Extra's columns, in order, as text
	// (Parquet numbers in decimal).
	Extra [][]byte
	// Optional are the values of Spec.Optional's columns, in order, as
	// text; Has says which the row has (a null counts as absent).
	Optional [][]byte
	Has      []bool
}

// Reader reads a log row by row, in arrival order, holding one buffer's
// worth of it: Open, then Next until it returns false, then Err, then
// Close. It is not safe for concurrent use.
type Reader struct {
	spec  Spec
	files []string
	fi    int
	cur   fileReader
	rec   Record
	err   error
	rows  int64
	// units are the event and arrival columns' units, once known.
	units    [2]TimeUnit
	detected bool
	// last is the previous row's arrival, and where it was.
	last     int64
	lastFile string
	lastRow  int64
	tmp      string
	valBuf   []value
	// optUnits are the units of optional columns read as times
	// (OptionalTime), detected on first use; optTS and optIsTS a
	// Parquet timestamp's value.
	optUnits []TimeUnit
	optTS    []int64
	optIsTS  []bool
	// sort is set when Spec.Sort asks for the rows sorted by arrival.
	sort *sorted
}

// fileReader reads the rows of one file.
type fileReader interface {
	// next reads the next row's values into vals (id columns, event
	// time, arrival time, extras, in that order) and returns io.EOF at
	// the end.
	next(vals []value) error
	// row is the current row's number, line says whether it is a line.
	row() (int64, bool)
	close() error
}

// value is one column's value in a row.
type value struct {
	b []byte
	// num and isNum hold a Parquet integer, ts a Parquet timestamp in
	// microseconds.
	num   int64
	isNum bool
	isTS  bool
	null  bool
	// missing is set when the row has no such member (JSON lines).
	missing bool
}

// Open checks spec, lists the log's files and opens the first. An empty
// folder or a glob without matches is an error; so is a log without rows,
// reported by Next and Err.
func Open(spec Spec) (*Reader, error) {
	if err := spec.Check(); err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	files, err := List(spec.Path)
	if err != nil {
		return nil, err
	}
	r := &Reader{spec: spec, files: files, fi: -1, units: [2]TimeUnit{spec.TimeUnit, spec.TimeUnit}}
	r.rec.IDParts = make([][]byte, len(spec.ID))
	r.rec.Extra = make([][]byte, len(spec.Extra))
	r.rec.Optional = make([][]byte, len(spec.Optional))
	r.rec.Has = make([]bool, len(spec.Optional))
	r.optUnits = make([]TimeUnit, len(spec.Optional))
	r.optTS = make([]int64, len(spec.Optional))
	r.optIsTS = make([]bool, len(spec.Optional))
	if spec.TimeUnit != UnitAuto {
		r.detected = true
	}
	if spec.Sort {
		r.sort = &sorted{}
	}
	if err := r.openNext(); err != nil {
		return nil, err
	}
	return r, nil
}

// List returns the files of a log path, in reading order: the file
// itself, a folder's files by name (not those whose names start with '.'
// or '_', as Spark skips them), or a glob's matches by name.
func List(path string) ([]string, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, &Error{File: path, Row: -1, Msg: "cannot list the folder: " + reason(err)}
		}
		var out []string
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
				continue
			}
			// Only regular files (a FIFO or a device would hang or
			// never end), symbolic links to them included.
			if st, err := os.Stat(filepath.Join(path, n)); err != nil || !st.Mode().IsRegular() {
				continue
			}
			out = append(out, filepath.Join(path, n))
		}
		if len(out) == 0 {
			return nil, &Error{File: path, Row: -1, Msg: "the folder holds no log files"}
		}
		return out, nil
	case err == nil:
		if !st.Mode().IsRegular() {
			return nil, &Error{File: path, Row: -1, Msg: "not a regular file"}
		}
		return []string{path}, nil
	case strings.ContainsAny(path, "*?["):
		m, gerr := filepath.Glob(path)
		if gerr != nil {
			return nil, &Error{File: path, Row: -1, Msg: "a bad glob pattern: " + gerr.Error()}
		}
		var out []string
		for _, f := range m {
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			return nil, &Error{File: path, Row: -1, Msg: "no file matches the pattern"}
		}
		slices.Sort(out)
		return out, nil
	}
	return nil, &Error{File: path, Row: -1, Msg: "cannot read the log: " + reason(err)}
}

// reason is the short form of a file error.
func reason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// Files returns the log's files, in reading order.
func (r *Reader) Files() []string { return r.files }

// Units returns the units of the event-time and arrival-time columns and
// whether they were detected (Spec.TimeUnit was UnitAuto) rather than
// given. Detection happens on the first row: before it, the units are
// UnitAuto.
func (r *Reader) Units() (eventTime, arrival TimeUnit, detected bool) {
	return r.units[0], r.units[1], r.spec.TimeUnit == UnitAuto
}

// Rows returns the number of rows read so far.
func (r *Reader) Rows() int64 { return r.rows }

// Err returns the error that ended Next, or nil at a clean end.
func (r *Reader) Err() error { return r.err }

// Close closes the current file and removes the reader's temporaries.
func (r *Reader) Close() error {
	var err error
	if r.cur != nil {
		err = r.cur.close()
		r.cur = nil
	}
	if r.sort != nil && r.sort.m != nil {
		r.sort.m.Close()
		r.sort.m = nil
	}
	if r.tmp != "" {
		os.Remove(r.tmp)
		r.tmp = ""
	}
	return err
}

// Next reads the next row into the record Record returns and reports
// whether there was one. At the end or on the first error it returns
// false; Err tells which.
func (r *Reader) Next() bool {
	if r.err != nil {
		return false
	}
	next := r.next
	if r.sort != nil {
		next = r.nextSorted
	}
	if err := next(); err != nil {
		if err != io.EOF {
			r.err = err
		} else if r.rows == 0 {
			r.err = &Error{File: r.spec.Path, Row: -1, Msg: "the log has no rows"}
		}
		return false
	}
	return true
}

// Record returns the row Next read.
func (r *Reader) Record() *Record { return &r.rec }

func (r *Reader) next() error {
	nid := len(r.spec.ID)
	vals := r.vals()
	for {
		if r.cur == nil {
			return io.EOF
		}
		err := r.cur.next(vals)
		if err == io.EOF {
			if err := r.cur.close(); err != nil {
				return r.fileErr(err)
			}
			r.cur = nil
			if err := r.openNext(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	rec := &r.rec
	rec.File, rec.FileIndex = r.files[r.fi], r.fi
	rec.Row, rec.Line = r.cur.row()
	rec.ID = rec.ID[:0]
	for i := range nid {
		v := &vals[i]
		if err := r.text(v, r.spec.ID[i]); err != nil {
			return err
		}
		if len(v.b) == 0 {
			return r.rowErr(r.spec.ID[i], "an empty id")
		}
		rec.IDParts[i] = v.b
		if nid > 1 {
			rec.ID = binary.AppendUvarint(rec.ID, uint64(len(v.b)))
		}
		rec.ID = append(rec.ID, v.b...)
	}
	var err error
	if rec.EventTime, err = r.time(&vals[nid], 0, r.spec.EventTime); err != nil {
		return err
	}
	if rec.Arrival, err = r.time(&vals[nid+1], 1, r.spec.ArrivalTime); err != nil {
		return err
	}
	for i, name := range r.spec.Extra {
		v := &vals[nid+2+i]
		if err := r.text(v, name); err != nil {
			return err
		}
		rec.Extra[i] = v.b
	}
	base := nid + 2 + len(r.spec.Extra)
	for i := range r.spec.Optional {
		v := &vals[base+i]
		rec.Has[i] = !v.missing && !v.null
		r.optIsTS[i], r.optTS[i] = v.isTS, v.num
		if rec.Has[i] && v.isNum {
			v.b = appendInt(v.b[:0], v.num)
		}
		rec.Optional[i] = v.b
	}
	if r.rows > 0 && rec.Arrival < r.last && r.sort == nil {
		return r.rowErr(r.spec.ArrivalTime, fmt.Sprintf("arrival %s is before the previous row's, %s (%s %s): rows must be in arrival order (sort: true sorts them)",
			fmtMicros(rec.Arrival), fmtMicros(r.last), r.lastFile, r.lastRowName()))
	}
	r.last, r.lastFile, r.lastRow = rec.Arrival, rec.File, rec.Row
	r.rows++
	return nil
}

func (r *Reader) lastRowName() string {
	if r.rec.Line {
		return fmt.Sprintf("line %d", r.lastRow)
	}
	return fmt.Sprintf("row %d", r.lastRow)
}

// vals returns the reused values of a row.
func (r *Reader) vals() []value {
	n := len(r.spec.ID) + 2 + len(r.spec.Extra) + len(r.spec.Optional)
	if cap(r.valBuf) < n {
		r.valBuf = make([]value, n)
	}
	return r.valBuf[:n]
}

// text renders v as text into v.b (a Parquet number as decimal).
func (r *Reader) text(v *value, col string) error {
	switch {
	case v.missing:
		return r.rowErr(col, "missing in this row")
	case v.null:
		return r.rowErr(col, "null")
	case v.isNum:
		v.b = appendInt(v.b[:0], v.num)
	}
	return nil
}

func appendInt(dst []byte, n int64) []byte {
	var tmp [20]byte
	i := len(tmp)
	u := uint64(n)
	if n < 0 {
		u = uint64(-n)
	}
	for {
		i--
		tmp[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if n < 0 {
		dst = append(dst, '-')
	}
	return append(dst, tmp[i:]...)
}

// time parses v, the value of time column k (0 event, 1 arrival).
func (r *Reader) time(v *value, k int, col string) (int64, error) {
	switch {
	case v.missing:
		return 0, r.rowErr(col, "missing in this row")
	case v.null:
		return 0, r.rowErr(col, "null, want a time")
	case v.isTS:
		return v.num, nil
	case v.isNum:
		v.b = appendInt(v.b[:0], v.num)
	}
	if r.units[k] == UnitAuto {
		u, err := DetectUnit(v.b)
		if err != nil {
			return 0, r.rowErr(col, fmt.Sprintf("cannot parse %s as a time: %v", show(string(v.b)), err))
		}
		r.units[k] = u
	}
	t, err := ParseTime(v.b, r.units[k])
	if err != nil {
		want := "an RFC 3339 time such as 2026-01-01T00:00:00.123Z"
		if r.units[k] != UnitRFC3339 {
			want = "a number of " + unitName(r.units[k]) + " since the epoch"
			if r.spec.TimeUnit == UnitAuto {
				want += " (the unit detected from the first row)"
			}
		}
		return 0, r.rowErr(col, fmt.Sprintf("cannot parse %s as a time (%v): want %s", show(string(v.b)), err, want))
	}
	return t, nil
}

func unitName(u TimeUnit) string {
	switch u {
	case UnitSeconds:
		return "seconds"
	case UnitMillis:
		return "milliseconds"
	case UnitMicros:
		return "microseconds"
	}
	return string(u)
}

// OptionalTime parses optional column i of the current row as a time,
// in microseconds since the epoch: a Parquet timestamp as it is, else
// text in the column's unit (Spec.TimeUnit, or detected from the first
// value it parses). An error names the file, row and column.
func (r *Reader) OptionalTime(i int) (int64, error) {
	if !r.rec.Has[i] {
		return 0, r.rowErr(r.spec.Optional[i], "missing in this row")
	}
	if r.optIsTS[i] {
		return r.optTS[i], nil
	}
	b := r.rec.Optional[i]
	if r.optUnits[i] == UnitAuto {
		r.optUnits[i] = r.spec.TimeUnit
		if r.optUnits[i] == UnitAuto {
			u, err := DetectUnit(b)
			if err != nil {
				return 0, r.rowErr(r.spec.Optional[i], fmt.Sprintf("cannot parse %s as a time: %v", show(string(b)), err))
			}
			r.optUnits[i] = u
		}
	}
	t, err := ParseTime(b, r.optUnits[i])
	if err != nil {
		return 0, r.rowErr(r.spec.Optional[i], fmt.Sprintf("cannot parse %s as a time (%v)", show(string(b)), err))
	}
	return t, nil
}

// RowError returns a problem with column col of the current row, worded
// msg, as the reader's own errors are (file, line or row, column).
func (r *Reader) RowError(col, msg string) error { return r.rowErr(col, msg) }

// rowErr is a problem with column col of the current row.
func (r *Reader) rowErr(col, msg string) error {
	if r.sort != nil && r.sort.m != nil {
		return &Error{File: r.rec.File, Row: r.rec.Row, Line: r.rec.Line, Column: col, Msg: msg}
	}
	row, line := r.cur.row()
	return &Error{File: r.files[r.fi], Row: row, Line: line, Column: col, Msg: msg}
}

// fileErr is a problem reading the current file at its current row.
func (r *Reader) fileErr(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	row, line := int64(-1), false
	if r.cur != nil {
		row, line = r.cur.row()
	}
	return &Error{File: r.files[r.fi], Row: row, Line: line, Msg: err.Error()}
}

// openNext opens the next file of the log, or sets r.cur to nil after the
// last.
func (r *Reader) openNext() error {
	if r.tmp != "" {
		os.Remove(r.tmp)
		r.tmp = ""
	}
	r.fi++
	if r.fi >= len(r.files) {
		return nil
	}
	path := r.files[r.fi]
	f, err := os.Open(path)
	if err != nil {
		return &Error{File: path, Row: -1, Msg: "cannot open: " + reason(err)}
	}
	br := bufio.NewReaderSize(f, 1<<16)
	var in io.Reader = br
	var gz *gzip.Reader
	head, _ := br.Peek(4)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err = gzip.NewReader(br)
		if err != nil {
			f.Close()
			return &Error{File: path, Row: -1, Msg: "a truncated or corrupt gzip file: " + err.Error()}
		}
		br = bufio.NewReaderSize(gz, 1<<16)
		in = br
		head, _ = br.Peek(4)
	}
	_ = in
	format := r.spec.Format
	if format == FormatAuto {
		switch {
		case string(head) == "PAR1":
			format = FormatParquet
		default:
			format = FormatCSV
			if first, ok := firstByte(br); ok && first == '{' {
				format = FormatJSONL
			}
		}
	}
	closer := func() error {
		if gz != nil {
			if err := gz.Close(); err != nil {
				f.Close()
				return err
			}
		}
		return f.Close()
	}
	switch format {
	case FormatParquet:
		pf, err := r.openParquet(path, f, gz, br)
		if err != nil {
			return err
		}
		r.cur = pf
	case FormatJSONL:
		r.cur = newJSONLFile(r, path, br, closer)
	default:
		c, err := newCSVFile(r, path, br, closer)
		if err != nil {
			closer()
			return err
		}
		r.cur = c
	}
	return nil
}

// firstByte returns the first byte of br that is not white space or a
// byte order mark, without consuming it.
func firstByte(br *bufio.Reader) (byte, bool) {
	for n := 1; n <= 4096; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return 0, false
		}
		_ = err
		c := b[n-1]
		switch c {
		case ' ', '\t', '\r', '\n', 0xef, 0xbb, 0xbf:
			continue
		}
		return c, true
	}
	return 0, false
}
