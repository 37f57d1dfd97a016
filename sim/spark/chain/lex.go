package chain

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token of the PySpark form.
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tLParen
	tRParen
	tLBrack
	tRBrack
	tComma
	tDot
	tAssign
	tSemicolon
)

// token is one lexical token. off is its byte offset in the query text, so
// that every error can point at the place the user has to fix.
type token struct {
	kind tokKind
	off  int
	// raw is the token as written (for messages); val is the decoded value
	// of a string literal.
	raw string
	val string
}

// describe renders t for an error message: `")"`, `end of query`.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of query"
	case tString:
		return "string " + pyQuote(abbrev(t.val))
	case tNumber:
		return "number " + t.raw
	}
	return strconv.Quote(t.raw)
}

// abbrev shortens s for an error message.
func abbrev(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "..."
}

// showName renders a column name in a message or explanation: as is when
// it reads unambiguously, quoted when it holds spaces, commas, quotes or
// characters that would break the line.
func showName(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r == ',' || r == '"' || r == '\\' || r == '[' || r == ']' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return pyQuote(s)
		}
	}
	return s
}

// lex splits text into tokens. It is deliberately lenient where pasted
// code differs from a Python statement only in layout (newlines outside
// brackets, non-breaking spaces, comments) and strict where the meaning
// would be a guess (curly quotes, unknown escapes that Python rejects).
func lex(text string) ([]token, error) {
	if !utf8.ValidString(text) {
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, fmt.Errorf("query: invalid UTF-8 at offset %d", i)
			}
			i += size
		}
	}
	var toks []token
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\\':
			// Python line continuation: a backslash right before a newline.
			j := i + 1
			if j < len(text) && text[j] == '\r' {
				j++
			}
			if j < len(text) && text[j] == '\n' {
				i = j + 1
				continue
			}
			return nil, fmt.Errorf("query: unexpected \"\\\" at offset %d (a line continuation must end its line)", i)
		case r == '#':
			// A Python comment runs to the end of the line.
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case unicode.IsSpace(r) || r == '\uFEFF':
			i += size
		case r == '"' || r == '\'':
			t, n, err := lexString(text, i, i, false)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = n
		case r == '“' || r == '”' || r == '‘' || r == '’' || r == '„' || r == '«' || r == '»':
			return nil, fmt.Errorf("query: curly quote %q at offset %d: use straight quotes (\" or ')", string(r), i)
		case r == '_' || unicode.IsLetter(r):
			j := i
			for j < len(text) {
				c, n := utf8.DecodeRuneInString(text[j:])
				if c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
					break
				}
				j += n
			}
			word := text[i:j]
			// A string prefix: r"..." is raw, u"..." is a plain string.
			if j < len(text) && (text[j] == '"' || text[j] == '\'') {
				switch word {
				case "r", "R", "u", "U":
					t, n, err := lexString(text, i, j, word == "r" || word == "R")
					if err != nil {
						return nil, err
					}
					toks = append(toks, t)
					i = n
					continue
				}
			}
			toks = append(toks, token{kind: tIdent, off: i, raw: word})
			i = j
		case r >= '0' && r <= '9' || r == '-' || r == '+':
			// Numbers are not valid anywhere in a dedup chain, but lexing
			// them as one token gives "got number 10" instead of a confusing
			// error about a single character.
			j := i + 1
			for j < len(text) {
				c := text[j]
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_') {
					break
				}
				j++
			}
			toks = append(toks, token{kind: tNumber, off: i, raw: text[i:j]})
			i = j
		default:
			k, ok := punct[r]
			if !ok {
				return nil, fmt.Errorf("query: unexpected %q at offset %d", string(r), i)
			}
			toks = append(toks, token{kind: k, off: i, raw: string(r)})
			i += size
		}
	}
	toks = append(toks, token{kind: tEOF, off: len(text)})
	return toks, nil
}

var punct = map[rune]tokKind{
	'(': tLParen, ')': tRParen, '[': tLBrack, ']': tRBrack,
	',': tComma, '.': tDot, '=': tAssign, ';': tSemicolon,
}

// lexString reads the string literal whose prefix starts at start and whose
// opening quote is at q, with Python's rules: single, double or triple
// quotes, backslash escapes unless raw. It returns the token and the offset
// just past the closing quote.
func lexString(text string, start, q int, raw bool) (token, int, error) {
	delim := text[q : q+1]
	if strings.HasPrefix(text[q:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	var b strings.Builder
	i := q + len(delim)
	for {
		if i >= len(text) {
			return token{}, 0, fmt.Errorf("query: unterminated string starting at offset %d", start)
		}
		if strings.HasPrefix(text[i:], delim) {
			i += len(delim)
			break
		}
		c := text[i]
		if c == '\n' && len(delim) == 1 {
			return token{}, 0, fmt.Errorf("query: unterminated string starting at offset %d (the line ends before the closing quote)", start)
		}
		if c != '\\' {
			r, size := utf8.DecodeRuneInString(text[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		if i+1 >= len(text) {
			return token{}, 0, fmt.Errorf("query: unterminated string starting at offset %d", start)
		}
		if raw {
			// In a raw string a backslash escapes nothing but still keeps
			// the next character (a quote) from ending the string.
			b.WriteByte('\\')
			r, size := utf8.DecodeRuneInString(text[i+1:])
			b.WriteRune(r)
			i += 1 + size
			continue
		}
		n, err := unescape(text, i, &b)
		if err != nil {
			return token{}, 0, err
		}
		i = n
	}
	return token{kind: tString, off: start, raw: text[start:i], val: b.String()}, i, nil
}

// unescape decodes the Python escape sequence at text[i] (a backslash) into
// b and returns the offset after it.
func unescape(text string, i int, b *strings.Builder) (int, error) {
	c := text[i+1]
	switch c {
	case '\n':
		return i + 2, nil // backslash-newline inside a string: nothing
	case '\r':
		if i+2 < len(text) && text[i+2] == '\n' {
			return i + 3, nil
		}
		return i + 2, nil
	case '\\', '\'', '"':
		b.WriteByte(c)
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte('\v')
	case '0', '1', '2', '3', '4', '5', '6', '7':
		j := i + 1
		v := 0
		for j < len(text) && j < i+4 && text[j] >= '0' && text[j] <= '7' {
			v = v*8 + int(text[j]-'0')
			j++
		}
		b.WriteRune(rune(v))
		return j, nil
	case 'x', 'u', 'U':
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		end := i + 2 + width
		if end > len(text) {
			return 0, fmt.Errorf("query: invalid escape %q at offset %d (want \\%c and %d hex digits)", text[i:], i, c, width)
		}
		v, err := strconv.ParseUint(text[i+2:end], 16, 32)
		if err != nil || strings.ContainsAny(text[i+2:end], "+-_") {
			return 0, fmt.Errorf("query: invalid escape %q at offset %d (want \\%c and %d hex digits)", text[i:end], i, c, width)
		}
		r := rune(v)
		if r > unicode.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
			return 0, fmt.Errorf("query: invalid escape %q at offset %d (not a Unicode character)", text[i:end], i)
		}
		b.WriteRune(r)
		return end, nil
	case 'N':
		return 0, fmt.Errorf("query: unsupported escape \\N{...} at offset %d (write the character itself)", i)
	default:
		// Python keeps an unknown escape as written, backslash included.
		b.WriteByte('\\')
		return i + 1, nil
	}
	return i + 2, nil
}

// pyQuote renders s as a Python string literal that lex decodes back to s:
// double quotes, with escapes for quotes, backslashes and every character
// that is not printable (so that the text survives copy and paste).
func pyQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			switch {
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r < utf8.RuneSelf || unicode.IsPrint(r):
				b.WriteRune(r)
			case r <= 0xFFFF:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
