package export

import (
	"strings"

	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// pythonChain returns the PySpark expression job.py applies to the input
// DataFrame df for a query written text (parsed as c), and whether it is
// text as written.
//
// It is text as written, the receiver (events., df. or a leading dot)
// replaced by df, when text is, up to white space outside strings, the
// chain in PySpark's own form: sim/spark/chain's rendering, which PySpark 3.5
// runs (keys as a list of double-quoted names, the delay a double-quoted
// string). Otherwise it is that rendering: the forms sim/spark/chain reads that
// PySpark does not run as they are (Scala's Seq("a") and
// dropDuplicates("a", "b"), an assignment, a comment, a backslash
// continuation) or that take another route to the same chain (subset=,
// single quotes, distinct(), drop_duplicates, the structured JSON form of
// a trace). job.py quotes text above the expression either way.
func pythonChain(text string, c chain.Chain) (expr string, verbatim bool) {
	canonical := c.String()
	body := stripReceiver(strings.TrimSpace(text))
	if body != "" && squash(body) == squash(canonical) {
		if strings.ContainsAny(body, "\r\n") {
			// A chain over several lines is one expression in
			// parentheses, its lines indented alike.
			lines := strings.Split(strings.ReplaceAll(body, "\r", ""), "\n")
			for i := range lines {
				lines[i] = strings.TrimSpace(lines[i])
			}
			return "(df." + strings.Join(lines, "\n        ") + ")", true
		}
		return "df." + body, true
	}
	return "df." + canonical, false
}

// stripReceiver removes the receiver of a chain: a leading name and its
// dot ("events.withWatermark(...)"), or a leading dot. A chain that starts
// with a method name is returned as it is.
func stripReceiver(s string) string {
	if strings.HasPrefix(s, ".") {
		return strings.TrimLeft(s[1:], " \t\r\n")
	}
	n := 0
	for n < len(s) && (isIdent(s[n]) || n > 0 && s[n] >= '0' && s[n] <= '9') {
		n++
	}
	if n == 0 || isMethod(s[:n]) {
		return s
	}
	rest := strings.TrimLeft(s[n:], " \t\r\n")
	if !strings.HasPrefix(rest, ".") {
		return s
	}
	return strings.TrimLeft(rest[1:], " \t\r\n")
}

func isIdent(b byte) bool { return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// isMethod reports whether name is an operator sim/spark/chain knows.
func isMethod(name string) bool {
	switch name {
	case "withWatermark", "dropDuplicates", "drop_duplicates", "distinct", "dropDuplicatesWithinWatermark":
		return true
	}
	return false
}

// squash removes the white space of s outside double-quoted strings,
// keeping the strings (and their escapes) as they are.
func squash(s string) string {
	var b strings.Builder
	in, esc := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case in && esc:
			esc = false
		case in && ch == '\\':
			esc = true
		case ch == '"':
			in = !in
		case !in && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'):
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}
