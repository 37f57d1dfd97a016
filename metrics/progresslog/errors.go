package progresslog

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Want is what an input that holds no Spark progress is told it should
// have been. Every such rejection reads
//
//	SOURCE: line N: want Spark StreamingQueryProgress JSON (...), got WHAT
const Want = "want Spark StreamingQueryProgress JSON (JSON lines, a JSON array, pretty JSON or a driver log with 'Streaming query made progress')"

// MaxEcho is how many characters of the input an error message echoes.
const MaxEcho = 80

// Error is a problem with a progress log. Its text is one printable line:
//
//	SOURCE: line N: MESSAGE
//
// where MESSAGE is Want followed by what was found, or says what is wrong
// with one record ("stateOperators[0].numRowsTotal: want an integer, got
// \"12k\""), and echoes at most MaxEcho characters of the input, with
// control characters escaped.
type Error struct {
	// Source names the input, such as its file name.
	Source string
	// Line is the line of the input the problem is on (for a problem with
	// a field, the line where its record starts).
	Line int
	// Msg says what was expected and what was found.
	Msg string
}

// Error returns the one-line form of e.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: line %d: %s", printable(e.Source), e.Line, e.Msg)
}

// quote renders text of the input for a message: at most MaxEcho
// characters of it in double quotes, escaped as strconv.Quote escapes
// (control characters, invalid UTF-8, quotes), then "..." when it was cut.
func quote(s string) string {
	i, k := 0, 0
	for ; k < MaxEcho && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:i]) + "..."
}

// show renders JSON text of the input for a message: as is when it is
// short and printable (JSON escapes control characters in strings, so a
// scalar usually is), else as quote renders it.
func show(s string) string {
	if utf8.RuneCountInString(s) <= MaxEcho && printable(s) == s {
		return s
	}
	return quote(s)
}

// printable escapes what would break a message's line in a name the
// caller supplied (control characters, invisible characters, invalid
// UTF-8) and leaves the rest as is.
func printable(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || (r != ' ' && !unicode.IsPrint(r)) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// firstLine returns the text of b up to its first line break, or as much
// of it as quote can echo.
func firstLine(b []byte) string {
	s := string(b[:min(len(b), 4*MaxEcho+4)])
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
