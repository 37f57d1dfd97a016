package interval

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// parseLiteral parses input as Spark 3.5's CatalystSqlParser.parseExpression
// does when fromIntervalString finds it starts with "interval", keeping what
// fromIntervalString keeps: an interval literal and nothing else. The three
// literal forms of Spark SQL (AstBuilder.visitInterval, visitTypeConstructor)
// are accepted, keywords case-insensitive:
//
//   - several units: INTERVAL 1 day 2 hours, INTERVAL '10' seconds,
//     INTERVAL -1.5 seconds; a value is an integer, a decimal or a quoted
//     string of digits, with an optional sign; units as StringToInterval
//     takes them (the grammar also names nanosecond, which that rejects).
//     The pairs are joined and parsed by StringToInterval;
//   - from-to: INTERVAL '1 2:3:4' DAY TO SECOND, INTERVAL '1-2' YEAR TO
//     MONTH, the value a quoted string (IntervalUtils.fromYearMonthString
//     and fromDayTimeString);
//   - typed: INTERVAL '3 days', the string parsed by StringToInterval.
//
// With ANSI interval types (spark.sql.legacy.interval.enabled=false, the
// default) the literal is a year-month or a day-time interval: mixing
// year or month with the other units is an error ("Cannot mix year-month
// and day-time fields"), and a day-time literal's duration must fit a long
// of microseconds. Comments (--, /* */) and white space (space, \t, \n, \r)
// may surround the tokens; anything after the literal (an alias, an
// operator) makes fromIntervalString fail, as it does here.
func parseLiteral(input string) (Calendar, error) {
	toks, err := lexSQL(input)
	if err != nil {
		return Calendar{}, err
	}
	p := &litParser{toks: toks}
	if t := p.next(); t.kind != tokWord || t.lower != "interval" {
		return Calendar{}, p.syntax(t)
	}
	// Typed literal: INTERVAL 'string'.
	if p.peek().kind == tokString && p.peekAt(1).kind == tokEOF {
		return typedLiteral(p.next().text)
	}
	start := p.pos
	// From-to: [sign] value from TO to.
	if p.isUnitToUnit(start) {
		return p.unitToUnit()
	}
	return p.multiUnits()
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokInt
	tokDecimal
	tokString
	tokPlus
	tokMinus
	tokOther
)

type sqlToken struct {
	kind  tokKind
	text  string // as written; for a string, its decoded value
	lower string // a word in lower case
	off   int
}

// multiUnitNames are the grammar's unitInMultiUnits.
var multiUnitNames = map[string]bool{
	"nanosecond": true, "nanoseconds": true, "microsecond": true, "microseconds": true,
	"millisecond": true, "milliseconds": true, "second": true, "seconds": true,
	"minute": true, "minutes": true, "hour": true, "hours": true, "day": true, "days": true,
	"week": true, "weeks": true, "month": true, "months": true, "year": true, "years": true,
}

// toUnitNames are the grammar's unitInUnitToUnit.
var toUnitNames = map[string]bool{"second": true, "minute": true, "hour": true, "day": true, "month": true, "year": true}

func syntaxErr(format string, a ...any) error {
	return &Error{classParse, fmt.Sprintf(format, a...)}
}

// lexSQL splits input into the tokens of Spark's SQL lexer that an
// interval literal can hold; any other token is tokOther.
func lexSQL(s string) ([]sqlToken, error) {
	var toks []sqlToken
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "--"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			depth := 0
			for {
				switch {
				case i >= len(s):
					return nil, syntaxErr("unclosed bracketed comment")
				case strings.HasPrefix(s[i:], "/*"):
					depth++
					i += 2
				case strings.HasPrefix(s[i:], "*/"):
					depth--
					i += 2
				default:
					i++
				}
				if depth == 0 {
					break
				}
			}
		case c == '+':
			toks = append(toks, sqlToken{kind: tokPlus, text: "+", off: i})
			i++
		case c == '-':
			toks = append(toks, sqlToken{kind: tokMinus, text: "-", off: i})
			i++
		case (c == 'r' || c == 'R') && i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '"'):
			q := s[i+1]
			end := strings.IndexByte(s[i+2:], q)
			if end < 0 {
				return nil, syntaxErr("unclosed string literal at offset %d", i)
			}
			toks = append(toks, sqlToken{kind: tokString, text: s[i+2 : i+2+end], off: i})
			i += end + 3
		case c == '\'' || c == '"':
			val, n, ok := unescapeSQL(s[i:])
			if !ok {
				return nil, syntaxErr("unclosed string literal at offset %d", i)
			}
			toks = append(toks, sqlToken{kind: tokString, text: val, off: i})
			i += n
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			kind := tokInt
			if j < len(s) && s[j] == '.' {
				kind = tokDecimal
				j++
				for j < len(s) && isDigit(s[j]) {
					j++
				}
			}
			if j < len(s) && isWordByte(s[j]) {
				// 10s, 1e3, 10L, 10seconds: a typed number or an identifier,
				// never an interval value.
				k := j
				for k < len(s) && (isWordByte(s[k]) || s[k] == '.') {
					k++
				}
				toks = append(toks, sqlToken{kind: tokOther, text: s[i:k], off: i})
				i = k
				continue
			}
			toks = append(toks, sqlToken{kind: kind, text: s[i:j], off: i})
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			toks = append(toks, sqlToken{kind: tokWord, text: s[i:j], lower: lowerASCII(s[i:j]), off: i})
			i = j
		default:
			toks = append(toks, sqlToken{kind: tokOther, text: s[i : i+1], off: i})
			i++
		}
	}
	return append(toks, sqlToken{kind: tokEOF, off: len(s)}), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

// unescapeSQL reads a quoted string literal at the start of s the way
// Spark's ParserUtils.unescapeSQLString decodes it, returning its value and
// length.
func unescapeSQL(s string) (string, int, bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'Z':
				b.WriteByte(0x1A)
			default:
				b.WriteByte(e) // \' \" \\ and any other character stand for themselves
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

type litParser struct {
	toks []sqlToken
	pos  int
}

func (p *litParser) peek() sqlToken { return p.toks[p.pos] }
func (p *litParser) peekAt(k int) sqlToken {
	return p.toks[min(p.pos+k, len(p.toks)-1)]
}
func (p *litParser) next() sqlToken {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *litParser) syntax(t sqlToken) error {
	if t.kind == tokEOF {
		return syntaxErr("syntax error at the end of the input (want an interval literal such as interval 10 seconds)")
	}
	return syntaxErr("syntax error at or near '%s' (offset %d)", Echo(t.text), t.off)
}

// isUnitToUnit reports whether the tokens from k are [sign] value unit TO,
// the grammar's unitToUnitInterval.
func (p *litParser) isUnitToUnit(k int) bool {
	t := p.toks
	if t[k].kind == tokPlus || t[k].kind == tokMinus {
		k++
	}
	if k+2 >= len(t) || (t[k].kind != tokString && t[k].kind != tokInt && t[k].kind != tokDecimal) {
		return false
	}
	return t[k+1].kind == tokWord && toUnitNames[t[k+1].lower] && t[k+2].kind == tokWord && t[k+2].lower == "to"
}

// value reads [sign] value; str is set for a string value.
func (p *litParser) value() (sign string, v sqlToken, err error) {
	if t := p.peek(); t.kind == tokPlus || t.kind == tokMinus {
		sign = p.next().text
	}
	v = p.next()
	if v.kind != tokInt && v.kind != tokDecimal && v.kind != tokString {
		return "", v, p.syntax(v)
	}
	return sign, v, nil
}

// signed applies a minus to a string value as AstBuilder does: drop a
// leading "-", else add one.
func signed(sign, value string) string {
	if sign != "-" {
		return value
	}
	if strings.HasPrefix(value, "-") {
		return strings.Replace(value, "-", "", 1)
	}
	return "-" + value
}

// multiUnits is visitMultiUnitsInterval followed by the ANSI literal of
// constructMultiUnitsIntervalLiteral.
func (p *litParser) multiUnits() (Calendar, error) {
	var text strings.Builder
	var units []string
	for {
		sign, v, err := p.value()
		if err != nil {
			return Calendar{}, err
		}
		u := p.next()
		if u.kind != tokWord || !multiUnitNames[u.lower] {
			return Calendar{}, p.syntax(u)
		}
		val := sign + v.text
		if v.kind == tokString {
			// SPARK-32840: a string value holds a number, never a unit.
			if strings.ContainsFunc(v.text, unicode.IsLetter) {
				return Calendar{}, syntaxErr("can only use numbers in the interval value part for multiple unit value pairs interval form, but got invalid value: %s", Echo(v.text))
			}
			val = signed(sign, v.text)
		}
		text.WriteString(" " + val + " " + u.text)
		units = append(units, strings.TrimSuffix(u.lower, "s"))
		if p.peek().kind == tokEOF {
			break
		}
		if p.isUnitToUnit(p.pos) {
			return Calendar{}, syntaxErr("can only have a single from-to unit in the interval literal syntax")
		}
	}
	c, err := StringToInterval(text.String())
	if err != nil {
		return Calendar{}, err
	}
	return ansiLiteral(c, units)
}

// javaSpace1 splits like String.split("\\s"); lettersOnly is "[a-z]+".
var (
	javaSpace1  = regexp.MustCompile(javaSpace)
	lettersOnly = regexp.MustCompile(`^[a-z]+$`)
)

// typedLiteral is visitTypeConstructor for INTERVAL 'value'.
func typedLiteral(value string) (Calendar, error) {
	c, err := StringToInterval(value)
	if err != nil {
		return Calendar{}, &Error{"INVALID_TYPED_LITERAL", fmt.Sprintf("the value of the typed literal INTERVAL is invalid: '%s' (%v)", Echo(value), err)}
	}
	var units []string
	for _, w := range javaSpace1.Split(value, -1) {
		w = strings.TrimSuffix(lowerASCII(w), "s")
		if w != "interval" && lettersOnly.MatchString(w) {
			units = append(units, w)
		}
	}
	return ansiLiteral(c, units)
}

// ansiLiteral is constructMultiUnitsIntervalLiteral: a year-month literal
// when the units are years and months, else a day-time literal whose
// duration is computed now.
func ansiLiteral(c Calendar, units []string) (Calendar, error) {
	ym, dt := false, false
	for _, u := range units {
		if u == "year" || u == "month" {
			ym = true
		} else {
			dt = true
		}
	}
	if ym && dt {
		return Calendar{}, syntaxErr("cannot mix year-month and day-time fields")
	}
	if ym {
		return Calendar{Months: c.Months}, nil
	}
	micros, ok := c.DurationMicros()
	if !ok {
		return Calendar{}, &Error{Msg: "ArithmeticException: long overflow"}
	}
	return Calendar{Micros: micros}, nil
}

// unitToUnit is visitUnitToUnitInterval with visitInterval's ANSI literal.
func (p *litParser) unitToUnit() (Calendar, error) {
	sign, v, err := p.value()
	if err != nil {
		return Calendar{}, err
	}
	if v.kind != tokString {
		return Calendar{}, syntaxErr("the value of from-to unit must be a string")
	}
	from, _, to := p.next().lower, p.next(), p.next()
	if to.kind != tokWord || !toUnitNames[to.lower] {
		return Calendar{}, p.syntax(to)
	}
	if t := p.peek(); t.kind != tokEOF {
		if _, _, err := p.value(); err == nil && p.peek().kind == tokWord {
			return Calendar{}, syntaxErr("can only have a single from-to unit in the interval literal syntax")
		}
		return Calendar{}, p.syntax(t)
	}
	value := signed(sign, v.text)
	switch from + " " + to.lower {
	case "year month":
		months, err := yearToMonth(value)
		if err != nil {
			return Calendar{}, err
		}
		return Calendar{Months: months}, nil
	case "day hour", "day minute", "day second", "hour minute", "hour second", "minute second":
		micros, err := dayTime(value, from, to.lower)
		if err != nil {
			return Calendar{}, err
		}
		return Calendar{Micros: micros}, nil
	}
	return Calendar{}, syntaxErr("intervals FROM %s TO %s are not supported", from, to.lower)
}

// The patterns of IntervalUtils.castStringToYMInterval and
// castStringToDTInterval, transcribed (java.util.regex \s is javaSpace; the
// sign class [+|-] matches '|' too, as in Spark).
var (
	ymPlain   = regexp.MustCompile(`^([+|-])?(\d+)-(\d+)$`)
	ymLiteral = regexp.MustCompile(`(?i)^INTERVAL` + javaSpace + `+([+|-])?'([+|-])?(\d+)-(\d+)'` + javaSpace + `+YEAR` + javaSpace + `+TO` + javaSpace + `+MONTH$`)

	dtPatterns = map[string]string{
		"day hour":      `([+|-])?(\d{1,9}) (\d{1,2})`,
		"day minute":    `([+|-])?(\d{1,9}) (\d{1,2}):(\d{1,2})`,
		"day second":    `([+|-])?(\d{1,9}) (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?`,
		"hour minute":   `([+|-])?(\d{1,10}):(\d{1,2})`,
		"hour second":   `([+|-])?(\d{1,10}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?`,
		"minute second": `([+|-])?(\d{1,12}):(\d{1,2})(\.\d{1,9})?`,
	}
	dtPlain, dtLiteral = map[string]*regexp.Regexp{}, map[string]*regexp.Regexp{}
)

func init() {
	for k, pat := range dtPatterns {
		from, to, _ := strings.Cut(k, " ")
		dtPlain[k] = regexp.MustCompile(`^` + pat + `$`)
		dtLiteral[k] = regexp.MustCompile(`(?i)^INTERVAL` + javaSpace + `+([+|-])?'` + pat + `'` + javaSpace + `+` +
			strings.ToUpper(from) + javaSpace + `+TO` + javaSpace + `+` + strings.ToUpper(to) + `$`)
	}
}

// finalSign is IntervalUtils.finalSign.
func finalSign(first, second string) int64 {
	if (first == "-") != (second == "-") {
		return -1
	}
	return 1
}

// Spark's MAX_DAY, MAX_HOUR, MAX_MINUTE: Long.MaxValue in those units.
const (
	maxDay    = 106751991
	maxHour   = 2562047788
	maxMinute = 153722867280
)

func unmatched(input, kind, from, to string) error {
	return &Error{classUnmatched, fmt.Sprintf("interval string does not match %s format of %s TO %s: '%s'", kind, strings.ToUpper(from), strings.ToUpper(to), Echo(input))}
}

// rangeErr is toLongWithRange's failure.
func rangeErr(field string, v string, lo, hi int64) error {
	return &Error{classIntervalParse, fmt.Sprintf("%s %s outside range [%d, %d]", field, Echo(v), lo, hi)}
}

// toLongWithRange is IntervalUtils.toLongWithRange.
func toLongWithRange(field, s string, lo, hi int64) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, rangeErr(field, s, lo, hi)
	}
	return v, nil
}

// yearToMonth is IntervalUtils.fromYearMonthString(value): "[+|-]y-m".
func yearToMonth(value string) (int32, error) {
	in := trimAll(value)
	var sign int64
	var y, m string
	if g := ymPlain.FindStringSubmatch(in); g != nil {
		sign, y, m = finalSign(g[1], ""), g[2], g[3]
	} else if g := ymLiteral.FindStringSubmatch(in); g != nil {
		sign, y, m = finalSign(g[1], g[2]), g[3], g[4]
	} else {
		return 0, unmatched(value, "year-month", "year", "month")
	}
	years, err := toLongWithRange("year", y, 0, 178956970) // Integer.MAX_VALUE / 12
	if err != nil {
		return 0, err
	}
	months, err := toLongWithRange("month", m, 0, 11)
	if err != nil {
		return 0, err
	}
	return int32(sign * (years*12 + months)), nil // at most Integer.MAX_VALUE
}

// dayTime is IntervalUtils.fromDayTimeString(value, from, to) with
// spark.sql.legacy.fromDayTimeString.enabled=false: the value must match
// the pattern of exactly that pair of units.
func dayTime(value, from, to string) (int64, error) {
	in := trimAll(value)
	key := from + " " + to
	var sign int64
	var g []string
	if g = dtPlain[key].FindStringSubmatch(in); g != nil {
		sign, g = finalSign(g[1], ""), g[2:]
	} else if g = dtLiteral[key].FindStringSubmatch(in); g != nil {
		sign, g = finalSign(g[1], g[2]), g[3:]
	} else {
		return 0, unmatched(value, "day-time", from, to)
	}
	var micros int64
	var err error
	add := func(field, s string, hi, unit int64) {
		if err != nil {
			return
		}
		var v int64
		if v, err = toLongWithRange(field, s, 0, hi); err == nil {
			if !exact(func() { micros = addExact(micros, mulExact(sign*v, unit)) }) {
				err = &Error{Msg: "ArithmeticException: long overflow"}
			}
		}
	}
	seconds := func(s, frac string) {
		if err != nil {
			return
		}
		add("second", s, 59, microsPerSecond)
		if err == nil && frac != "" {
			// parseNanos: up to nine digits, truncated to microseconds.
			nanos := (frac[1:] + "000000000")[:9]
			n, _ := strconv.ParseInt(nanos, 10, 64)
			if !exact(func() { micros = addExact(micros, sign*(n/1000)) }) {
				err = &Error{Msg: "ArithmeticException: long overflow"}
			}
		}
	}
	switch key {
	case "day hour":
		add("day", g[0], maxDay, microsPerDay)
		add("hour", g[1], 23, microsPerHour)
	case "day minute":
		add("day", g[0], maxDay, microsPerDay)
		add("hour", g[1], 23, microsPerHour)
		add("minute", g[2], 59, microsPerMinute)
	case "day second":
		add("day", g[0], maxDay, microsPerDay)
		add("hour", g[1], 23, microsPerHour)
		add("minute", g[2], 59, microsPerMinute)
		seconds(g[3], g[4])
	case "hour minute":
		add("hour", g[0], maxHour, microsPerHour)
		add("minute", g[1], 59, microsPerMinute)
	case "hour second":
		add("hour", g[0], maxHour, microsPerHour)
		add("minute", g[1], 59, microsPerMinute)
		seconds(g[2], g[3])
	case "minute second":
		add("minute", g[0], maxMinute, microsPerMinute)
		seconds(g[1], g[2])
	}
	return micros, err
}
