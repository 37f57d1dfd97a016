package fileio

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// MaxTimeseriesBytes bounds a results folder's timeseries.csv. A batch row
// is about 120 bytes, so 1 GiB is some 9 million batches (a week of 1 s
// triggers for 15 queries); the records read from it take about as much
// memory as the file.
const MaxTimeseriesBytes = 1 << 30

// The bounds of what an error message echoes of what a user wrote.
const (
	// MaxEcho is how many characters of a bad value a message echoes.
	MaxEcho = 80
	// MaxMessage is how many characters a cleaned message keeps in all.
	MaxMessage = 600
)

// Quote renders a value a user supplied for an error message: at most
// MaxEcho characters of it, in double quotes, with control characters,
// invalid UTF-8 and quotes escaped the way strconv.Quote escapes them,
// followed by "..." when it was cut:
//
//	Quote("my run")      == `"my run"`
//	Quote("\x1b[31mred") == `"\x1b[31mred"`
//
// and a value of 100 a's renders as its first 80 a's in quotes, then "...".
func Quote(s string) string { return QuoteN(s, MaxEcho) }

// QuoteN is Quote with a bound of n characters (n >= 1), for values that
// should be echoed more briefly still, such as a line of a file that may
// not be the file the user meant.
func QuoteN(s string, n int) string {
	cut, ok := prefix(s, max(n, 1))
	if ok {
		return strconv.Quote(s)
	}
	return strconv.Quote(cut) + "..."
}

// prefix returns the first n characters of s (an invalid byte counts as
// one) and whether that is all of s.
func prefix(s string, n int) (string, bool) {
	i := 0
	for k := 0; k < n; k++ {
		if i >= len(s) {
			return s, true
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], i >= len(s)
}

// NeedsQuote reports whether s must be quoted to be echoed unambiguously
// on one line: it is empty, longer than MaxEcho characters, or holds a
// space, a quote, a backslash, a control character, a character that is
// not printable or invalid UTF-8.
func NeedsQuote(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > MaxEcho {
		return true
	}
	for _, r := range s {
		if r == utf8.RuneError || r == ' ' || r == '"' || r == '\'' || r == '\\' || !unicode.IsPrint(r) {
			return true
		}
	}
	return false
}

// Show renders a value for "got VALUE": as written when that is
// unambiguous, else as Quote renders it.
func Show(s string) string {
	if NeedsQuote(s) {
		return Quote(s)
	}
	return s
}

// Clean makes a message that may hold text a user supplied safe to print
// as one line: every double-quoted Go string literal in it (as %q writes
// one) longer than MaxEcho characters once unquoted is cut as Quote cuts
// it; every control character, non-printable character or invalid byte
// outside such literals is escaped as strconv.Quote would; and a message
// still longer than MaxMessage characters is cut with "...". Text that
// needs none of this is returned as is, and Clean(Clean(s)) == Clean(s),
// so it can be applied to any message, more than once.
func Clean(msg string) string {
	// Escaping a character can complete a literal ("\" then an escaped
	// control reads as a literal's escape), so clean until nothing
	// changes: after the first pass, every pass only shortens the text.
	for range 8 {
		next := cleanOnce(msg)
		if next == msg {
			break
		}
		msg = next
	}
	return msg
}

// cleanOnce is one pass of Clean.
func cleanOnce(msg string) string {
	var b strings.Builder
	changed := false
	for i := 0; i < len(msg); {
		c := msg[i]
		if c == '"' {
			if lit, err := strconv.QuotedPrefix(msg[i:]); err == nil {
				// A literal may hold raw control characters (strconv
				// accepts them): re-quoting escapes them.
				if v, err := strconv.Unquote(lit); err == nil && (utf8.RuneCountInString(v) > MaxEcho || !printable(lit)) {
					b.WriteString(Quote(v))
					changed = true
				} else {
					b.WriteString(lit)
				}
				i += len(lit)
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(msg[i:])
		if !printableRune(r, size) {
			q := strconv.Quote(msg[i : i+size])
			b.WriteString(q[1 : len(q)-1])
			changed = true
		} else {
			b.WriteString(msg[i : i+size])
		}
		i += size
	}
	out := msg
	if changed {
		out = b.String()
	}
	if cut, all := prefix(out, MaxMessage); !all {
		out = cut + "..."
	}
	return out
}

// printable reports whether s holds only printable characters and spaces.
func printable(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !printableRune(r, size) {
			return false
		}
		i += size
	}
	return true
}

// printableRune reports whether the character r, of size bytes, prints as
// itself: not a control, not invisible, not an invalid byte.
func printableRune(r rune, size int) bool {
	if r == utf8.RuneError && size <= 1 {
		return false
	}
	return r == ' ' || unicode.IsPrint(r)
}

// Reason returns why a read failed without the path the error names, for
// messages that name the file themselves: "no such file or directory",
// "not a regular file (a named pipe)", "larger than 1 MiB, the limit for
// this file". Other errors are returned whole.
func Reason(err error) string {
	var nr *NotRegularError
	var tl *TooLargeError
	var pe *fs.PathError
	switch {
	case errors.As(err, &nr):
		return "not a regular file (" + describeMode(nr.Mode) + ")"
	case errors.As(err, &tl):
		return "larger than " + interval.Size(tl.Limit) + ", the limit for this file"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return err.Error()
}

// ShowPath renders a file name a message names: as given, unless it holds
// a control character, a character that is not printable or invalid UTF-8
// (a newline would split the message over two lines), then quoted as
// strconv.Quote quotes it. Unlike Show it never cuts: a path is the one
// thing a message must name whole.
func ShowPath(p string) string {
	if printable(p) {
		return p
	}
	return strconv.Quote(p)
}
