package eventlog

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// parquetBatch is how many rows a Parquet file is read by at once.
const parquetBatch = 1024

// parquetFile reads a Parquet file's rows, row group by row group.
type parquetFile struct {
	path   string
	f      *os.File
	groups []parquet.RowGroup
	gi     int
	rows   parquet.Rows
	buf    []parquet.Row
	n, i   int
	// index is the current row's index in the file; base the index of
	// buf[0].
	index, base int64
	// want maps a leaf column index to its value slot, or -1.
	want []int
	// tsUnit is the microseconds per unit of a slot's Timestamp logical
	// type (0: none; -1000 nanoseconds, a division).
	tsUnit []int64
	names  []string
	bufs   [][]byte
}

// openParquet opens the Parquet file path (f), spilling a gzipped one
// to a temporary file first: Parquet is read from its footer.
func (r *Reader) openParquet(path string, f *os.File, gz *gzip.Reader, br *bufio.Reader) (*parquetFile, error) {
	src := f
	if gz != nil {
		tmp, err := os.CreateTemp("", "dedupsim-eventlog-*.parquet")
		if err != nil {
			f.Close()
			return nil, &Error{File: path, Row: -1, Msg: "cannot make a temporary file to ungzip the Parquet file into: " + reason(err)}
		}
		r.tmp = tmp.Name()
		_, err = io.Copy(tmp, br)
		f.Close()
		if err != nil {
			tmp.Close()
			return nil, &Error{File: path, Row: -1, Msg: readErr(err)}
		}
		src = tmp
	}
	st, err := src.Stat()
	if err != nil {
		src.Close()
		return nil, &Error{File: path, Row: -1, Msg: "cannot read: " + reason(err)}
	}
	pf, err := parquet.OpenFile(src, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		src.Close()
		return nil, &Error{File: path, Row: -1, Msg: "a truncated or corrupt Parquet file: " + oneLine(err.Error())}
	}
	p := &parquetFile{path: path, f: src, groups: pf.RowGroups(), buf: make([]parquet.Row, parquetBatch)}
	wanted := r.wanted()
	p.names = wanted
	p.want = make([]int, len(pf.Schema().Columns()))
	for i := range p.want {
		p.want[i] = -1
	}
	p.tsUnit = make([]int64, len(wanted))
	p.bufs = make([][]byte, len(wanted))
	var all []string
	for _, c := range pf.Schema().Columns() {
		all = append(all, strings.Join(c, "."))
	}
	required := len(wanted) - len(r.spec.Optional)
	for slot, w := range wanted {
		leaf, ok := pf.Schema().Lookup(w)
		if !ok {
			if i := indexOf(all, w); i >= 0 {
				leaf, ok = pf.Schema().Lookup(pf.Schema().Columns()[i]...)
			}
		}
		if !ok && slot >= required {
			continue
		}
		if !ok {
			src.Close()
			return nil, &Error{File: path, Row: -1, Column: w, Msg: "missing from the Parquet schema (" + columnList(all) + ")"}
		}
		if leaf.MaxRepetitionLevel > 0 {
			src.Close()
			return nil, &Error{File: path, Row: -1, Column: w, Msg: "a repeated column, want one value a row"}
		}
		p.want[leaf.ColumnIndex] = slot
		if lt := leaf.Node.Type().LogicalType(); lt != nil {
			if ts, ok := lt.Value.(*format.TimestampType); ok {
				switch ts.Unit.Value.(type) {
				case *format.MilliSeconds:
					p.tsUnit[slot] = 1000
				case *format.MicroSeconds:
					p.tsUnit[slot] = 1
				case *format.NanoSeconds:
					p.tsUnit[slot] = -1000
				}
			}
		}
	}
	return p, nil
}

// oneLine keeps the first line of a message.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func (p *parquetFile) next(vals []value) error {
	for p.i >= p.n {
		if p.rows == nil {
			if p.gi >= len(p.groups) {
				return io.EOF
			}
			p.rows = p.groups[p.gi].Rows()
			p.gi++
		}
		p.base += int64(p.n)
		n, err := p.rows.ReadRows(p.buf)
		p.n, p.i = n, 0
		if err == io.EOF {
			p.rows.Close()
			p.rows = nil
		} else if err != nil {
			return &Error{File: p.path, Row: p.base, Msg: "a truncated or corrupt Parquet file: " + oneLine(err.Error())}
		}
	}
	row := p.buf[p.i]
	p.index = p.base + int64(p.i)
	p.i++
	for i := range vals {
		vals[i] = value{missing: true}
	}
	for _, v := range row {
		c := v.Column()
		if c < 0 || c >= len(p.want) || p.want[c] < 0 {
			continue
		}
		slot := p.want[c]
		out := &vals[slot]
		*out = value{}
		if v.IsNull() {
			out.null = true
			continue
		}
		switch v.Kind() {
		case parquet.Int64, parquet.Int32:
			out.num, out.isNum = v.Int64(), true
			if v.Kind() == parquet.Int32 {
				out.num = int64(v.Int32())
			}
			if u := p.tsUnit[slot]; u != 0 {
				out.isTS = true
				if u > 0 {
					out.num *= u
				} else {
					out.num = floorDiv(out.num, -u)
				}
			}
		case parquet.ByteArray, parquet.FixedLenByteArray:
			p.bufs[slot] = append(p.bufs[slot][:0], v.ByteArray()...)
			out.b = p.bufs[slot]
		case parquet.Int96:
			// Spark's legacy timestamps: nanoseconds of the day, then
			// the Julian day.
			i := v.Int96()
			nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
			days := int64(i[2]) - 2440588
			out.num, out.isNum, out.isTS = days*86400e6+nanos/1000, true, true
		default:
			return &Error{File: p.path, Row: p.index, Column: p.names[slot], Msg: fmt.Sprintf("a %s column, want a string, an integer or a timestamp", v.Kind())}
		}
	}
	return nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func (p *parquetFile) row() (int64, bool) { return p.index, false }

func (p *parquetFile) close() error {
	if p.rows != nil {
		p.rows.Close()
		p.rows = nil
	}
	return p.f.Close()
}
