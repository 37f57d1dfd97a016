package eventlog

import (
	"errors"
	"fmt"
	"math"
)

// TimeUnit is how a time column is written: RFC 3339 text, or a number
// of seconds, milliseconds or microseconds since the epoch.
type TimeUnit string

// The time units. UnitAuto detects the unit from the first row (see
// Reader.Units).
const (
	UnitAuto    TimeUnit = ""
	UnitRFC3339 TimeUnit = "rfc3339"
	UnitSeconds TimeUnit = "s"
	UnitMillis  TimeUnit = "ms"
	UnitMicros  TimeUnit = "us"
)

// ParseTimeUnit parses a time unit as a scenario writes it: "rfc3339",
// "s" (also "seconds"), "ms" ("milliseconds"), "us" ("µs",
// "microseconds"); "" and "auto" are UnitAuto.
func ParseTimeUnit(s string) (TimeUnit, error) {
	switch s {
	case "", "auto":
		return UnitAuto, nil
	case "rfc3339", "RFC3339", "rfc 3339":
		return UnitRFC3339, nil
	case "s", "seconds", "second":
		return UnitSeconds, nil
	case "ms", "milliseconds", "millisecond":
		return UnitMillis, nil
	case "us", "µs", "microseconds", "microsecond":
		return UnitMicros, nil
	}
	return "", fmt.Errorf("unknown time unit %q (want rfc3339, s, ms, us or auto)", s)
}

// micros returns the number of microseconds of one unit of u (0 for
// RFC 3339 and auto).
func (u TimeUnit) micros() int64 {
	switch u {
	case UnitSeconds:
		return 1e6
	case UnitMillis:
		return 1e3
	case UnitMicros:
		return 1
	}
	return 0
}

// The magnitude bounds of unit detection: an epoch number below 1e11 is
// seconds (up to the year 5138), below 1e14 milliseconds, below 1e17
// microseconds; anything larger (nanoseconds) is refused.
const (
	maxSeconds = 1e11
	maxMillis  = 1e14
	maxMicros  = 1e17
)

// DetectUnit returns the unit of a time value as written: UnitRFC3339
// for text that is not a number, else the epoch unit its magnitude
// suggests (DetectUnit's bounds: below 1e11 seconds, below 1e14
// milliseconds, below 1e17 microseconds).
func DetectUnit(b []byte) (TimeUnit, error) {
	if !looksNumeric(b) {
		return UnitRFC3339, nil
	}
	ip, _, neg, ok := splitNumber(b)
	if !ok {
		return "", errNotTime
	}
	var v uint64
	for _, c := range ip {
		v = v*10 + uint64(c-'0')
		if v >= maxMicros {
			return "", errors.New("a number too large for epoch microseconds (nanoseconds are not supported)")
		}
	}
	_ = neg
	switch {
	case v < maxSeconds:
		return UnitSeconds, nil
	case v < maxMillis:
		return UnitMillis, nil
	}
	return UnitMicros, nil
}

// looksNumeric reports whether b starts like a number: an optional sign,
// then a digit, and has no '-' or ':' after its first byte (a date).
func looksNumeric(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	i := 0
	if b[0] == '-' || b[0] == '+' {
		i = 1
	}
	if i >= len(b) || b[i] < '0' || b[i] > '9' {
		return false
	}
	for _, c := range b[i:] {
		if c == '-' || c == ':' || c == 'T' || c == 't' || c == ' ' {
			return false
		}
	}
	return true
}

var errNotTime = errors.New("not a time")

// splitNumber splits a decimal number [+-]digits[.digits] into its
// integer and fraction digits.
func splitNumber(b []byte) (ip, frac []byte, neg, ok bool) {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 {
		return nil, nil, false, false
	}
	ip = b[:i]
	if i == len(b) {
		return ip, nil, neg, true
	}
	if b[i] != '.' {
		return nil, nil, false, false
	}
	frac = b[i+1:]
	if len(frac) == 0 {
		return nil, nil, false, false
	}
	for _, c := range frac {
		if c < '0' || c > '9' {
			return nil, nil, false, false
		}
	}
	return ip, frac, neg, true
}

// ParseTime parses a time value written in unit u (not UnitAuto) into
// microseconds since the epoch, UTC. Epoch numbers may carry a decimal
// fraction; digits below a microsecond are cut toward the past (floor),
// as are RFC 3339 fractions. It does not allocate on success.
func ParseTime(b []byte, u TimeUnit) (int64, error) {
	if u == UnitRFC3339 {
		return parseRFC3339(b)
	}
	per := u.micros()
	if per == 0 {
		return 0, fmt.Errorf("time unit %q cannot parse a value", u)
	}
	ip, frac, neg, ok := splitNumber(b)
	if !ok {
		return 0, errNotTime
	}
	var v int64
	for _, c := range ip {
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, errRange
		}
		v = v*10 + d
	}
	if v > math.MaxInt64/per {
		return 0, errRange
	}
	v *= per
	// The fraction in microseconds, floored; a remainder below a
	// microsecond makes a negative value one microsecond earlier.
	var f int64
	rest := false
	scale := per
	for _, c := range frac {
		if scale >= 10 {
			scale /= 10
			f += int64(c-'0') * scale
		} else if c != '0' {
			rest = true
		}
	}
	v += f
	if neg {
		v = -v
		if rest {
			v--
		}
	}
	return v, nil
}

var errRange = errors.New("out of range")

// daysIn returns the days of month m (1-12) of year y.
func daysIn(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic
// Gregorian date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// digits returns the value of the n digits of b at i, and false if
// they are not all digits or b is too short.
func digits(b []byte, i, n int) (int64, bool) {
	if i+n > len(b) {
		return 0, false
	}
	var v int64
	for _, c := range b[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// parseRFC3339 parses YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm), the T also
// as t or a space and the Z also as z, into microseconds since the
// epoch, UTC.
func parseRFC3339(b []byte) (int64, error) {
	y, ok1 := digits(b, 0, 4)
	mo, ok2 := digits(b, 5, 2)
	d, ok3 := digits(b, 8, 2)
	h, ok4 := digits(b, 11, 2)
	mi, ok5 := digits(b, 14, 2)
	s, ok6 := digits(b, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || b[4] != '-' || b[7] != '-' ||
		(b[10] != 'T' && b[10] != 't' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return 0, errNotTime
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59 {
		return 0, errors.New("a date or time field out of range")
	}
	i := 19
	var frac int64
	if i < len(b) && (b[i] == '.' || b[i] == ',') {
		i++
		n := 0
		scale := int64(1e6)
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if scale >= 10 {
				scale /= 10
				frac += int64(b[i]-'0') * scale
			}
			i++
			n++
		}
		if n == 0 {
			return 0, errNotTime
		}
	}
	if i >= len(b) {
		return 0, errors.New("no time zone offset (want Z or ±hh:mm)")
	}
	var off int64
	switch b[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		oh, okh := digits(b, i+1, 2)
		om, okm := digits(b, i+4, 2)
		if !okh || !okm || b[i+3] != ':' || oh > 24 || om > 60 { // as lenient as Go's time.Parse
			return 0, errors.New("a bad time zone offset (want Z or ±hh:mm)")
		}
		off = (oh*60 + om) * 60
		if b[i] == '-' {
			off = -off
		}
		i += 6
	default:
		return 0, errors.New("no time zone offset (want Z or ±hh:mm)")
	}
	if i != len(b) {
		return 0, errNotTime
	}
	secs := daysFromCivil(y, mo, d)*86400 + h*3600 + mi*60 + s - off
	return secs*1e6 + frac, nil
}
