package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/spark/replay"
)

// The event times Spark's TimestampType holds: from 0001-01-01T00:00:00Z
// to 9999-12-31T23:59:59.999999Z, in microseconds since the epoch.
var (
	minSparkMicros = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxSparkMicros = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

// traceBatch is the rows of one addData step, with their values typed for
// the batch file.
type traceBatch struct {
	*replay.RowSet
	cells [][]cell
}

func (b *traceBatch) cell(i, c int, dst *cell) { *dst = b.cells[i][c] }

// traceSource yields a trace's batches: one per addData step; a restart
// step is a fault before the next batch.
type traceSource struct {
	batches []traceBatch
	faults  []faultKind
	k       int
}

func (s *traceSource) next() (batch, faultKind, int64, bool, error) {
	if s.k >= len(s.batches) {
		return nil, noFault, 0, false, nil
	}
	k := s.k
	s.k++
	return &s.batches[k], s.faults[k], int64(k) * 1000, true, nil
}

// analyzeTrace checks that Spark can be driven through t with files and
// types its rows: it returns the exported columns (the trace's, in order
// of first appearance) and the source of its batches. A trace that cannot
// be exported is an error saying why, in one line.
func analyzeTrace(t *replay.Trace) ([]Column, *traceSource, error) {
	if t.ManualClock {
		return nil, nil, errors.New("not exportable: a manual-clock trace fires triggers one by one, which a file source and processAllAvailable cannot reproduce (export traces without \"manualClock\")")
	}
	schema := t.Plan.Schema
	cols := make([]Column, len(schema))
	lower := map[string]string{}
	for i, c := range schema {
		if !safeColumn(c.Name) {
			return nil, nil, fmt.Errorf("not exportable: column %s: an export names columns with letters, digits and _ (not starting with a digit)", fileio.Quote(c.Name))
		}
		if other, ok := lower[strings.ToLower(c.Name)]; ok {
			return nil, nil, fmt.Errorf("not exportable: columns %s and %s differ only in case; Spark's file source refuses such a schema ([COLUMN_ALREADY_EXISTS]) unless spark.sql.caseSensitive is on, which changes how the dedup keys resolve", other, c.Name)
		}
		lower[strings.ToLower(c.Name)] = c.Name
		cols[i] = Column{Name: c.Name}
	}
	src := &traceSource{}
	pending := noFault
	var typer columnTyper
	typer.init(cols, t.EventTimeColumn)
	for si, st := range t.Steps {
		if st.Restart {
			if len(src.batches) > 0 {
				pending = restartFault
			}
			continue
		}
		b, err := typer.batch(si, st.Rows)
		if err != nil {
			return nil, nil, fmt.Errorf("not exportable: %w", err)
		}
		src.batches = append(src.batches, b)
		src.faults = append(src.faults, pending)
		pending = noFault
	}
	if len(src.batches) == 0 {
		return nil, nil, errors.New("not exportable: the trace adds no data, so Spark would run no batch")
	}
	if err := typer.finish(); err != nil {
		return nil, nil, fmt.Errorf("not exportable: %w", err)
	}
	return typer.cols, src, nil
}

// valueKind is the JSON kind of a trace value.
type valueKind int

const (
	kNull valueKind = iota
	kString
	kBool
	kInt    // a number with a whole value that fits a long
	kNumber // any other number
)

var kindNames = [...]string{"null", "string", "boolean", "whole number", "number"}

// columnTyper types the columns of a trace from its values: a column of
// strings is a string, of booleans a boolean, of whole numbers that fit a
// long a long, of numbers a double (when distinct values stay distinct
// doubles: dedupsim compares numbers by exact value, Spark a double by
// its bits); the event-time column a timestamp. A column that mixes kinds
// (1 and "1") cannot be one Spark column.
type columnTyper struct {
	cols []Column
	et   int
	// kinds[c] is the set of kinds column c holds (bit k for kind k).
	kinds []uint8
	// first[c][k] is where the first value of kind k of column c is, for
	// messages.
	first [][5]string
	// doubles[c] maps the doubles of a number column to the exact value
	// they stand for, and collision[c] names the first two different
	// numbers that are one double.
	doubles   []map[float64]number
	collision []string
}

func (y *columnTyper) init(cols []Column, et int) {
	y.cols, y.et = cols, et
	y.kinds = make([]uint8, len(cols))
	y.first = make([][5]string, len(cols))
	y.doubles = make([]map[float64]number, len(cols))
	y.collision = make([]string, len(cols))
	if et >= 0 {
		cols[et].Type = Timestamp
	}
}

// batch reads the rows of one addData step into typed cells: a string's
// bytes, a whole number as a long and every number also as a double,
// booleans as 0 or 1; the column types are decided by finish.
func (y *columnTyper) batch(si int, rows *replay.RowSet) (traceBatch, error) {
	b := traceBatch{RowSet: rows, cells: make([][]cell, rows.Len())}
	for i, raw := range rows.Raw {
		cells := make([]cell, len(y.cols))
		for c := range cells {
			cells[c].null = true
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if _, err := dec.Token(); err != nil { // {
			return b, fmt.Errorf("steps[%d].addData[%d]: %v", si, i, err)
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return b, fmt.Errorf("steps[%d].addData[%d]: %v", si, i, err)
			}
			vt, err := dec.Token()
			if err != nil {
				return b, fmt.Errorf("steps[%d].addData[%d]: %v", si, i, err)
			}
			c := y.column(kt.(string))
			where := fmt.Sprintf("steps[%d].addData[%d].%s", si, i, kt)
			if c == y.et {
				us := rows.EventTime(i, c)
				if us < minSparkMicros || us > maxSparkMicros {
					return b, fmt.Errorf("%s: event time %s is outside Spark's timestamps (years 1 to 9999)", where, fileio.Quote(fmt.Sprint(vt)))
				}
				cells[c] = cell{i: us}
				continue
			}
			if err := y.value(c, vt, where, &cells[c]); err != nil {
				return b, err
			}
		}
		for c := range cells {
			if cells[c].null && c != y.et {
				y.cols[c].Nullable = true
			}
		}
		b.cells[i] = cells
	}
	return b, nil
}

// column returns the index of the column named name.
func (y *columnTyper) column(name string) int {
	for c := range y.cols {
		if y.cols[c].Name == name {
			return c
		}
	}
	return -1 // not reached: every key of a row is a column of the trace
}

// value reads one non-event-time value into dst and notes its kind.
func (y *columnTyper) value(c int, v any, where string, dst *cell) error {
	k := kNull
	switch x := v.(type) {
	case nil:
		y.cols[c].Nullable = true
	case string:
		k = kString
		*dst = cell{s: []byte(x)}
	case bool:
		k = kBool
		*dst = cell{}
		if x {
			dst.i = 1
		}
	case json.Number:
		r, err := exactNumber(string(x))
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		f, _ := r.Float64()
		if math.IsInf(f, 0) {
			return fmt.Errorf("%s: %s is beyond a double's range", where, fileio.Quote(string(x)))
		}
		if f == 0 {
			f = 0 // -0 and 0 are one value, as dedupsim compares them
		}
		*dst = cell{f: f}
		k = kNumber
		if r.IsInt() && r.Num().IsInt64() {
			k = kInt
			dst.i = r.Num().Int64()
		}
		if y.doubles[c] == nil {
			y.doubles[c] = map[float64]number{}
		}
		n := number{exact: r.RatString(), text: string(x)}
		if prev, ok := y.doubles[c][f]; ok && prev.exact != n.exact && y.collision[c] == "" {
			y.collision[c] = where + ": " + prev.text + " and " + n.text
		} else if !ok {
			y.doubles[c][f] = n
		}
	}
	if k != kNull {
		if y.kinds[c]&(1<<k) == 0 {
			y.first[c][k] = where
		}
		y.kinds[c] |= 1 << k
	}
	return nil
}

// number is a number of a trace: its exact value and its text.
type number struct{ exact, text string }

// finish decides the type of every column from the kinds it holds.
func (y *columnTyper) finish() error {
	for c := range y.cols {
		if c == y.et {
			continue
		}
		ks := y.kinds[c]
		switch {
		case ks == 0 || ks == 1<<kString:
			y.cols[c].Type = String
		case ks == 1<<kBool:
			y.cols[c].Type = Boolean
		case ks == 1<<kInt:
			y.cols[c].Type = Long
		case ks&^(1<<kInt|1<<kNumber) == 0:
			y.cols[c].Type = Double
			if what := y.collision[c]; what != "" {
				return fmt.Errorf("column %s: two different numbers are one double (%s): Spark would take them for one key", y.cols[c].Name, what)
			}
		default:
			var seen []string
			for k := kString; k <= kNumber; k++ {
				if ks&(1<<k) != 0 {
					seen = append(seen, kindNames[k]+" at "+y.first[c][k])
				}
			}
			return fmt.Errorf("column %s holds values of several kinds (%s); a Spark column has one type", y.cols[c].Name, strings.Join(seen, ", "))
		}
	}
	return nil
}

// exactNumber parses a JSON number exactly. Its exponent is bounded first,
// so that a hostile 1e999999999 costs nothing.
func exactNumber(s string) (*big.Rat, error) {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil || e > 400 || e < -400 {
			return nil, fmt.Errorf("%s is beyond a double's range", fileio.Quote(s))
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%s is not a number", fileio.Quote(s))
	}
	return r, nil
}
