package export

import (
	"bufio"
	"os"
	"strconv"
	"time"
	"unicode/utf8"
)

// jsonTimeLayout is how a JSON batch file writes a timestamp: ISO-8601 in
// UTC with microseconds, "2026-01-01T00:00:01.250000Z". job.py reads it
// with the matching Spark pattern, sparkTimeFormat.
const jsonTimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// sparkTimeFormat is Spark's datetime pattern of jsonTimeLayout, the
// timestampFormat option job.py reads JSON batches with.
const sparkTimeFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"

// jsonWriter writes batches as JSON Lines: one object per row, every
// column in schema order (null where the row has no value).
type jsonWriter struct {
	cols []Column
	// keys are the columns' names as JSON keys with their colon.
	keys [][]byte
	line []byte
	c    cell
	buf  *bufio.Writer
}

func (w *jsonWriter) write(path string, b batch) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if w.buf == nil {
		w.buf = bufio.NewWriterSize(f, 1<<20)
	} else {
		w.buf.Reset(f)
	}
	for i := range b.Len() {
		w.line = w.appendRow(w.line[:0], b, i)
		if _, err := w.buf.Write(w.line); err != nil {
			return err
		}
	}
	return w.buf.Flush()
}

// appendRow appends row i of b as one JSON line.
func (w *jsonWriter) appendRow(dst []byte, b batch, i int) []byte {
	if w.keys == nil {
		for _, col := range w.cols {
			w.keys = append(w.keys, append(appendJSONString(nil, []byte(col.Name)), ':'))
		}
	}
	c := &w.c
	dst = append(dst, '{')
	for k, col := range w.cols {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, w.keys[k]...)
		b.cell(i, k, c)
		switch {
		case c.null:
			dst = append(dst, "null"...)
		case col.Type == String:
			dst = appendJSONString(dst, c.s)
		case col.Type == Double:
			dst = strconv.AppendFloat(dst, c.f, 'g', -1, 64)
		case col.Type == Boolean:
			dst = strconv.AppendBool(dst, c.i != 0)
		case col.Type == Timestamp:
			dst = append(dst, '"')
			dst = time.UnixMicro(c.i).UTC().AppendFormat(dst, jsonTimeLayout)
			dst = append(dst, '"')
		default: // Long, Integer
			dst = strconv.AppendInt(dst, c.i, 10)
		}
	}
	return append(dst, '}', '\n')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
