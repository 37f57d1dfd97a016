package generators

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/dedupsim/dedupsim/generators/eventlog"
)

// The forms of a log's ids, as LogIndex keys them.
const (
	// formInt: every id is one column holding a whole number written
	// canonically (no sign but '-', no leading zero): event_id is that
	// number (IntIDs), as a generated int id is.
	formInt = iota
	// formUUID: every id is one column holding a lowercase UUID in the
	// 8-4-4-4-12 layout: event_id keeps its text (UUIDIDs).
	formUUID
	// formOther: any other id, composite ones included: event_id is the
	// event's number (IntIDs), an exact encoding (distinct ids get
	// distinct numbers) whose state bytes are those of an 8-byte key,
	// not of the id's own text.
	formOther
)

// LogIndex is the first pass over an event log: each row's event (its
// id's number, in order of first appearance) and each event's number of
// rows. The accountant needs an event's number of copies when its first
// copy arrives, so the log is read twice: once here, once by LogSource.
// While it reads, the index maps each distinct id to its number (a Go
// map: LogIndexBytes); after, it keeps 4 bytes per event in memory (the
// copies) and 4 bytes per row in an unlinked temporary file (the rows'
// event numbers, which the second pass reads in order, with no look-up).
type LogIndex struct {
	form   int
	ints   map[int64]uint32
	uuids  map[[16]byte]uint32
	others map[string]uint32
	// copies holds each event's number of rows.
	copies []uint32
	// events is the rows' event numbers, 4 bytes little-endian a row,
	// in a temporary file removed from its folder once opened.
	events *os.File
	// Rows and Events count the log's rows and distinct ids.
	Rows   int64
	Events uint64
	// FirstArrival and LastArrival bound the arrivals, in microseconds
	// since the epoch.
	FirstArrival, LastArrival int64
	// EventUnit and ArrivalUnit are the time columns' units; Detected
	// says they were detected, not given.
	EventUnit, ArrivalUnit eventlog.TimeUnit
	Detected               bool
	// Has says which schema columns (ColCustomerID, ColIngestTime,
	// ColAttempt, ColPayload) the log holds, in its first row.
	Has [NumColumns]bool
}

// logEntry is an event's number and its number of rows.
type logEntry struct {
	event, copies uint32
}

// Close releases the index's temporary file. Sources opened on it must
// be done with.
func (x *LogIndex) Close() error { return x.events.Close() }

// IDs returns the form of the event_id column of the log's rows.
func (x *LogIndex) IDs() IDForm {
	if x.form == formUUID {
		return UUIDs
	}
	return Ints
}

// IDForm names the form of the log's ids for messages: "int", "uuid"
// or "other".
func (x *LogIndex) IDForm() string {
	return [...]string{"int", "uuid", "other"}[x.form]
}

// LogIndexBytes is the index's measured memory per distinct id, by form
// (BenchmarkLogIndex): Go maps of 8-byte entries keyed by an int64, 16
// bytes or the id's text.
const LogIndexBytes = "while the log is scanned, about 30-50 bytes per distinct int or UUID id (other ids add their text); after, 4 bytes per event in memory and 4 bytes per row in a temporary file"

// maxLogEvents bounds the distinct ids of a log: event numbers are kept
// in 32 bits.
const maxLogEvents = math.MaxUint32 - 1

// ScanLog reads the log of e once: it checks every row (the reader's
// checks, and the schema columns the log carries: customer_id, attempt
// and payload whole numbers, ingest_time a time) and indexes its ids.
func ScanLog(e *Events) (*LogIndex, error) {
	r, err := eventlog.Open(e.Spec())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	tmp, err := os.CreateTemp("", "dedupsim-eventlog-*.events")
	if err != nil {
		return nil, fmt.Errorf("event log: a temporary file for the rows' events: %w", err)
	}
	// Unlinked at once: the file lives while the index holds it open,
	// and nothing is left behind however the process ends (where the
	// system allows removing an open file).
	os.Remove(tmp.Name())
	x := &LogIndex{form: -1, events: tmp}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<16)
	// The id map is the scan's memory, and it is free of pointers, so a
	// collection costs little: collect at 10% growth instead of the
	// default 100% while it grows (its old tables are garbage once
	// rehashed), so that the heap stays near the map's own size rather
	// than twice it. The setting is restored when the scan ends.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var row Row
	var b [4]byte
	cols := newLogCols(e)
	for r.Next() {
		rec := r.Record()
		if x.Rows == 0 {
			x.FirstArrival = rec.Arrival
			for i, c := range cols.cols {
				x.Has[c] = rec.Has[i]
			}
			x.EventUnit, x.ArrivalUnit, x.Detected = r.Units()
			x.start(rec)
		}
		if err := cols.fill(r, &row, &x.Has); err != nil {
			return nil, err
		}
		ev, err := x.add(rec)
		if err != nil {
			return nil, r.RowError(e.ID[0], err.Error())
		}
		if x.copies[ev] == math.MaxUint32 {
			return nil, r.RowError(e.ID[0], "an id with more than 4294967295 rows")
		}
		x.copies[ev]++
		binary.LittleEndian.PutUint32(b[:], ev)
		w.Write(b[:])
		x.Rows++
		x.LastArrival = rec.Arrival
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("event log: writing the rows' events to a temporary file: %w", err)
	}
	// The ids are no longer needed: only the numbers are. One
	// collection now frees the map and gives its pages back to the
	// system before the run allocates, so that the run's heap does not
	// grow on top of it (the pacer would let the heap reach twice the
	// map's size before the next collection).
	x.ints, x.uuids, x.others = nil, nil, nil
	debug.FreeOSMemory()
	ok = true
	return x, nil
}

// start picks the id form from the first row.
func (x *LogIndex) start(rec *eventlog.Record) {
	switch {
	case len(rec.IDParts) > 1:
		x.form, x.others = formOther, map[string]uint32{}
	case isCanonicalInt(rec.ID):
		x.form, x.ints = formInt, map[int64]uint32{}
	case isLowerUUID(rec.ID):
		x.form, x.uuids = formUUID, map[[16]byte]uint32{}
	default:
		x.form, x.others = formOther, map[string]uint32{}
	}
}

// add returns the event number of rec's id, a new one for an id not
// seen before; when the id does not fit the form, the index moves to
// formOther first.
func (x *LogIndex) add(rec *eventlog.Record) (uint32, error) {
	switch x.form {
	case formInt:
		if n, ok := parseCanonicalInt(rec.ID); ok {
			if ev, ok := x.ints[n]; ok {
				return ev, nil
			}
			ev, err := x.newEvent()
			if err == nil {
				x.ints[n] = ev
			}
			return ev, err
		}
	case formUUID:
		if u, ok := parseLowerUUID(rec.ID); ok {
			if ev, ok := x.uuids[u]; ok {
				return ev, nil
			}
			ev, err := x.newEvent()
			if err == nil {
				x.uuids[u] = ev
			}
			return ev, err
		}
	default:
		if ev, ok := x.others[string(rec.ID)]; ok {
			return ev, nil
		}
		ev, err := x.newEvent()
		if err == nil {
			x.others[string(rec.ID)] = ev
		}
		return ev, err
	}
	x.toOther()
	return x.add(rec)
}

func (x *LogIndex) newEvent() (uint32, error) {
	if x.Events >= maxLogEvents {
		return 0, errors.New("more than 4294967295 distinct ids, the limit")
	}
	x.Events++
	x.copies = append(x.copies, 0)
	return uint32(x.Events - 1), nil
}

// toOther rekeys the index by the ids' text: an int or UUID id's text
// is its canonical form, so the rekeying is exact.
func (x *LogIndex) toOther() {
	m := make(map[string]uint32, len(x.ints)+len(x.uuids))
	for n, ev := range x.ints {
		m[strconv.FormatInt(n, 10)] = ev
	}
	for u, ev := range x.uuids {
		var t [36]byte
		writeUUIDBytes(&t, u)
		m[string(t[:])] = ev
	}
	x.form, x.ints, x.uuids, x.others = formOther, nil, nil, m
}

// isCanonicalInt reports whether b is a whole number as strconv writes
// an int64.
func isCanonicalInt(b []byte) bool { _, ok := parseCanonicalInt(b); return ok }

// parseCanonicalInt parses b when it is an int64 written canonically:
// an optional '-', digits without a leading zero ("0" itself, not "-0").
func parseCanonicalInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || len(d) > 19 || d[0] == '0' && (len(d) > 1 || neg) {
		return 0, false
	}
	var u uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= 1<<63:
		return int64(-u), true
	}
	return 0, false
}

// isLowerUUID reports whether b is a UUID's text in lowercase.
func isLowerUUID(b []byte) bool { _, ok := parseLowerUUID(b); return ok }

// parseLowerUUID returns the 16 bytes of a UUID written as lowercase
// 8-4-4-4-12 hexadecimal digits.
func parseLowerUUID(b []byte) ([16]byte, bool) {
	var u [16]byte
	if len(b) != uuidLen || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return u, false
	}
	for i := range 16 {
		o := uuidOffsets[i]
		hi, ok1 := lowerHex(b[o])
		lo, ok2 := lowerHex(b[o+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[i] = hi<<4 | lo
	}
	return u, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// writeUUIDBytes writes the lowercase text of the UUID u.
func writeUUIDBytes(dst *[36]byte, u [16]byte) {
	for i, b := range u {
		o := uuidOffsets[i]
		dst[o], dst[o+1] = hexDigits[b>>4], hexDigits[b&0xf]
	}
	dst[8], dst[13], dst[18], dst[23] = '-', '-', '-', '-'
}

// logCols maps a log's optional columns to the schema's.
type logCols struct {
	cols []int
	// ingestIsArrival: the arrival column is ingest_time itself.
	ingestIsArrival bool
}

func newLogCols(e *Events) *logCols {
	lc := &logCols{}
	for _, c := range logColumns {
		if !e.uses(c.name) {
			lc.cols = append(lc.cols, c.col)
		} else if c.col == ColIngestTime && e.ArrivalTime == c.name {
			lc.ingestIsArrival = true
		}
	}
	return lc
}

// fill sets row's schema columns from the current record of r: the
// optional ones the log has (has, from its first row) or 0, ingest_time
// the arrival when the log has none. A row without a column the first
// row has is an error, as is a value that is not a whole number (or a
// time, for ingest_time).
func (lc *logCols) fill(r *eventlog.Reader, row *Row, has *[NumColumns]bool) error {
	rec := r.Record()
	row.CustomerID, row.Attempt, row.Payload = 0, 0, 0
	row.IngestTime = rec.Arrival
	for i, c := range lc.cols {
		if !has[c] {
			continue
		}
		name := Columns()[c].Name
		if !rec.Has[i] {
			return r.RowError(name, "missing in this row (the log's first row has it)")
		}
		if c == ColIngestTime {
			t, err := r.OptionalTime(i)
			if err != nil {
				return err
			}
			row.IngestTime = t
			continue
		}
		n, ok := parseInt(rec.Optional[i])
		if !ok {
			return r.RowError(name, fmt.Sprintf("must be a whole number (a column of the row schema), got %q", cut(rec.Optional[i])))
		}
		switch c {
		case ColCustomerID:
			row.CustomerID = n
		case ColAttempt:
			row.Attempt = n
		case ColPayload:
			row.Payload = n
		}
	}
	return nil
}

// parseInt parses a whole number in decimal, with an optional sign.
func parseInt(b []byte) (int64, bool) {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' || u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= 1<<63:
		return int64(-u), true
	}
	return 0, false
}

func cut(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// LogSource is a Source of a log's rows, with their ground truth from
// the log: rows with the same id are copies of one event, numbered by
// first appearance (LogIndex); a row's Copy is its place among its id's
// rows; BadClock is set when its event time is ahead of its arrival by
// more than the tolerance. It holds the reader's buffer and the events
// with copies still to come, never the log. It is not safe for
// concurrent use.
type LogSource struct {
	r     *eventlog.Reader
	e     *Events
	x     *LogIndex
	idCol string
	cols  *logCols
	tol   int64
	// next is the next new event's number; pending the copies seen of
	// the events with copies still to come.
	next    uint32
	pending map[uint32]uint32
	// events reads the rows' event numbers the index wrote.
	events *bufio.Reader
	evBuf  [4]byte
	rows   int64
	err    error
	done   bool
}

// NewLogSource opens the log of e, whose index (ScanLog) is e.Index.
func NewLogSource(e *Events) (*LogSource, error) {
	if e.Index == nil {
		return nil, errors.New("generators: the event log has not been scanned")
	}
	r, err := eventlog.Open(e.Spec())
	if err != nil {
		return nil, err
	}
	x := e.Index
	events := bufio.NewReaderSize(io.NewSectionReader(x.events, 0, 4*x.Rows), 1<<16)
	return &LogSource{r: r, e: e, x: x, events: events, idCol: e.ID[0], cols: newLogCols(e), tol: e.BadClockTolerance.Micros(), pending: map[uint32]uint32{}}, nil
}

// Next writes the next row into row and reports whether there was one;
// after false, Err tells whether the log ended cleanly.
func (s *LogSource) Next(row *Row) bool {
	if s.done {
		return false
	}
	if !s.r.Next() {
		s.done = true
		s.err = s.r.Err()
		if s.err == nil && s.rows != s.x.Rows {
			s.err = fmt.Errorf("%s: the log changed since it was first read (%d rows, now %d)", s.r.Files()[0], s.x.Rows, s.rows)
		}
		s.r.Close()
		return false
	}
	rec := s.r.Record()
	if _, err := io.ReadFull(s.events, s.evBuf[:]); err != nil {
		return s.fail(s.r.RowError(s.idCol, "the log changed since it was first read (more rows)"))
	}
	ev := binary.LittleEndian.Uint32(s.evBuf[:])
	ent := logEntry{event: ev, copies: s.x.copies[ev]}
	*row = Row{EventTime: rec.EventTime, Arrival: rec.Arrival}
	if err := s.cols.fill(s.r, row, &s.x.Has); err != nil {
		return s.fail(err)
	}
	switch s.x.form {
	case formInt:
		var ok bool
		if row.EventNum, ok = parseCanonicalInt(rec.ID); !ok {
			return s.fail(s.r.RowError(s.idCol, "the log changed since it was first read (the ids' form)"))
		}
	case formUUID:
		if len(rec.ID) != uuidLen {
			return s.fail(s.r.RowError(s.idCol, "the log changed since it was first read (the ids' form)"))
		}
		copy(row.EventID[:], rec.ID)
	default:
		row.EventNum = int64(ent.event)
	}
	t := &row.Truth
	t.Event, t.Copies = uint64(ent.event), ent.copies
	switch {
	case ent.event == s.next:
		s.next++
		if ent.copies > 1 {
			s.pending[ent.event] = 1
		}
	case ent.event > s.next:
		return s.fail(s.r.RowError(s.idCol, "the log changed since it was first read (ids in another order)"))
	default:
		c := s.pending[ent.event]
		t.Copy = c
		if c+1 >= ent.copies {
			delete(s.pending, ent.event)
		} else {
			s.pending[ent.event] = c + 1
		}
	}
	t.BadClock = row.EventTime-row.Arrival > s.tol
	s.rows++
	return true
}

func (s *LogSource) fail(err error) bool {
	s.err, s.done = err, true
	s.r.Close()
	return false
}

// Err returns the error that ended the rows, or nil.
func (s *LogSource) Err() error { return s.err }

// Pending returns the number of events with copies still to come: the
// source's memory besides the index is proportional to it.
func (s *LogSource) Pending() int { return len(s.pending) }

// logStateMagic opens a LogSource's State.
const logStateMagic = "dedupsim log source 1\n"

// fingerprint identifies the log the index was made of: its rows,
// events and arrival span.
func (x *LogIndex) fingerprint() uint64 {
	h := uint64(14695981039346656037)
	for _, v := range []uint64{uint64(x.Rows), x.Events, uint64(x.FirstArrival), uint64(x.LastArrival)} {
		h = (h ^ v) * 0x100000001b3
	}
	return h
}

// State returns the source's position: the rows read so far. Restore
// reads them again to come back to it (the events with copies to come
// are rebuilt on the way), so a killed run resumes exactly where it
// was, at the cost of rereading the log up to there.
func (s *LogSource) State() ([]byte, error) {
	e := &encoder{buf: []byte(logStateMagic)}
	e.u64(s.x.fingerprint())
	e.u64(uint64(s.rows))
	return e.buf, nil
}

// Restore moves s to the position State recorded, by reading the log
// again up to it. A state of another log, or a log that now has fewer
// rows, is an error, and s is left as it was.
func (s *LogSource) Restore(state []byte) error {
	body, ok := bytes.CutPrefix(state, []byte(logStateMagic))
	if !ok {
		return errors.New("generators: restore: not a log source's state (or a different format version)")
	}
	d := &decoder{buf: body}
	fp, rows := d.u64(), d.u64()
	if d.err == nil && len(d.buf) != 0 {
		d.fail(fmt.Errorf("%d bytes left over", len(d.buf)))
	}
	if d.err != nil {
		return fmt.Errorf("generators: restore: %w", d.err)
	}
	if fp != s.x.fingerprint() || rows > uint64(s.x.Rows) {
		return errors.New("generators: restore: the state is of a different log")
	}
	fresh, err := NewLogSource(s.e)
	if err != nil {
		return err
	}
	var row Row
	for range rows {
		if !fresh.Next(&row) {
			if err := fresh.Err(); err != nil {
				return fmt.Errorf("generators: restore: %w", err)
			}
			return errors.New("generators: restore: the log ended before the state's position")
		}
	}
	s.r.Close()
	*s = *fresh
	return nil
}

// Close closes the log's files.
func (s *LogSource) Close() error { return s.r.Close() }

// NewSource returns the row source of c: its event log's (LogSource)
// when the workload reads one, else its generator.
func NewSource(c Config) (Source, error) {
	if e := c.Workload.Events; e != nil {
		return NewLogSource(e)
	}
	return New(c)
}

// SourceErr returns the error that ended src's rows early, for a source
// that can fail (a LogSource reading a log that changed); nil otherwise.
func SourceErr(src Source) error {
	if f, ok := src.(interface{ Err() error }); ok {
		return f.Err()
	}
	return nil
}
