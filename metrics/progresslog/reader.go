package progresslog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The bounds of what a Reader accepts. Memory is bounded by one record
// for a Reader and by MaxRecords records for ReadAll, whatever the input's
// length: a driver log of any size is read in one pass, its other lines
// never held.
const (
	// MaxRecordBytes bounds the JSON text of one record. A progress
	// record is a few kilobytes; a Kafka source with thousands of
	// partitions writes three offset maps of some 30 bytes per partition,
	// so 4 MiB leaves room for tens of thousands of partitions.
	MaxRecordBytes = 4 << 20
	// MaxRecords bounds the records of one input: 200,000 triggers are
	// 23 days of a 10 s trigger. ReadAll holds them all: a record with
	// one state operator and RocksDB's custom metrics takes a few KB of
	// heap (BenchmarkReadAllMemory), so under a gigabyte at the limit. A
	// Reader holds one record at a time.
	MaxRecords = 200_000
)

// Form is the layout of a progress log, detected from its first character
// that is not white space (a UTF-8 byte order mark is skipped):
//
//   - '[' is a JSON array of records (JSONArray);
//   - '{' is a sequence of records, each an object; it is JSONLines when
//     the first record ends on the line where it starts, else PrettyJSON
//     (the two are read the same way: any white space, blank lines
//     included, may separate the records);
//   - anything else is a DriverLog: every occurrence of "Streaming query
//     made progress:" (in any case) followed by '{' starts a record that
//     ends where its braces balance, whatever the lines hold; every other
//     line is skipped;
//   - a sequence of objects whose first is a log event (a string "msg"
//     with "ts" or "level", and no "id") is a StructuredLog: Spark 4's
//     driver log with spark.log.structuredLogging.enabled, one JSON
//     object per line (SparkLayout.json), where a progress record is the
//     text after the marker in an event's msg, and every other event is
//     skipped.
type Form int

// The forms of a progress log.
const (
	// Unknown is the form of a Reader that has not read yet.
	Unknown Form = iota
	// JSONLines is one compact record per line.
	JSONLines
	// JSONArray is one JSON array of records.
	JSONArray
	// PrettyJSON is records printed over several lines, one after
	// another.
	PrettyJSON
	// DriverLog is a Spark driver's log.
	DriverLog
	// StructuredLog is a Spark 4 driver's structured (JSON) log.
	StructuredLog
)

// String names the form.
func (f Form) String() string {
	switch f {
	case JSONLines:
		return "JSON lines"
	case JSONArray:
		return "a JSON array"
	case PrettyJSON:
		return "pretty JSON"
	case DriverLog:
		return "a driver log"
	case StructuredLog:
		return "a structured (JSON) driver log"
	}
	return "unknown"
}

// marker is what starts a record in a driver log, lower-cased: Spark's
// MicroBatchExecution logs "Streaming query made progress: " and the
// record's prettyJson.
const marker = "streaming query made progress:"

// markerNext is the Knuth-Morris-Pratt failure function of marker.
var markerNext = func() []int {
	f := make([]int, len(marker))
	for i, k := 1, 0; i < len(marker); i++ {
		for k > 0 && marker[i] != marker[k] {
			k = f[k-1]
		}
		if marker[i] == marker[k] {
			k++
		}
		f[i] = k
	}
	return f
}()

// state is where a Reader is in its input.
type state int

const (
	stStart state = iota
	stObjects
	stArrayFirst
	stArray
	stAfterArray
	stLog
)

// Reader reads the progress records of one input, one at a time. It
// skips the query started, idle and terminated events a listener may
// write among them (see Skipped).
type Reader struct {
	src   string
	br    *bufio.Reader
	line  int  // the line of the next byte
	last  byte // the byte readByte returned last
	state state
	form  Form
	rec   []byte
	names interner
	n     int
	skip  int
	err   error
	// A driver log's first line that is not blank, for the message when
	// it holds no record.
	logFirst     []byte
	logFirstLine int
}

// NewReader returns a Reader of r; source names r in errors (a file name,
// or "stdin").
func NewReader(r io.Reader, source string) *Reader {
	return &Reader{src: source, br: bufio.NewReaderSize(r, 64<<10), line: 1, names: interner{}}
}

// Form returns the input's form, Unknown before the first call of Next.
func (r *Reader) Form() Form { return r.form }

// Skipped returns how many listener events (query started, idle or
// terminated: objects with an id and a runId and none of batchId,
// numInputRows, durationMs, stateOperators, sources or sink) were skipped.
func (r *Reader) Skipped() int { return r.skip }

// Next returns the next record. At the end of the input it returns
// io.EOF, unless the input held no record at all: then an *Error saying
// what it held instead. Any other problem is an *Error (see Error), and
// every later call returns it again.
func (r *Reader) Next() (Progress, error) {
	if r.err != nil {
		return Progress{}, r.err
	}
	p, err := r.next()
	if err != nil {
		r.err = err
	}
	return p, err
}

func (r *Reader) next() (Progress, error) {
	for {
		raw, start, err := r.nextObject()
		if err == io.EOF {
			if r.n == 0 {
				return Progress{}, r.noRecords()
			}
			return Progress{}, io.EOF
		}
		if err != nil {
			return Progress{}, err
		}
		if r.form == StructuredLog || r.n == 0 && r.skip == 0 && r.form != DriverLog && r.form != JSONArray {
			msg, ok, err := logEventMessage(raw)
			if err != nil && r.form == StructuredLog {
				return Progress{}, r.errorf(start, "%v", err)
			}
			if ok {
				r.form = StructuredLog
				if raw = progressInMessage(msg); raw == nil {
					continue
				}
			}
		}
		p, k, err := decodeRecord(raw, start, r.names)
		var re *recordError
		switch {
		case errors.As(err, &re):
			return Progress{}, r.errorf(re.line, "%s", re.msg)
		case err != nil:
			return Progress{}, r.errorf(start, "%v", err)
		case k == kindEvent:
			r.skip++
			continue
		case k == kindOther:
			return Progress{}, r.notProgress(start, "an object without the \"id\" and \"runId\" strings of a progress record: "+show(firstLine(raw)))
		}
		if r.n >= MaxRecords {
			return Progress{}, r.errorf(start, "more than %d progress records, the limit for one input; split the log", MaxRecords)
		}
		r.n++
		return p, nil
	}
}

// ReadAll reads every record of r (see Reader) and returns them with the
// input's form.
func ReadAll(r io.Reader, source string) ([]Progress, Form, error) {
	rd := NewReader(r, source)
	var out []Progress
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return out, rd.Form(), nil
		}
		if err != nil {
			return nil, rd.Form(), err
		}
		out = append(out, p)
	}
}

func (r *Reader) errorf(line int, format string, args ...any) error {
	return &Error{Source: r.src, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// notProgress is the error for input that is not Spark progress.
func (r *Reader) notProgress(line int, got string) error {
	return r.errorf(line, "%s, got %s", Want, got)
}

// noRecords is the error for an input that ended without a record.
func (r *Reader) noRecords() error {
	switch r.form {
	case JSONArray:
		return r.notProgress(r.line, "an empty JSON array")
	case StructuredLog:
		return r.notProgress(r.line, "a structured (JSON) log with no event whose msg is 'Streaming query made progress: {...}'")
	case DriverLog:
		if r.logFirst == nil {
			return r.notProgress(r.line, "empty input")
		}
		lines := r.line
		if r.last == '\n' {
			lines--
		}
		return r.notProgress(r.logFirstLine, fmt.Sprintf("%s (a text of %d lines, none with 'Streaming query made progress: {')", quote(string(r.logFirst)), lines))
	case Unknown:
		return r.notProgress(r.line, "empty input")
	}
	// Objects that were all listener events.
	return r.notProgress(r.line, fmt.Sprintf("only %d listener events (query started, idle or terminated), no progress", r.skip))
}

// logEvent is one event of a structured (JSON) driver log, as Spark's
// SparkLayout.json writes it: ts, level, msg, context, exception, logger.
type logEvent struct {
	TS    *string `json:"ts"`
	Level *string `json:"level"`
	Msg   *string `json:"msg"`
	ID    any     `json:"id"`
}

// logEventMessage returns the msg of raw when raw is a structured log
// event: an object with a string msg, a ts or a level, and no id (which
// a progress record has); ok is false for any other object.
func logEventMessage(raw []byte) (string, bool, error) {
	var e logEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", false, fmt.Errorf("malformed JSON in a structured log event: %v", err)
	}
	if e.Msg == nil || e.ID != nil || e.TS == nil && e.Level == nil {
		return "", false, nil
	}
	return *e.Msg, true, nil
}

// progressInMessage returns the record a log event's message holds: the
// text from the first '{' after the marker (in any case, followed only
// by spaces and tabs), or nil.
func progressInMessage(msg string) []byte {
	// Lower-case ASCII letters only, so that offsets stay those of msg.
	lower := []byte(msg)
	for k, c := range lower {
		if 'A' <= c && c <= 'Z' {
			lower[k] = c + 'a' - 'A'
		}
	}
	i := strings.Index(string(lower), marker)
	if i < 0 {
		return nil
	}
	rest := strings.TrimLeft(msg[i+len(marker):], " \t")
	if !strings.HasPrefix(rest, "{") {
		return nil
	}
	return []byte(strings.TrimRight(rest, " \t\r\n"))
}

// readByte returns the next byte, counting lines.
func (r *Reader) readByte() (byte, error) {
	c, err := r.br.ReadByte()
	if err != nil {
		if err != io.EOF {
			return 0, r.errorf(r.line, "reading: %v", err)
		}
		return 0, io.EOF
	}
	if c == '\n' {
		r.line++
	}
	r.last = c
	return c, nil
}

// skipSpace consumes JSON white space and returns the first other byte,
// not consumed, or io.EOF.
func (r *Reader) skipSpace() (byte, error) {
	for {
		b, err := r.br.Peek(1)
		if err != nil {
			if err != io.EOF {
				return 0, r.errorf(r.line, "reading: %v", err)
			}
			return 0, io.EOF
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = r.readByte()
		default:
			return b[0], nil
		}
	}
}

// restOfLine consumes and returns the rest of the current line, at most
// as much as a message echoes.
func (r *Reader) restOfLine() string {
	var b []byte
	for len(b) < 4*MaxEcho+4 {
		c, err := r.br.ReadByte()
		if err != nil || c == '\n' || c == '\r' {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// nextObject returns the JSON text of the next top-level object and the
// line of its opening brace, or io.EOF at the end of the input.
func (r *Reader) nextObject() ([]byte, int, error) {
	for {
		switch r.state {
		case stStart:
			if b, err := r.br.Peek(3); err == nil && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
				_, _ = r.br.Discard(3)
			}
			c, err := r.skipSpace()
			if err != nil {
				return nil, 0, err
			}
			switch c {
			case '[':
				_, _ = r.readByte()
				r.form, r.state = JSONArray, stArrayFirst
			case '{':
				r.state = stObjects
			default:
				r.form, r.state = DriverLog, stLog
			}
		case stObjects:
			c, err := r.skipSpace()
			if err != nil {
				return nil, 0, err
			}
			line := r.line
			if c != '{' {
				return nil, 0, r.notProgress(line, quote(r.restOfLine()))
			}
			raw, err := r.capture()
			if err != nil {
				return nil, 0, err
			}
			if r.form == Unknown {
				r.form = PrettyJSON
				if r.line == line {
					r.form = JSONLines
				}
			}
			return raw, line, nil
		case stArrayFirst, stArray:
			c, err := r.skipSpace()
			if err == io.EOF {
				return nil, 0, r.errorf(r.line, "malformed JSON: the array is not closed (end of input)")
			}
			if err != nil {
				return nil, 0, err
			}
			line := r.line
			if c == ']' {
				_, _ = r.readByte()
				r.state = stAfterArray
				continue
			}
			if r.state == stArray {
				if c != ',' {
					return nil, 0, r.errorf(line, "malformed JSON: want ',' or ']' after an array element, got %s", quote(r.restOfLine()))
				}
				_, _ = r.readByte()
				if c, err = r.skipSpace(); err == io.EOF {
					return nil, 0, r.errorf(r.line, "malformed JSON: the array is not closed (end of input)")
				} else if err != nil {
					return nil, 0, err
				}
				line = r.line
				if c == ']' {
					return nil, 0, r.errorf(line, "malformed JSON: ',' before the array's ']'")
				}
			}
			if c != '{' {
				return nil, 0, r.notProgress(line, "an array element "+quote(r.restOfLine()))
			}
			raw, err := r.capture()
			if err != nil {
				return nil, 0, err
			}
			r.state = stArray
			return raw, line, nil
		case stAfterArray:
			_, err := r.skipSpace()
			if err != nil {
				return nil, 0, err
			}
			line := r.line
			return nil, 0, r.notProgress(line, "text after the JSON array: "+quote(r.restOfLine()))
		case stLog:
			line, err := r.findMarker()
			if err != nil {
				return nil, 0, err
			}
			raw, err := r.capture()
			if err != nil {
				return nil, 0, err
			}
			return raw, line, nil
		}
	}
}

// findMarker consumes a driver log up to the opening brace of the next
// record (not consumed) and returns its line, or io.EOF.
func (r *Reader) findMarker() (int, error) {
	k := 0 // how much of marker the current line has matched
	for {
		c, err := r.readByte()
		if err != nil {
			return 0, err
		}
		r.keepFirst(c)
		if c == '\n' {
			k = 0
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		for k > 0 && c != marker[k] {
			k = markerNext[k-1]
		}
		if c == marker[k] {
			k++
		}
		if k < len(marker) {
			continue
		}
		k = 0
		// The marker: a record follows when the next character that is
		// not a space or a tab is an opening brace.
		for {
			b, err := r.br.Peek(1)
			if err != nil {
				if err == io.EOF {
					return 0, io.EOF
				}
				return 0, r.errorf(r.line, "reading: %v", err)
			}
			if b[0] == '{' {
				return r.line, nil
			}
			if b[0] != ' ' && b[0] != '\t' {
				break
			}
			c, _ = r.readByte()
			r.keepFirst(c)
		}
	}
}

// keepFirst keeps the start of a driver log's first line that is not
// blank, byte by byte, for the message when the log holds no record.
func (r *Reader) keepFirst(c byte) {
	if r.logFirst == nil && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
		r.logFirst, r.logFirstLine = []byte{}, r.line
	}
	if r.logFirst != nil && r.logFirstLine == r.line && c != '\r' && c != '\n' && len(r.logFirst) < 4*MaxEcho+4 {
		r.logFirst = append(r.logFirst, c)
	}
}

// capture consumes one JSON object, starting at its opening brace, and
// returns its text: it ends where the braces and brackets outside
// strings balance. The text is checked as JSON when it is decoded.
func (r *Reader) capture() ([]byte, error) {
	start := r.line
	r.rec = r.rec[:0]
	depth := 0
	inString, escaped := false, false
	for {
		c, err := r.readByte()
		if err == io.EOF {
			return nil, r.errorf(start, "malformed JSON: the record that starts here is cut short (end of input)")
		}
		if err != nil {
			return nil, err
		}
		if len(r.rec) >= MaxRecordBytes {
			return nil, r.errorf(start, "progress record longer than %d MiB, the limit", MaxRecordBytes>>20)
		}
		r.rec = append(r.rec, c)
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				// The decoded record keeps none of this buffer, which
				// is reused for the next one.
				return r.rec, nil
			}
		}
	}
}
