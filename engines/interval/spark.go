package interval

import (
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// Calendar is Spark's CalendarInterval: months, days and microseconds,
// kept apart because a month and a day have no fixed length.
type Calendar struct {
	Months int32
	Days   int32
	Micros int64
}

// Spark's DateTimeConstants.
const (
	microsPerMillis = int64(1000)
	microsPerSecond = 1000 * microsPerMillis
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
	daysPerMonth    = 31 // IntervalUtils.getDuration's default, "used in Structured Streaming"
)

// Error is an interval Spark rejects. Class is Spark's error class
// ("INVALID_INTERVAL_FORMAT.INVALID_UNIT"), empty for the exceptions that
// carry none (ArithmeticException, IllegalArgumentException).
type Error struct {
	Class string
	Msg   string
}

func (e *Error) Error() string {
	if e.Class == "" {
		return e.Msg
	}
	return "[" + e.Class + "] " + e.Msg
}

// Spark 4 names each way stringToInterval can fail with an error class;
// Spark 3.5 raises the same failures, for the same inputs, as
// IllegalArgumentException with the same message text.
const (
	classEmpty         = "INVALID_INTERVAL_FORMAT.INPUT_IS_EMPTY"
	classPrefix        = "INVALID_INTERVAL_FORMAT.INVALID_PREFIX"
	classNumber        = "INVALID_INTERVAL_FORMAT.UNRECOGNIZED_NUMBER"
	classArithmetic    = "INVALID_INTERVAL_FORMAT.ARITHMETIC_EXCEPTION"
	classValue         = "INVALID_INTERVAL_FORMAT.INVALID_VALUE"
	classPrecision     = "INVALID_INTERVAL_FORMAT.INVALID_PRECISION"
	classFraction      = "INVALID_INTERVAL_FORMAT.INVALID_FRACTION"
	classUnit          = "INVALID_INTERVAL_FORMAT.INVALID_UNIT"
	classMissingNumber = "INVALID_INTERVAL_FORMAT.MISSING_NUMBER"
	classMissingUnit   = "INVALID_INTERVAL_FORMAT.MISSING_UNIT"
	classUnknown       = "INVALID_INTERVAL_FORMAT.UNKNOWN_PARSING_ERROR"
	classUnmatched     = "INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING"
	classIntervalParse = "INVALID_INTERVAL_FORMAT.INTERVAL_PARSING"
	classSecondNano    = "INVALID_INTERVAL_FORMAT.SECOND_NANO_FORMAT"
	classParse         = "PARSE_SYNTAX_ERROR"
	// ClassCannotParse is the class of every delay withWatermark cannot
	// parse (QueryCompilationErrors.cannotParseIntervalError); the cause's
	// class follows it in the message.
	ClassCannotParse = "CANNOT_PARSE_INTERVAL"
)

// unitList is what an "invalid unit" message suggests instead.
const unitList = "microsecond, millisecond, second, minute, hour, day, week, month or year, singular or plural"

// maxEcho bounds how much of a bad value a message repeats.
const maxEcho = 80

// Echo returns s for a one-line message: cut to about 80 bytes, control
// characters and invalid UTF-8 escaped as Go would quote them.
func Echo(s string) string {
	cut := ""
	if len(s) > maxEcho {
		n := maxEcho
		for n > 0 && s[n]&0xC0 == 0x80 {
			n-- // do not split a UTF-8 sequence
		}
		s, cut = s[:n], "..."
	}
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return q + cut
}

// isSpace is java.lang.Character.isWhitespace on one byte of UTF-8 text,
// which is what Spark's UTF8String parsing applies: ASCII space, \t \n
// \v \f \r and the separators 0x1C-0x1F. A byte of a multi-byte sequence
// is never white space.
func isSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r') || (b >= 0x1C && b <= 0x1F)
}

// trimAll is UTF8String.trimAll: isSpace bytes off both ends.
func trimAll(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// lowerASCII lower-cases ASCII letters. Java's toLowerCase also folds some
// non-ASCII letters, but none of them into a letter of a unit name, so the
// outcome of parsing is the same.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// javaSpace is the \s of java.util.regex: space, \t \n \v \f \r.
const javaSpace = `[ \t\n\x0B\f\r]`

var javaSpaces = regexp.MustCompile(javaSpace + `+`)

// javaSplit is String.split("\\s+"): trailing empty strings dropped.
func javaSplit(s string) []string {
	if s == "" {
		return []string{""}
	}
	parts := javaSpaces.Split(s, -1)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// overflow is Java's ArithmeticException from Math.*Exact.
type overflow struct{}

func mulExact(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(absU(a)), uint64(absU(b)))
	neg := (a < 0) != (b < 0)
	if hi != 0 || (!neg && lo > math.MaxInt64) || (neg && lo > 1<<63) {
		panic(overflow{})
	}
	if neg {
		return -int64(lo)
	}
	return int64(lo)
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(-a) // MinInt64 maps to 1<<63, as wanted
	}
	return uint64(a)
}

func addExact(a, b int64) int64 {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		panic(overflow{})
	}
	return s
}

func toIntExact(v int64) int32 {
	if v < math.MinInt32 || v > math.MaxInt32 {
		panic(overflow{})
	}
	return int32(v)
}

// exact runs f and turns an overflow into ok == false.
func exact(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isOverflow := r.(overflow); !isOverflow {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

// Parse states of stringToInterval.
const (
	statePrefix = iota
	stateTrimBeforeSign
	stateSign
	stateTrimBeforeValue
	stateValue
	stateFraction
	stateTrimBeforeUnit
	stateUnitBegin
	stateUnitSuffix
	stateUnitEnd
)

// StringToInterval is Spark's IntervalUtils.stringToInterval (Spark 3.5,
// SparkIntervalUtils): a case-insensitive list of "<number> <unit>" pairs,
// optionally after the word "interval", e.g. "1 day 2 hours", "-1.5
// seconds", "interval 3 weeks". Units: microsecond, millisecond, second,
// minute, hour, day, week, month, year, each singular or plural (no
// abbreviation); a number may carry a sign (white space allowed after it)
// and, for seconds only, a fraction of up to nine digits, truncated to the
// microsecond. Parts may repeat and come in any order; they add up. White
// space is any of Java's Character.isWhitespace.
//
// Each failure is an *Error whose class is the one Spark 4 gives it
// (INVALID_INTERVAL_FORMAT.INVALID_UNIT, .INVALID_FRACTION, ...).
func StringToInterval(input string) (Calendar, error) {
	s := lowerASCII(trimAll(input))
	if s == "" {
		return Calendar{}, &Error{classEmpty, "the interval string is empty"}
	}
	word := func(i int) string {
		strs := javaSplit(s)
		right := len(javaSplit(s[i:]))
		if k := len(strs) - right; k >= 0 && k < len(strs) {
			return Echo(strs[k])
		}
		return ""
	}
	var (
		state        = statePrefix
		i            int
		value        int64
		negative     bool
		months, days int32
		micros       int64
		scale        int32
		fraction     int32
		pointFirst   bool
	)
	const initialScale = 100_000_000 // NANOS_PER_SECOND / 10
	fail := func(class, format string, a ...any) (Calendar, error) {
		return Calendar{}, &Error{class, fmt.Sprintf(format, a...)}
	}
	for i < len(s) {
		b := s[i]
		switch state {
		case statePrefix:
			if strings.HasPrefix(s, "interval") {
				switch {
				case len(s) == len("interval"):
					return Calendar{}, &Error{classEmpty, "the interval string is empty after \"interval\""}
				case !isSpace(s[len("interval")]):
					return fail(classPrefix, "invalid interval prefix %s", word(i))
				}
				i += len("interval") + 1
			}
			state = stateTrimBeforeSign
		case stateTrimBeforeSign, stateTrimBeforeValue, stateTrimBeforeUnit:
			if isSpace(b) {
				i++
			} else {
				state++ // the state after each trim state is the next one
			}
		case stateSign:
			value, fraction = 0, 0
			state = stateTrimBeforeValue
			scale = -1
			pointFirst = false
			switch {
			case b == '-':
				negative = true
				i++
			case b == '+':
				negative = false
				i++
			case b >= '0' && b <= '9':
				negative = false
			case b == '.':
				negative = false
				scale = initialScale
				pointFirst = true
				i++
				state = stateFraction
			default:
				return fail(classNumber, "unrecognized number '%s'", word(i))
			}
		case stateValue:
			switch {
			case b >= '0' && b <= '9':
				if !exact(func() { value = addExact(mulExact(10, value), int64(b-'0')) }) {
					return fail(classArithmetic, "long overflow")
				}
			case isSpace(b):
				state = stateTrimBeforeUnit
			case b == '.':
				scale = initialScale
				state = stateFraction
			default:
				return fail(classValue, "invalid value '%s'", word(i))
			}
			i++
		case stateFraction:
			switch {
			case b >= '0' && b <= '9' && scale > 0:
				fraction += int32(b-'0') * scale
				scale /= 10
			case isSpace(b) && (!pointFirst || scale < initialScale):
				fraction /= 1000 // NANOS_PER_MICROS
				state = stateTrimBeforeUnit
			case b >= '0' && b <= '9':
				return fail(classPrecision, "interval can only support nanosecond precision, '%s' is out of range", word(i))
			default:
				return fail(classValue, "invalid value '%s'", word(i))
			}
			i++
		case stateUnitBegin:
			if b != 's' && scale >= 0 {
				return fail(classFraction, "'%s' cannot have fractional part", word(i))
			}
			if negative {
				value, fraction = -value, -fraction
			}
			matched := ""
			ok := exact(func() {
				at := func(u string) bool {
					if strings.HasPrefix(s[i:], u) {
						matched = u
						return true
					}
					return false
				}
				switch {
				case b == 'y' && at("year"):
					months = toIntExact(addExact(int64(months), mulExact(12, value)))
				case b == 'w' && at("week"):
					days = toIntExact(addExact(int64(days), mulExact(7, value)))
				case b == 'd' && at("day"):
					days = toIntExact(int64(days) + int64(toIntExact(value)))
				case b == 'h' && at("hour"):
					micros = addExact(micros, mulExact(value, microsPerHour))
				case b == 's' && at("second"):
					micros = addExact(addExact(micros, mulExact(value, microsPerSecond)), int64(fraction))
				case b == 'm' && at("month"):
					months = toIntExact(int64(months) + int64(toIntExact(value)))
				case b == 'm' && at("minute"):
					micros = addExact(micros, mulExact(value, microsPerMinute))
				case b == 'm' && at("millisecond"):
					micros = addExact(micros, mulExact(value, microsPerMillis))
				case b == 'm' && at("microsecond"):
					micros = addExact(micros, value)
				}
			})
			if !ok {
				return fail(classArithmetic, "%s overflow", overflowKind(matched))
			}
			if matched == "" {
				return fail(classUnit, "invalid unit '%s' (want %s)", word(i), unitList)
			}
			i += len(matched)
			state = stateUnitSuffix
		case stateUnitSuffix:
			switch {
			case b == 's':
				state = stateUnitEnd
			case isSpace(b):
				state = stateTrimBeforeSign
			default:
				return fail(classUnit, "invalid unit '%s' (want %s)", word(i), unitList)
			}
			i++
		case stateUnitEnd:
			if !isSpace(b) {
				return fail(classUnit, "invalid unit '%s' (want %s)", word(i), unitList)
			}
			i++
			state = stateTrimBeforeSign
		}
	}
	switch state {
	case stateUnitSuffix, stateUnitEnd, stateTrimBeforeSign:
		return Calendar{Months: months, Days: days, Micros: micros}, nil
	case stateTrimBeforeValue:
		return fail(classMissingNumber, "expect a number after '%s' but hit EOL", word(i))
	case stateValue, stateFraction:
		return fail(classMissingUnit, "expect a unit name after '%s' but hit EOL", word(i))
	}
	return fail(classUnknown, "unknown error when parsing '%s'", word(i))
}

// overflowKind names the Java arithmetic that overflowed: Math.toIntExact
// ("integer overflow") for the month and day fields, Math.*Exact on longs
// ("long overflow") for the others.
func overflowKind(unit string) string {
	switch unit {
	case "year", "week", "day", "month":
		return "integer"
	}
	return "long"
}

// DurationMicros is IntervalUtils.getDuration in microseconds: a month
// counts 31 days, a day 24 hours. ok is false when the total overflows a
// long, where Spark throws ArithmeticException("long overflow").
func (c Calendar) DurationMicros() (micros int64, ok bool) {
	ok = exact(func() {
		m := mulExact(daysPerMonth*microsPerDay, int64(c.Months))
		d := mulExact(microsPerDay, int64(c.Days))
		micros = addExact(c.Micros, addExact(d, m))
	})
	return micros, ok
}

// FromIntervalString is IntervalUtils.fromIntervalString, the parser of
// Dataset.withWatermark's delay: text that starts with "interval" (after
// Java's trim, case-insensitively) is parsed as a Spark SQL interval
// literal (see parseLiteral), anything else by StringToInterval. Every
// failure is an *Error of class CANNOT_PARSE_INTERVAL whose message holds
// the cause's class and text.
func FromIntervalString(input string) (Calendar, error) {
	var (
		c   Calendar
		err error
	)
	if strings.HasPrefix(lowerASCII(strings.TrimFunc(input, func(r rune) bool { return r <= ' ' })), "interval") {
		c, err = parseLiteral(input)
	} else {
		c, err = StringToInterval(input)
	}
	if err != nil {
		return Calendar{}, &Error{ClassCannotParse, fmt.Sprintf("unable to parse '%s': %v", Echo(input), err)}
	}
	return c, nil
}

// ParseSpark parses a watermark delay exactly as Spark 3.5's
// Dataset.withWatermark(eventTime, delayThreshold) does and returns it in
// whole milliseconds, as EventTimeWatermark.getDelayMs stores it:
//
//   - the text goes through FromIntervalString ("10 seconds", "1 minute 30
//     seconds", "interval 2 hours", "interval '1 2:3:4' day to second",
//     "1.5 seconds"; not "10 s", "10 sec", "10 min", "1 h", "10ms",
//     "10seconds" or "1.5 minutes");
//   - its duration (IntervalUtils.getDuration: months of 31 days, years of
//     12 months) must fit a long of microseconds, else Spark 3.5 throws
//     ArithmeticException("long overflow") and Spark 4 the same exception
//     as [INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION] (its
//     IntervalMathUtils.withOverflow wraps the overflow; seen on pyspark
//     3.5.9 and 4.3.0);
//   - it must not be negative ("delay threshold (...) should not be
//     negative", e.g. "1 month -40 days");
//   - microseconds below a millisecond are dropped.
func ParseSpark(s string) (int64, error) {
	c, err := FromIntervalString(s)
	if err != nil {
		return 0, err
	}
	micros, ok := c.DurationMicros()
	if !ok {
		return 0, &Error{Msg: fmt.Sprintf("delay threshold (%s) overflows a long of microseconds (a month counts 31 days): ArithmeticException: long overflow (Spark 3.5), [INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION] (Spark 4)", Echo(s))}
	}
	if micros < 0 {
		return 0, &Error{Msg: fmt.Sprintf("requirement failed: delay threshold (%s) should not be negative", Echo(s))}
	}
	return micros / microsPerMillis, nil
}
