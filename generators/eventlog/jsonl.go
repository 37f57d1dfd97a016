package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// The kinds of a JSON value as the log reader sees it.
const (
	jsonMissing byte = iota
	jsonString
	jsonNumber
	jsonBool
	jsonNull
	jsonOther // an object or an array
)

// jsonValue is one wanted member of a JSON lines record.
type jsonValue struct {
	kind byte
	// b is the value: a string unescaped, a number or bool as written.
	b []byte
	// esc, when set, says b is in the scanner's buffer at [off, end).
	esc      bool
	off, end int
}

// jsonScanner extracts the members named keys from one JSON object per
// line, without allocating per record: unescaped strings go to a buffer
// reused from record to record, the others are slices of the line.
type jsonScanner struct {
	keys []string
	vals []jsonValue
	buf  []byte
	key  []byte
	seen []bool
}

func newJSONScanner(keys []string) *jsonScanner {
	return &jsonScanner{keys: keys, vals: make([]jsonValue, len(keys)), seen: make([]bool, len(keys))}
}

// scan parses line, a JSON object, into s.vals. Members not in keys are
// checked for syntax and skipped; a member the log is read by given twice
// is an error (encoding/json would keep the last, a reader the first).
func (s *jsonScanner) scan(line []byte) error {
	for i := range s.vals {
		s.vals[i] = jsonValue{}
		s.seen[i] = false
	}
	s.buf = s.buf[:0]
	p := &jsonParser{b: line, s: s}
	p.ws()
	if !p.eat('{') {
		return errors.New("not a JSON object")
	}
	p.ws()
	if !p.eat('}') {
		for {
			p.ws()
			kb, kesc, err := p.str(true)
			if err != nil {
				return err
			}
			key := kb
			if kesc {
				key = s.key
			}
			idx := -1
			for i, k := range s.keys {
				if string(key) == k {
					idx = i
				}
			}
			if idx >= 0 {
				if s.seen[idx] {
					return fmt.Errorf("member %q given twice: want each member the log is read by once", s.keys[idx])
				}
				s.seen[idx] = true
			}
			p.ws()
			if !p.eat(':') {
				return p.fail("want ':' after a member name")
			}
			p.ws()
			if err := p.value(idx); err != nil {
				return err
			}
			p.ws()
			if p.eat(',') {
				continue
			}
			if p.eat('}') {
				break
			}
			return p.fail("want ',' or '}' after a member")
		}
	}
	p.ws()
	if p.i != len(p.b) {
		return p.fail("text after the object")
	}
	for i := range s.vals {
		if v := &s.vals[i]; v.esc {
			v.b = s.buf[v.off:v.end]
		}
	}
	return nil
}

// jsonParser is the state of one scan.
type jsonParser struct {
	b     []byte
	i     int
	s     *jsonScanner
	depth int
}

func (p *jsonParser) fail(msg string) error {
	return fmt.Errorf("bad JSON at byte %d: %s", p.i+1, msg)
}

func (p *jsonParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str parses a string at p.i. Without escapes it returns a slice of the
// line; with escapes it unescapes into the scanner's key buffer (key) or
// the value buffer, and says so.
func (p *jsonParser) str(key bool) ([]byte, bool, error) {
	if !p.eat('"') {
		return nil, false, p.fail("want a string")
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], false, nil
		case c == '\\':
			return p.unescape(start, key)
		case c < 0x20:
			return nil, false, p.fail("a control character in a string")
		}
		p.i++
	}
	return nil, false, p.fail("an unterminated string")
}

// unescape continues a string with escapes from p.i, its text since start
// having none.
func (p *jsonParser) unescape(start int, key bool) ([]byte, bool, error) {
	var dst []byte
	if key {
		dst = p.s.key[:0]
	} else {
		dst = p.s.buf
	}
	off := len(dst)
	dst = append(dst, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if key {
				p.s.key = dst
				return dst, true, nil
			}
			p.s.buf = dst
			return dst[off:], true, nil
		case c < 0x20:
			return nil, false, p.fail("a control character in a string")
		case c != '\\':
			dst = append(dst, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			break
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return nil, false, p.fail("a bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A pair, or the replacement character, as encoding/json.
				r2 := utf8.RuneError
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if lo, ok := p.hex4(); ok {
						if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
							r2 = d
						} else {
							p.i = save
						}
					} else {
						return nil, false, p.fail("a bad \\u escape")
					}
				}
				r = r2
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return nil, false, p.fail("a bad escape")
		}
	}
	return nil, false, p.fail("an unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// maxDepth bounds the nesting of skipped values.
const maxDepth = 1000

// value parses a value at p.i, recording it as member idx (-1: skip).
func (p *jsonParser) value(idx int) error {
	if p.i >= len(p.b) {
		return p.fail("want a value")
	}
	set := func(kind byte, b []byte) {
		if idx >= 0 {
			p.s.vals[idx] = jsonValue{kind: kind, b: b}
		}
	}
	switch c := p.b[p.i]; {
	case c == '"':
		off := len(p.s.buf)
		b, esc, err := p.str(false)
		if err != nil {
			return err
		}
		if idx >= 0 {
			v := jsonValue{kind: jsonString, b: b}
			if esc {
				v.esc, v.off, v.end = true, off, len(p.s.buf)
			}
			p.s.vals[idx] = v
		}
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		if err := p.number(); err != nil {
			return err
		}
		set(jsonNumber, p.b[start:p.i])
	case c == 't' || c == 'f' || c == 'n':
		for _, w := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.b[p.i:], []byte(w)) {
				start := p.i
				p.i += len(w)
				if w == "null" {
					set(jsonNull, nil)
				} else {
					set(jsonBool, p.b[start:p.i])
				}
				return nil
			}
		}
		return p.fail("want a value")
	case c == '{' || c == '[':
		set(jsonOther, nil)
		return p.skip()
	default:
		return p.fail("want a value")
	}
	return nil
}

// number checks a JSON number at p.i.
func (p *jsonParser) number() error {
	p.eat('-')
	n := p.digits()
	if n == 0 {
		return p.fail("a bad number")
	}
	if n > 1 && p.b[p.i-n] == '0' {
		return p.fail("a number with a leading zero")
	}
	if p.eat('.') && p.digits() == 0 {
		return p.fail("a bad number")
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		if p.digits() == 0 {
			return p.fail("a bad number")
		}
	}
	return nil
}

func (p *jsonParser) digits() int {
	n := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// skip checks and skips an object or an array at p.i.
func (p *jsonParser) skip() error {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return p.fail("nested too deep")
	}
	if p.eat('[') {
		p.ws()
		if p.eat(']') {
			return nil
		}
		for {
			p.ws()
			if err := p.value(-1); err != nil {
				return err
			}
			p.ws()
			if p.eat(',') {
				continue
			}
			if p.eat(']') {
				return nil
			}
			return p.fail("want ',' or ']'")
		}
	}
	p.eat('{')
	p.ws()
	if p.eat('}') {
		return nil
	}
	for {
		p.ws()
		if _, _, err := p.str(false); err != nil {
			return err
		}
		p.ws()
		if !p.eat(':') {
			return p.fail("want ':' after a member name")
		}
		p.ws()
		if err := p.value(-1); err != nil {
			return err
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return nil
		}
		return p.fail("want ',' or '}'")
	}
}
