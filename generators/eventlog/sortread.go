package eventlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// sorted is a Reader's state when Spec.Sort asks for the rows in arrival
// order: on the first Next it reads every row (checked as ever, but in
// any order) into a Sorter keyed by (arrival, place in the files), so
// that rows with equal arrivals keep their order in the files; then Next
// takes them from the merge.
type sorted struct {
	m      *Merged
	runs   int
	seq    uint64
	buf    []byte
	filled bool
}

// Spilled returns the number of sorted runs a reader with Spec.Sort
// wrote to disk (0 when the log fit in its budget, or without Sort).
func (r *Reader) Spilled() int {
	if r.sort == nil {
		return 0
	}
	return r.sort.runs
}

// fillSorted reads the whole log into the sorter and starts the merge.
func (r *Reader) fillSorted() error {
	s := r.sort
	s.filled = true
	srt := NewSorter(r.spec.SortBudget)
	n := int64(0)
	for {
		err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			srt.Close()
			return err
		}
		if err := srt.Add(r.encodeSorted()); err != nil {
			srt.Close()
			return r.rowErr(r.spec.ArrivalTime, "cannot sort the row: "+err.Error())
		}
		n++
	}
	if n == 0 {
		srt.Close()
		return &Error{File: r.spec.Path, Row: -1, Msg: "the log has no rows"}
	}
	s.runs = srt.Spilled()
	// Sorted owns the sorter from here, and closes it on failure.
	m, err := srt.Sorted()
	if err != nil {
		return fmt.Errorf("event log %s: sorting by arrival: %w", r.spec.Path, err)
	}
	s.m = m
	r.rows = 0
	return nil
}

// encodeSorted encodes the current record: its arrival (sign flipped,
// big-endian) and place (big-endian), which order it, then its file,
// row, event time, id parts, extras and optional columns.
func (r *Reader) encodeSorted() []byte {
	s, rec := r.sort, &r.rec
	b := binary.BigEndian.AppendUint64(s.buf[:0], uint64(rec.Arrival)^1<<63)
	b = binary.BigEndian.AppendUint64(b, s.seq)
	s.seq++
	b = binary.AppendUvarint(b, uint64(rec.FileIndex))
	b = binary.AppendVarint(b, rec.Row)
	line := byte(0)
	if rec.Line {
		line = 1
	}
	b = append(b, line)
	b = binary.AppendVarint(b, rec.EventTime)
	for _, p := range rec.IDParts {
		b = appendBytes(b, p)
	}
	for _, x := range rec.Extra {
		b = appendBytes(b, x)
	}
	for i, o := range rec.Optional {
		flags := byte(0)
		if rec.Has[i] {
			flags |= 1
		}
		if r.optIsTS[i] {
			flags |= 2
		}
		b = append(b, flags)
		b = binary.AppendVarint(b, r.optTS[i])
		b = appendBytes(b, o)
	}
	s.buf = b
	return b
}

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

var errSortedRecord = errors.New("a damaged record in the sort's temporary files")

// decodeSorted sets the record from an encoded one. Its slices point
// into b, valid until the next merge step.
func (r *Reader) decodeSorted(b []byte) error {
	rec := &r.rec
	d := sortDecoder{b: b}
	rec.Arrival = int64(d.u64() ^ 1<<63)
	d.u64()
	fi := d.uvarint()
	if fi >= uint64(len(r.files)) {
		return errSortedRecord
	}
	rec.FileIndex, rec.File = int(fi), r.files[fi]
	rec.Row = d.varint()
	rec.Line = d.byte() == 1
	rec.EventTime = d.varint()
	nid := len(r.spec.ID)
	rec.ID = rec.ID[:0]
	for i := range nid {
		p := d.bytes()
		rec.IDParts[i] = p
		if nid > 1 {
			rec.ID = binary.AppendUvarint(rec.ID, uint64(len(p)))
		}
		rec.ID = append(rec.ID, p...)
	}
	for i := range rec.Extra {
		rec.Extra[i] = d.bytes()
	}
	for i := range rec.Optional {
		flags := d.byte()
		rec.Has[i], r.optIsTS[i] = flags&1 != 0, flags&2 != 0
		r.optTS[i] = d.varint()
		rec.Optional[i] = d.bytes()
	}
	if d.bad || len(d.b) != 0 {
		return errSortedRecord
	}
	return nil
}

// sortDecoder reads an encoded record; bad is set when it runs short.
type sortDecoder struct {
	b   []byte
	bad bool
}

func (d *sortDecoder) u64() uint64 {
	if len(d.b) < 8 {
		d.bad, d.b = true, nil
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *sortDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *sortDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *sortDecoder) byte() byte {
	if len(d.b) < 1 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *sortDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// nextSorted is Next for a reader with Spec.Sort.
func (r *Reader) nextSorted() error {
	s := r.sort
	if !s.filled {
		if err := r.fillSorted(); err != nil {
			return err
		}
	}
	if !s.m.Next() {
		if err := s.m.Err(); err != nil {
			return fmt.Errorf("event log %s: sorting by arrival: %w", r.spec.Path, err)
		}
		return io.EOF
	}
	if err := r.decodeSorted(s.m.Record()); err != nil {
		return fmt.Errorf("event log %s: %w", r.spec.Path, err)
	}
	r.rows++
	return nil
}
