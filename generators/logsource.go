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
// The first pass holds no id in memory beyond its budget (SortBudget):
// it sorts (id, row) pairs externally (eventlog.Sorter, spilling sorted
// runs to disk), finds each id's first row and number of rows in the
// merge, and writes, 8 bytes a row in row order to an unlinked temporary
// file, either the row's event's number of rows (the row is its id's
// first) or the index of its id's first row. The second pass numbers the
// events as their first rows come, holding only the events with copies
// still to come.
type LogIndex struct {
	form int
	// events is the rows' entries, 8 bytes little-endian a row (firstRow
	// with the number of rows, or the first row's index), in a temporary
	// file removed from its folder once opened.
	events *os.File
	// rows is the rows as the scan parsed them (logRowCodec), in a
	// temporary file like events, so that the second pass decodes them
	// instead of parsing the log again; rowBytes is its size.
	rows     *os.File
	rowBytes int64
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
	// Spilled is the number of sorted runs the scan wrote to disk (0
	// when the log's ids fit in the budget).
	Spilled int
}

// firstRow marks a row entry that is its id's first row; the rest of
// the entry is the id's number of rows.
const firstRow = 1 << 63

// Close releases the index's temporary file. Sources opened on it must
// be done with.
func (x *LogIndex) Close() error {
	if x.rows != nil {
		x.rows.Close()
	}
	if x.events == nil {
		return nil
	}
	return x.events.Close()
}

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

// LogIndexBytes is the index's memory: bounded by its budget, whatever
// the number of distinct ids (TestScanLogMemoryBounded).
const LogIndexBytes = "while the log is scanned, at most the sort budget (64 MiB unless set) of ids and half of it of rows' entries in memory, the rest in sorted runs on disk (about 25 bytes a row for uuid ids); after, nothing in memory, and 8 bytes a row (the entries) and about 30 (the parsed rows) in temporary files"

// maxLogEvents bounds the distinct ids of a log: event numbers are kept
// in 32 bits.
const maxLogEvents = math.MaxUint32 - 1

// ScanLog reads the log of e once: it checks every row (the reader's
// checks, and the schema columns the log carries: customer_id, attempt
// and payload whole numbers, ingest_time a time) and indexes its ids,
// in at most 1.5 x e.SortBudget bytes of memory for them (0: 64 MiB).
func ScanLog(e *Events) (*LogIndex, error) {
	r, err := eventlog.Open(e.Spec())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	budget := e.SortBudget
	if budget <= 0 {
		budget = eventlog.DefaultSortBudget
	}
	srt := eventlog.NewSorter(budget)
	defer srt.Close()
	x := &LogIndex{form: -1}
	ok := false
	defer func() {
		if !ok {
			x.Close()
		}
	}()
	if x.rows, err = os.CreateTemp("", "dedupsim-eventlog-*.rows"); err != nil {
		return nil, fmt.Errorf("event log: a temporary file for the rows: %w", err)
	}
	// Unlinked at once: the file lives while the index holds it open,
	// and nothing is left behind however the process ends (where the
	// system allows removing an open file).
	os.Remove(x.rows.Name())
	rw := bufio.NewWriterSize(x.rows, 1<<16)
	var enc logRowCodec
	var row Row
	var key []byte
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
		key = appendLogKey(key[:0], rec.ID)
		x.see(key[0])
		row.EventTime, row.Arrival = rec.EventTime, rec.Arrival
		if _, err := rw.Write(enc.encode(&row, key)); err != nil {
			return nil, fmt.Errorf("event log: writing the rows to a temporary file: %w", err)
		}
		key = binary.BigEndian.AppendUint64(key, uint64(x.Rows))
		if err := srt.Add(key); err != nil {
			return nil, r.RowError(e.ID[0], err.Error())
		}
		x.Rows++
		x.LastArrival = rec.Arrival
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if err := rw.Flush(); err != nil {
		return nil, fmt.Errorf("event log: writing the rows to a temporary file: %w", err)
	}
	x.rowBytes = enc.bytes
	x.Spilled = srt.Spilled()
	name := r.Files()[0]
	if err := x.number(srt, budget, name); err != nil {
		return nil, err
	}
	// The scan's buffers (up to 1.5 budgets) are garbage now: one
	// collection gives their pages back to the system before the run
	// allocates, so that the run's heap does not grow on top of them.
	debug.FreeOSMemory()
	ok = true
	return x, nil
}

// number merges the sorted (id, row) pairs into the rows' entries, in
// row order, in x.events.
func (x *LogIndex) number(srt *eventlog.Sorter, budget int, name string) error {
	m, err := srt.Sorted()
	if err != nil {
		return fmt.Errorf("event log %s: %w", name, err)
	}
	defer m.Close()
	// The row table's buckets take half the budget beside the sorter's.
	out, err := newRowTable(x.Rows, budget/2)
	if err != nil {
		return err
	}
	defer out.close()
	var cur []byte
	var first, n uint64
	flush := func() error {
		if n == 0 {
			return nil
		}
		if x.Events >= maxLogEvents {
			return fmt.Errorf("%s: more than 4294967295 distinct ids, the limit", name)
		}
		if n > math.MaxUint32 {
			return fmt.Errorf("%s: the id %q has more than 4294967295 rows", name, cut(cur))
		}
		x.Events++
		if n == 1 {
			// A single row: the table's default entry.
			return nil
		}
		return out.put(first, firstRow|n)
	}
	for m.Next() {
		rec := m.Record()
		k, row := rec[:len(rec)-8], binary.BigEndian.Uint64(rec[len(rec)-8:])
		if n > 0 && bytes.Equal(k, cur) {
			n++
			if err := out.put(row, first); err != nil {
				return err
			}
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		cur, first, n = append(cur[:0], k...), row, 1
	}
	if err := m.Err(); err != nil {
		return fmt.Errorf("event log %s: %w", name, err)
	}
	if err := flush(); err != nil {
		return err
	}
	x.events, err = out.finish()
	return err
}

// The tags of an id's sort key (appendLogKey), which are also its form.
const (
	keyInt  = 0
	keyUUID = 1
	keyText = 2
)

// appendLogKey appends the sort key of an id: a tag and the id's int
// (8 bytes, sign flipped so that bytes order as numbers) or UUID (16
// bytes) when it is written canonically, else its length (4 bytes) and
// text. Distinct ids get distinct keys, and no key is a prefix of
// another, so the key followed by a row index sorts by id, then row.
func appendLogKey(dst, id []byte) []byte {
	if u, ok := parseLowerUUID(id); ok {
		return append(append(dst, keyUUID), u[:]...)
	}
	if n, ok := parseCanonicalInt(id); ok {
		return binary.BigEndian.AppendUint64(append(dst, keyInt), uint64(n)^1<<63)
	}
	return append(binary.BigEndian.AppendUint32(append(dst, keyText), uint32(len(id))), id...)
}

// start picks the id form from the first row.
func (x *LogIndex) start(rec *eventlog.Record) {
	switch {
	case len(rec.IDParts) > 1:
		x.form = formOther
	case isCanonicalInt(rec.ID):
		x.form = formInt
	case isLowerUUID(rec.ID):
		x.form = formUUID
	default:
		x.form = formOther
	}
}

// see moves the form to formOther when an id whose key has tag does not
// fit it.
func (x *LogIndex) see(tag byte) {
	switch {
	case x.form == formInt && tag != keyInt, x.form == formUUID && tag != keyUUID:
		x.form = formOther
	}
}

// maxLogRow is the longest encoding of a row (logRowCodec).
const maxLogRow = 1 + 16 + 6*binary.MaxVarintLen64

// logRowCodec encodes the rows the scan parsed, for the second pass: the
// id's key tag and its int (zigzag varint) or UUID (16 bytes) (nothing
// for other ids: their rows take the event number), then the arrival
// less the previous row's, the event time and ingest_time less the
// arrival, customer_id, attempt and payload, each a zigzag varint.
type logRowCodec struct {
	buf   [maxLogRow]byte
	last  int64
	bytes int64
}

func (c *logRowCodec) encode(r *Row, key []byte) []byte {
	b := append(c.buf[:0], key[0])
	switch key[0] {
	case keyInt:
		b = binary.AppendVarint(b, int64(binary.BigEndian.Uint64(key[1:])^1<<63))
	case keyUUID:
		b = append(b, key[1:17]...)
	}
	b = binary.AppendVarint(b, r.Arrival-c.last)
	b = binary.AppendVarint(b, r.EventTime-r.Arrival)
	b = binary.AppendVarint(b, r.IngestTime-r.Arrival)
	b = binary.AppendVarint(b, r.CustomerID)
	b = binary.AppendVarint(b, r.Attempt)
	b = binary.AppendVarint(b, r.Payload)
	c.last = r.Arrival
	c.bytes += int64(len(b))
	return b
}

// decode decodes a row from b into r (its id by form) and returns its
// length, or 0 when b does not hold one.
func (c *logRowCodec) decode(b []byte, r *Row, form int) int {
	if len(b) == 0 {
		return 0
	}
	i := 1
	switch b[0] {
	case keyInt:
		v, n := binary.Varint(b[i:])
		if n <= 0 || form != formInt && form != formOther {
			return 0
		}
		r.EventNum = v
		i += n
	case keyUUID:
		if len(b) < 17 || form != formUUID && form != formOther {
			return 0
		}
		if form == formUUID {
			writeUUIDBytes(&r.EventID, [16]byte(b[1:17]))
		}
		i = 17
	case keyText:
		if form != formOther {
			return 0
		}
	default:
		return 0
	}
	var v [6]int64
	for k := range v {
		x, n := binary.Varint(b[i:])
		if n <= 0 {
			return 0
		}
		v[k], i = x, i+n
	}
	r.Arrival = c.last + v[0]
	r.EventTime, r.IngestTime = r.Arrival+v[1], r.Arrival+v[2]
	r.CustomerID, r.Attempt, r.Payload = v[3], v[4], v[5]
	c.last = r.Arrival
	return i
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
	v := lowerHexValues[c]
	return v, v != 0xff
}

// lowerHexValues holds each byte's value as a lowercase hexadecimal
// digit, 0xff for the bytes that are not one.
var lowerHexValues = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range []byte(hexDigits) {
		t[c] = byte(i)
	}
	return t
}()

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
// more than the tolerance. It reads the rows the index's scan parsed
// (not the log again) and holds the events with copies still to come,
// never the log. It is not safe for concurrent use.
type LogSource struct {
	e   *Events
	x   *LogIndex
	tol int64
	// next is the next new event's number; pending the events with
	// copies still to come, by their first row.
	next    uint32
	pending map[uint64]logPending
	// rowsIn reads the parsed rows, events the rows' entries.
	rowsIn *bufio.Reader
	codec  logRowCodec
	events *bufio.Reader
	evBuf  [8]byte
	rows   int64
	err    error
	done   bool
}

// logPending is an event with copies still to come: its number, its
// rows and the rows seen.
type logPending struct {
	event, copies, seen uint32
}

// NewLogSource opens the rows of the log of e, whose index (ScanLog) is
// e.Index.
func NewLogSource(e *Events) (*LogSource, error) {
	if e.Index == nil {
		return nil, errors.New("generators: the event log has not been scanned")
	}
	x := e.Index
	events := bufio.NewReaderSize(io.NewSectionReader(x.events, 0, 8*x.Rows), 1<<15)
	rows := bufio.NewReaderSize(io.NewSectionReader(x.rows, 0, x.rowBytes), 1<<16)
	return &LogSource{e: e, x: x, events: events, rowsIn: rows, tol: e.BadClockTolerance.Micros(), pending: map[uint64]logPending{}}, nil
}

// Next writes the next row into row and reports whether there was one;
// after false, Err tells whether the log ended cleanly.
func (s *LogSource) Next(row *Row) bool {
	if s.done {
		return false
	}
	if s.rows == s.x.Rows {
		s.done = true
		return false
	}
	b, _ := s.rowsIn.Peek(maxLogRow)
	*row = Row{}
	n := s.codec.decode(b, row, s.x.form)
	if n == 0 {
		return s.fail(fmt.Errorf("generators: the event log's parsed rows are damaged at row %d (its temporary file)", s.rows))
	}
	s.rowsIn.Discard(n)
	if _, err := io.ReadFull(s.events, s.evBuf[:]); err != nil {
		return s.fail(fmt.Errorf("generators: reading the event log's row entries: %w", err))
	}
	v := binary.LittleEndian.Uint64(s.evBuf[:])
	t := &row.Truth
	if v&firstRow != 0 {
		t.Event, t.Copies = uint64(s.next), uint32(v&^firstRow)
		if t.Copies > 1 {
			s.pending[uint64(s.rows)] = logPending{event: s.next, copies: t.Copies, seen: 1}
		}
		s.next++
	} else {
		p, ok := s.pending[v]
		if !ok {
			return s.fail(fmt.Errorf("generators: the event log's row entries are damaged at row %d (its temporary file)", s.rows))
		}
		t.Event, t.Copies, t.Copy = uint64(p.event), p.copies, p.seen
		if p.seen++; p.seen >= p.copies {
			delete(s.pending, v)
		} else {
			s.pending[v] = p
		}
	}
	if s.x.form == formOther {
		row.EventNum = int64(t.Event)
	}
	t.BadClock = row.EventTime-row.Arrival > s.tol
	s.rows++
	return true
}

func (s *LogSource) fail(err error) bool {
	s.err, s.done = err, true
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
	*s = *fresh
	return nil
}

// Close ends the source; the index's files stay open for others.
func (s *LogSource) Close() error { s.done = true; return nil }

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

// rowTable writes 8-byte entries given in any row order to a file in
// row order, in bounded memory: the rows are split in buckets of at most
// budget/8 rows, each written to its own temporary file as (row, entry)
// pairs, then each bucket is read into an array and written out in
// order. A log whose rows fit in one bucket never leaves memory. A row
// given no entry has singleEntry: the rows of ids seen once, most rows
// of most logs, are never written to a bucket.
type rowTable struct {
	rows, per int64
	mem       []uint64
	buckets   []*os.File
	ws        []*bufio.Writer
	scratch   [16]byte
}

func newRowTable(rows int64, budget int) (*rowTable, error) {
	t := &rowTable{rows: rows, per: max(int64(budget)/8, 1)}
	if rows <= t.per {
		t.mem = make([]uint64, rows)
		fillSingle(t.mem)
		return t, nil
	}
	nb := (rows + t.per - 1) / t.per
	buf := max(min(1<<16, budget/int(nb)), 4<<10)
	for range nb {
		f, err := os.CreateTemp("", "dedupsim-eventlog-*.rows")
		if err != nil {
			t.close()
			return nil, fmt.Errorf("event log: a temporary file for the rows' events: %w", err)
		}
		os.Remove(f.Name())
		t.buckets = append(t.buckets, f)
		t.ws = append(t.ws, bufio.NewWriterSize(f, buf))
	}
	return t, nil
}

func (t *rowTable) put(row, v uint64) error {
	if t.mem != nil {
		t.mem[row] = v
		return nil
	}
	b := t.scratch[:]
	binary.LittleEndian.PutUint64(b, row)
	binary.LittleEndian.PutUint64(b[8:], v)
	_, err := t.ws[row/uint64(t.per)].Write(b)
	return err
}

// finish writes the entries in row order to a new unlinked temporary
// file and returns it.
func (t *rowTable) finish() (*os.File, error) {
	out, err := os.CreateTemp("", "dedupsim-eventlog-*.events")
	if err != nil {
		return nil, fmt.Errorf("event log: a temporary file for the rows' events: %w", err)
	}
	// Unlinked at once: the file lives while the index holds it open,
	// and nothing is left behind however the process ends (where the
	// system allows removing an open file).
	os.Remove(out.Name())
	w := bufio.NewWriterSize(out, 1<<16)
	err = t.writeTo(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("event log: writing the rows' events to a temporary file: %w", err)
	}
	return out, nil
}

func (t *rowTable) writeTo(w *bufio.Writer) error {
	var b [8]byte
	if t.mem != nil {
		for _, v := range t.mem {
			binary.LittleEndian.PutUint64(b[:], v)
			w.Write(b[:])
		}
		return nil
	}
	arr := make([]uint64, t.per)
	r := bufio.NewReaderSize(nil, 1<<16)
	for i, f := range t.buckets {
		if err := t.ws[i].Flush(); err != nil {
			return err
		}
		base := int64(i) * t.per
		n := min(t.per, t.rows-base)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		r.Reset(f)
		fillSingle(arr[:n])
		var p [16]byte
		for {
			if _, err := io.ReadFull(r, p[:]); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
			arr[int64(binary.LittleEndian.Uint64(p[:]))-base] = binary.LittleEndian.Uint64(p[8:])
		}
		for _, v := range arr[:n] {
			binary.LittleEndian.PutUint64(b[:], v)
			w.Write(b[:])
		}
		f.Close()
		t.buckets[i] = nil
	}
	return nil
}

// singleEntry is the entry of an id's only row.
const singleEntry = firstRow | 1

func fillSingle(a []uint64) {
	for i := range a {
		a[i] = singleEntry
	}
}

func (t *rowTable) close() {
	for _, f := range t.buckets {
		if f != nil {
			f.Close()
		}
	}
	t.buckets, t.mem = nil, nil
}
