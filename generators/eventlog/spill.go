package eventlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// DefaultSortBudget is the memory a Sorter holds records in before it
// spills them to disk, when none is given: 64 MiB.
const DefaultSortBudget = 64 << 20

// minSortBudget is the smallest budget a Sorter takes (tests use small
// ones to make it spill).
const minSortBudget = 1 << 10

// maxFanIn is the most runs merged at once; more are merged in rounds.
const maxFanIn = 64

// Sorter sorts records (byte strings, in bytes.Compare order) in
// bounded memory: it holds records up to its budget, then sorts them and
// writes them to a run file, and Sorted merges the runs. Run files are
// created in the OS temporary folder and removed from it at once (the
// sorter reads them through its open handles), so nothing is left behind
// however the process ends. Records that compare equal are equal bytes,
// so the order is total. It is not safe for concurrent use.
type Sorter struct {
	budget int
	arena  []byte
	recs   []sortRec
	tmp    []sortRec
	runs   []*os.File
	w      *bufio.Writer
	err    error
}

// sortRec is a record held in memory: the first 8 bytes of the record
// (big-endian, zero-padded) decide most comparisons without touching the
// arena.
type sortRec struct {
	prefix   uint64
	off, len uint32
}

// NewSorter returns a sorter that holds at most budget bytes of records
// (and their bookkeeping) in memory; 0 is DefaultSortBudget.
func NewSorter(budget int) *Sorter {
	if budget <= 0 {
		budget = DefaultSortBudget
	}
	budget = max(budget, minSortBudget)
	return &Sorter{budget: budget}
}

// Spilled returns the number of runs written to disk so far.
func (s *Sorter) Spilled() int { return len(s.runs) }

// Add adds a copy of rec.
func (s *Sorter) Add(rec []byte) error {
	if s.err != nil {
		return s.err
	}
	if len(rec) > s.budget/4 {
		return fmt.Errorf("sort: a record of %d bytes, more than a quarter of the budget (%d bytes)", len(rec), s.budget)
	}
	if len(s.arena)+len(rec)+slotBytes*(len(s.recs)+1) > s.budget && len(s.recs) > 0 {
		if err := s.spill(); err != nil {
			s.err = err
			return err
		}
	}
	if s.arena == nil {
		// The budget is the arena and the records' slots (16 bytes
		// each, and as many for the sort's scratch): allocated whole,
		// their pages are touched only as they fill.
		s.arena = make([]byte, 0, s.budget/2)
		s.recs = make([]sortRec, 0, s.budget/2/slotBytes)
	}
	s.recs = append(s.recs, sortRec{prefix: prefix8(rec), off: uint32(len(s.arena)), len: uint32(len(rec))})
	s.arena = append(s.arena, rec...)
	return nil
}

func prefix8(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var p [8]byte
	copy(p[:], b)
	return binary.BigEndian.Uint64(p[:])
}

func (s *Sorter) bytes(r sortRec) []byte { return s.arena[r.off : r.off+r.len] }

// slotBytes is the memory of a record's slot: its sortRec, and one in
// the radix sort's scratch.
const slotBytes = 32

// sortMemory sorts the records held in memory: a least-significant-digit
// radix sort of their 8-byte prefixes (stable, skipping the bytes all
// prefixes share), then a comparison sort of each run of equal prefixes
// (already in the order added, which is often their order).
func (s *Sorter) sortMemory() {
	recs := s.recs
	if len(recs) < 2 {
		return
	}
	if cap(s.tmp) < len(recs) {
		s.tmp = make([]sortRec, len(recs))
	}
	tmp := s.tmp[:len(recs)]
	for shift := 0; shift < 64; shift += 8 {
		var count [256]int
		for _, r := range recs {
			count[byte(r.prefix>>shift)]++
		}
		if count[byte(recs[0].prefix>>shift)] == len(recs) {
			continue
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, r := range recs {
			b := byte(r.prefix >> shift)
			tmp[count[b]] = r
			count[b]++
		}
		recs, tmp = tmp, recs
	}
	if &recs[0] != &s.recs[0] {
		copy(s.recs, recs)
	}
	recs = s.recs
	cmp := func(a, b sortRec) int { return bytes.Compare(s.bytes(a), s.bytes(b)) }
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].prefix == recs[i].prefix {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(recs[i:j], cmp)
		}
		i = j
	}
}

// spill sorts the records in memory and writes them to a new run.
func (s *Sorter) spill() error {
	s.sortMemory()
	f, err := tempRun()
	if err != nil {
		return err
	}
	if s.w == nil {
		s.w = bufio.NewWriterSize(f, 1<<16)
	}
	w := s.w
	w.Reset(f)
	var lb [binary.MaxVarintLen64]byte
	for _, r := range s.recs {
		w.Write(lb[:binary.PutUvarint(lb[:], uint64(r.len))])
		w.Write(s.bytes(r))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("sort: writing a run to a temporary file: %w", err)
	}
	s.runs = append(s.runs, f)
	s.arena, s.recs = s.arena[:0], s.recs[:0]
	return nil
}

// tempRun creates a temporary file and removes its name at once.
func tempRun() (*os.File, error) {
	f, err := os.CreateTemp("", "dedupsim-sort-*.run")
	if err != nil {
		return nil, fmt.Errorf("sort: a temporary file: %w", err)
	}
	os.Remove(f.Name())
	return f, nil
}

// Sorted returns the records in order. The sorter must not be used
// after; closing the Merged closes it.
func (s *Sorter) Sorted() (*Merged, error) {
	if s.err != nil {
		s.Close()
		return nil, s.err
	}
	s.sortMemory()
	// Merge in rounds while there are too many runs to open at once.
	for len(s.runs) >= maxFanIn {
		m := newMerged(maxFanIn, s.budget)
		for _, f := range s.runs[:maxFanIn] {
			if err := m.addRun(f); err != nil {
				m.Close()
				s.Close()
				return nil, err
			}
		}
		rest := s.runs[maxFanIn:]
		s.runs = nil
		f, err := m.writeRun()
		m.Close()
		if err != nil {
			for _, f := range rest {
				f.Close()
			}
			s.Close()
			return nil, err
		}
		s.runs = append(rest, f)
	}
	m := newMerged(len(s.runs), s.budget)
	runs := s.runs
	s.runs = nil
	for i, f := range runs {
		if err := m.addRun(f); err != nil {
			for _, f := range runs[i+1:] {
				f.Close()
			}
			m.Close()
			s.Close()
			return nil, err
		}
	}
	if len(s.recs) > 0 {
		m.srcs = append(m.srcs, &mergeSrc{mem: s})
	}
	if err := m.start(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Close releases the sorter's runs and memory.
func (s *Sorter) Close() error {
	for _, f := range s.runs {
		f.Close()
	}
	s.runs, s.arena, s.recs, s.tmp = nil, nil, nil, nil
	return nil
}

// Merged reads a Sorter's records in order: Next until false, then Err,
// then Close.
type Merged struct {
	srcs []*mergeSrc
	// heap holds the indices of the sources with a record, the least
	// first.
	heap []int
	cur  []byte
	err  error
	// started: the first Next takes the least record without advancing.
	started bool
	// bufSize is the size of each run's read buffer.
	bufSize int
}

// newMerged returns a merge of n runs whose read buffers share budget.
func newMerged(n, budget int) *Merged {
	return &Merged{bufSize: max(min(1<<16, budget/max(n, 1)), 4<<10)}
}

// mergeSrc is a run being read, or the sorter's memory.
type mergeSrc struct {
	f   *os.File
	r   *bufio.Reader
	buf []byte
	mem *Sorter
	i   int
	rec []byte
}

func (m *Merged) addRun(f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("sort: rewinding a run: %w", err)
	}
	m.srcs = append(m.srcs, &mergeSrc{f: f, r: bufio.NewReaderSize(f, m.bufSize)})
	return nil
}

// advance reads the source's next record into rec; false at its end.
func (src *mergeSrc) advance() (bool, error) {
	if src.mem != nil {
		if src.i >= len(src.mem.recs) {
			return false, nil
		}
		src.rec = src.mem.bytes(src.mem.recs[src.i])
		src.i++
		return true, nil
	}
	n, err := binary.ReadUvarint(src.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sort: reading a run: %w", err)
	}
	if uint64(cap(src.buf)) < n {
		src.buf = make([]byte, n)
	}
	src.buf = src.buf[:n]
	if _, err := io.ReadFull(src.r, src.buf); err != nil {
		return false, fmt.Errorf("sort: reading a run: %w", err)
	}
	src.rec = src.buf
	return true, nil
}

func (m *Merged) less(i, j int) bool {
	c := bytes.Compare(m.srcs[i].rec, m.srcs[j].rec)
	return c < 0 || c == 0 && i < j
}

func (m *Merged) down(k int) {
	h := m.heap
	for {
		l := 2*k + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			c = r
		}
		if !m.less(h[c], h[k]) {
			return
		}
		h[k], h[c] = h[c], h[k]
		k = c
	}
}

// start reads each source's first record and builds the heap.
func (m *Merged) start() error {
	for i, src := range m.srcs {
		ok, err := src.advance()
		if err != nil {
			return err
		}
		if ok {
			m.heap = append(m.heap, i)
		}
	}
	for k := len(m.heap)/2 - 1; k >= 0; k-- {
		m.down(k)
	}
	return nil
}

// Next moves to the next record and reports whether there was one.
func (m *Merged) Next() bool {
	if m.err != nil || len(m.heap) == 0 {
		return false
	}
	if m.started {
		top := m.srcs[m.heap[0]]
		ok, err := top.advance()
		if err != nil {
			m.err = err
			return false
		}
		if !ok {
			m.heap[0] = m.heap[len(m.heap)-1]
			m.heap = m.heap[:len(m.heap)-1]
			if len(m.heap) == 0 {
				return false
			}
		}
		m.down(0)
	}
	m.started = true
	m.cur = m.srcs[m.heap[0]].rec
	return true
}

// Record returns the current record, valid until the next call of Next.
func (m *Merged) Record() []byte { return m.cur }

// Err returns the error that ended Next, or nil.
func (m *Merged) Err() error { return m.err }

// Close closes the runs.
func (m *Merged) Close() error {
	for _, src := range m.srcs {
		if src.f != nil {
			src.f.Close()
		}
		if src.mem != nil {
			src.mem.Close()
		}
	}
	m.srcs, m.heap = nil, nil
	return nil
}

// writeRun writes the rest of m's records to a new run.
func (m *Merged) writeRun() (*os.File, error) {
	if err := m.start(); err != nil {
		return nil, err
	}
	f, err := tempRun()
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var lb [binary.MaxVarintLen64]byte
	for m.Next() {
		rec := m.Record()
		w.Write(lb[:binary.PutUvarint(lb[:], uint64(len(rec)))])
		w.Write(rec)
	}
	err = m.Err()
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Close()
		return nil, errors.Join(errors.New("sort: merging runs"), err)
	}
	return f, nil
}
