package eventlog

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Format is the format of a log file.
type Format string

// The log formats. FormatAuto detects each file's from its first bytes
// (after gzip): "PAR1" is Parquet, '{' JSON lines, anything else CSV.
const (
	FormatAuto    Format = ""
	FormatCSV     Format = "csv"
	FormatJSONL   Format = "jsonl"
	FormatParquet Format = "parquet"
)

// Spec says where a log is and which columns hold what.
type Spec struct {
	// Path is a file, a folder (its files, by name, skipping names that
	// start with '.' or '_'), or a glob pattern (its matches, by name).
	Path string
	// ID names the id column, or several for a composite key.
	ID []string
	// EventTime and ArrivalTime name the time columns.
	EventTime, ArrivalTime string
	// TimeUnit is how both time columns are written; UnitAuto detects
	// each column's unit from the first row (Reader.Units reports it).
	TimeUnit TimeUnit
	// Extra names other columns to read (Record.Extra, in this order).
	// Every file must have them: Columns tells which the first file has.
	Extra []string
	// Optional names columns read when a file (or, for JSON lines, a
	// row) has them: Record.Optional and Record.Has, in this order.
	Optional []string
	// Format forces the format of every file; FormatAuto detects it.
	Format Format
	// Sort reads the rows in arrival order whatever their order in the
	// files (rows with equal arrivals in their order in the files), by an
	// external sort in SortBudget bytes of memory (0: DefaultSortBudget),
	// spilling sorted runs to temporary files.
	Sort       bool
	SortBudget int
}

// Check returns the first problem of s, or nil.
func (s *Spec) Check() error {
	switch {
	case s.Path == "":
		return errors.New("no log file given")
	case len(s.ID) == 0:
		return errors.New("no id column given")
	case s.EventTime == "":
		return errors.New("no event-time column given")
	case s.ArrivalTime == "":
		return errors.New("no arrival-time column given")
	}
	for _, c := range append(append(append([]string{}, s.ID...), s.Extra...), s.Optional...) {
		if c == "" {
			return errors.New("an empty column name")
		}
	}
	switch s.TimeUnit {
	case UnitAuto, UnitRFC3339, UnitSeconds, UnitMillis, UnitMicros:
	default:
		return fmt.Errorf("unknown time unit %q", s.TimeUnit)
	}
	switch s.Format {
	case FormatAuto, FormatCSV, FormatJSONL, FormatParquet:
	default:
		return fmt.Errorf("unknown format %q", s.Format)
	}
	return nil
}

// Error is a problem with a log: the file, the row (a line number for
// CSV and JSON lines, a row index from 0 for Parquet; 0 and no Line
// when it is about the whole file) and the column, when known.
type Error struct {
	File string
	// Line is set when Row is a line number (CSV, JSON lines).
	Line bool
	// Row is the line number (from 1) or Parquet row index (from 0);
	// -1 when the problem is not about one row.
	Row    int64
	Column string
	Msg    string
}

// Error renders the problem on one line: "events.csv: line 12: column
// event_time: ...".
func (e *Error) Error() string {
	s := e.File
	switch {
	case e.Row < 0:
	case e.Line:
		s += ": line " + strconv.FormatInt(e.Row, 10)
	default:
		s += ": row " + strconv.FormatInt(e.Row, 10)
	}
	if e.Column != "" {
		s += ": column " + show(e.Column)
	}
	return s + ": " + e.Msg
}

// maxShow is the longest value a message echoes whole.
const maxShow = 60

// show renders a value for a message: as written when it is plain
// (printable, no space or quote), else quoted; long values are cut.
func show(s string) string {
	cut := false
	if utf8.RuneCountInString(s) > maxShow {
		r := []rune(s)
		s, cut = string(r[:maxShow]), true
	}
	plain := s != ""
	for _, r := range s {
		if r == utf8.RuneError || r == ' ' || r == '"' || r == '\'' || r == '\\' || !unicode.IsPrint(r) {
			plain = false
		}
	}
	if !plain {
		s = strconv.Quote(s)
	}
	if cut {
		s += "..."
	}
	return s
}
