package eventlog

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// csvReader splits CSV (RFC 4180: comma-separated, fields optionally in
// double quotes with "" for a quote, quoted fields may span lines, CRLF
// or LF line ends) into records without allocating per record: the
// fields are slices of a buffer reused from record to record.
type csvReader struct {
	r *bufio.Reader
	// line is the number of the last physical line read (1-based).
	line int64
	// start is the line the current record starts on.
	start  int64
	buf    []byte
	rec    []byte
	pend   []byte
	ends   []int
	fields [][]byte
}

func newCSVReader(r *bufio.Reader) *csvReader { return &csvReader{r: r} }

var errQuote = errors.New("a quoted field is not closed, or a quote stands inside an unquoted field")

// next reads the next record into c.fields and returns io.EOF at the end.
// Blank lines are skipped.
func (c *csvReader) next() error {
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		c.start = c.line
		if len(line) == 0 {
			continue
		}
		return c.split(line)
	}
}

// readLine returns the next physical line without its line end; the
// slice is valid until the next read.
func (c *csvReader) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		c.buf = append(c.buf[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = c.r.ReadSlice('\n')
			c.buf = append(c.buf, line...)
		}
		line = c.buf
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	c.line++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}

// split splits the record starting with line (more lines are read while
// a quoted field is open) into c.fields.
func (c *csvReader) split(line []byte) error {
	// Fast path: no quotes, the fields are slices of the line itself.
	if bytes.IndexByte(line, '"') < 0 {
		c.fields = c.fields[:0]
		for {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				c.fields = append(c.fields, line)
				return nil
			}
			c.fields = append(c.fields, line[:i])
			line = line[i+1:]
		}
	}
	// Quotes: unescape into rec, remembering where each field ends.
	rec := c.rec[:0]
	c.ends = c.ends[:0]
	// pending is copied: line may be c.buf, which readLine reuses.
	pending := append(c.pend[:0], line...)
	defer func() { c.rec, c.pend = rec, pending[:0] }()
	for {
		if len(pending) > 0 && pending[0] == '"' {
			// A quoted field: up to the closing quote, across lines.
			pending = pending[1:]
			for {
				i := bytes.IndexByte(pending, '"')
				if i < 0 {
					rec = append(rec, pending...)
					rec = append(rec, '\n')
					next, err := c.readLine()
					if err != nil {
						if err == io.EOF {
							return errQuote
						}
						return err
					}
					pending = append(pending[:0], next...)
					continue
				}
				rec = append(rec, pending[:i]...)
				pending = pending[i+1:]
				if len(pending) > 0 && pending[0] == '"' {
					rec = append(rec, '"')
					pending = pending[1:]
					continue
				}
				break
			}
			if len(pending) > 0 && pending[0] != ',' {
				return errQuote
			}
		} else {
			i := bytes.IndexByte(pending, ',')
			f := pending
			if i >= 0 {
				f = pending[:i]
			}
			if bytes.IndexByte(f, '"') >= 0 {
				return errQuote
			}
			rec = append(rec, f...)
			pending = pending[len(f):]
		}
		c.ends = append(c.ends, len(rec))
		if len(pending) == 0 {
			break
		}
		pending = pending[1:] // the comma
		if len(pending) == 0 {
			c.ends = append(c.ends, len(rec)) // a trailing empty field
			break
		}
	}
	c.fields = c.fields[:0]
	s := 0
	for _, e := range c.ends {
		c.fields = append(c.fields, rec[s:e])
		s = e
	}
	return nil
}
