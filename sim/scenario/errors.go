package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// Error is one problem of a scenario file. Its text is one line:
//
//	scenario FILE: KEY.PATH: what was expected, got VALUE
//
// A problem that no key path locates (a YAML syntax error, a document that
// is not a mapping) names the line instead: "scenario FILE: line N: ...".
// Load, Parse and Validate return every problem found, joined with
// errors.Join; errors.As finds the first, and an Unwrap() []error on the
// joined error lists them all.
type Error struct {
	// File is the scenario file.
	File string
	// Path is the key path, such as "workload.retries.delay.p99" or
	// "queries[1].query"; empty when Line locates the problem.
	Path string
	// Line is the line of the problem in the file when known, else 0.
	Line int
	// Msg says what was expected and what was found.
	Msg string
}

// Error returns the one-line form of e. Whatever the file name, key path
// and message hold, the line is printable: control characters are escaped
// and long quoted values cut (see fileio.Clean).
func (e *Error) Error() string {
	var s string
	switch {
	case e.Path != "":
		s = fmt.Sprintf("scenario %s: %s: %s", e.File, e.Path, e.Msg)
	case e.Line > 0:
		s = fmt.Sprintf("scenario %s: line %d: %s", e.File, e.Line, e.Msg)
	default:
		s = fmt.Sprintf("scenario %s: %s", e.File, e.Msg)
	}
	return fileio.Clean(s)
}

// problems collects the Errors of one scenario file.
type problems struct {
	file string
	errs []error
	// broken holds the key paths that failed to decode, so that a check
	// does not report the same key again from its left-over value.
	broken map[string]bool
	// shapeOnly is set when the document's top mapping repeats a key: the
	// YAML decoder would keep nothing of it, so only the problems of the
	// document's shape (keys, mappings and lists) are reported.
	shapeOnly bool
	// lines maps the key paths present in the file to their positions,
	// to report problems in the order of the file.
	lines map[string]pos
}

// pos is a position in the scenario file.
type pos struct{ line, column int }

// before orders positions.
func (a pos) before(b pos) int {
	if a.line != b.line {
		return a.line - b.line
	}
	return a.column - b.column
}

// add records a problem of a value at path, unless path or an ancestor is
// already reported broken (a value of the wrong shape is reported once,
// not again by every check that reads it).
func (p *problems) add(path, format string, args ...any) {
	if p.shapeOnly || p.isBroken(path) {
		return
	}
	p.errs = append(p.errs, &Error{File: p.file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// addShape records a problem of the document's shape at path (a mapping
// or a list where it does not belong), then marks path broken.
func (p *problems) addShape(path, format string, args ...any) {
	if !p.isBroken(path) {
		p.errs = append(p.errs, &Error{File: p.file, Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	p.breakPath(path)
}

// addLine records a problem that a line locates.
func (p *problems) addLine(path string, line int, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// breakPath records a decoding failure at path (see problems.broken).
func (p *problems) breakPath(path string) {
	if p.broken == nil {
		p.broken = map[string]bool{}
	}
	p.broken[path] = true
}

// isBroken reports whether path or one of its ancestors failed to decode.
func (p *problems) isBroken(path string) bool {
	for ; path != ""; path = parent(path) {
		if p.broken[path] {
			return true
		}
	}
	return false
}

// parent returns the key path path is directly under ("" at the top).
func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// sortByLine orders the problems as the keys they concern appear in the
// file (a path absent from the file at its nearest ancestor's place);
// problems of the same place keep the order they were found in.
func (p *problems) sortByLine() {
	at := func(err error) pos {
		var e *Error
		if !errors.As(err, &e) {
			return pos{}
		}
		if e.Line > 0 {
			return pos{e.Line, 0}
		}
		for path := e.Path; path != ""; path = parent(path) {
			if l, ok := p.lines[path]; ok {
				return l
			}
		}
		return pos{}
	}
	slices.SortStableFunc(p.errs, func(a, b error) int { return at(a).before(at(b)) })
}

// err joins the problems, or returns nil when there are none.
func (p *problems) err() error { return errors.Join(p.errs...) }

// index returns path[i].
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// key returns path.k, or k at the top level.
func key(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
