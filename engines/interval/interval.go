// Package interval parses the time spans dedupsim accepts, in two
// grammars that must not be confused:
//
//   - ParseSpark is the delay of a withWatermark inside a query: exactly
//     what Spark 3.5's Dataset.withWatermark accepts (IntervalUtils
//     .fromIntervalString, see StringToInterval and the SQL literal forms)
//     and nothing else, so that a query dedupsim runs is one Spark runs,
//     with the same delay in milliseconds (EventTimeWatermark.getDelayMs:
//     a month counts 31 days, microseconds below a millisecond dropped).
//     "10 s", "10 sec", "10 min", "1 h", "10ms", "10seconds" and "1.5
//     minutes" are rejected, with Spark's error class in the message.
//   - Parse is a scenario's own durations (trigger, duration, sweep
//     delays, distribution parameters): friendly forms, Go durations
//     ("90s", "1h30m"), days ("7d", "1d12h") and unit words ("20 minutes",
//     "10 min", "1.5 hours").
//
// Where dedupsim writes a delay into a query itself (a sweep replacing a
// query's delay), it renders it in units ParseSpark accepts.
//
// It is a leaf: it imports nothing of the module, so that every layer may
// use it (the generators' configuration prints its durations with Format,
// reports format spans with it) without breaking the one-way import map
// of docs/architecture.md.
package interval

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Millisecond-denominated unit sizes, as Spark's IntervalUtils counts them.
const (
	msPerSecond = int64(1000)
	msPerMinute = 60 * msPerSecond
	msPerHour   = 60 * msPerMinute
	msPerDay    = 24 * msPerHour
	msPerWeek   = 7 * msPerDay
	msPerMonth  = 31 * msPerDay // Spark: "We define month as `31 days`".
	msPerYear   = 12 * msPerMonth
)

// wordMicros maps every unit spelling of Parse's word form to its size in
// microseconds, so that fractional values ("1.5 hours") stay exact until
// the final truncation to milliseconds. It is deliberately wider than
// Spark's grammar: it is for scenario files, never for queries.
var wordMicros = map[string]int64{
	"microsecond": 1, "microseconds": 1, "us": 1,
	"millisecond": 1000, "milliseconds": 1000, "ms": 1000,
	"second": 1000 * msPerSecond, "seconds": 1000 * msPerSecond, "sec": 1000 * msPerSecond, "secs": 1000 * msPerSecond, "s": 1000 * msPerSecond,
	"minute": 1000 * msPerMinute, "minutes": 1000 * msPerMinute, "min": 1000 * msPerMinute, "mins": 1000 * msPerMinute,
	"hour": 1000 * msPerHour, "hours": 1000 * msPerHour, "h": 1000 * msPerHour,
	"day": 1000 * msPerDay, "days": 1000 * msPerDay, "d": 1000 * msPerDay,
	"week": 1000 * msPerWeek, "weeks": 1000 * msPerWeek,
	"month": 1000 * msPerMonth, "months": 1000 * msPerMonth,
	"year": 1000 * msPerYear, "years": 1000 * msPerYear,
}

// ErrEmpty is returned for an empty duration.
var ErrEmpty = errors.New("empty interval")

// ErrTooLong is returned for a duration that is well formed but longer
// than a time.Duration holds (MaxText), so that a message says what is
// wrong with "1000000d" instead of calling it no duration.
var ErrTooLong = errors.New("longer than a duration can be")

// MaxText is the longest duration Parse accepts, in its own form: a
// time.Duration holds about 292 years.
var MaxText = fmt.Sprintf("%dd%s (about 292 years)", maxDurationMillis/msPerDay, Format(time.Duration(maxDurationMillis%msPerDay)*time.Millisecond))

// parseWords parses Parse's word form: "20 minutes", "1 minute 30 seconds",
// "interval 2 hours", "10 min", "1.5 hours", "10seconds", in whole
// microseconds (so that "1 microsecond" is 1µs, not 0, and a check of a
// whole millisecond can say so). Negative totals are rejected.
func parseWords(s string) (int64, error) {
	fields := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(fields) > 0 && fields[0] == "interval" {
		fields = fields[1:]
	}
	if len(fields) == 0 {
		return 0, fmt.Errorf("%q: %w: want a number and a unit, e.g. \"10 seconds\"", s, ErrEmpty)
	}
	// Accept "10seconds" and "10 seconds" alike by splitting glued tokens.
	var toks []string
	for _, f := range fields {
		i := 0
		for i < len(f) && (f[i] == '-' || f[i] == '+' || f[i] == '.' || (f[i] >= '0' && f[i] <= '9')) {
			i++
		}
		if i > 0 && i < len(f) {
			toks = append(toks, f[:i], f[i:])
		} else {
			toks = append(toks, f)
		}
	}
	if len(toks)%2 != 0 {
		return 0, fmt.Errorf("%q: want pairs of a number and a unit, e.g. \"1 minute 30 seconds\"", s)
	}
	total := new(big.Rat)
	for i := 0; i < len(toks); i += 2 {
		num, unit := toks[i], toks[i+1]
		size, ok := wordMicros[unit]
		if !ok {
			return 0, fmt.Errorf("%q: unknown unit %q (want milliseconds, seconds, minutes, hours, days or weeks)", s, unit)
		}
		v, ok := new(big.Rat).SetString(num)
		if !ok || strings.ContainsAny(num, "eE/") {
			return 0, fmt.Errorf("%q: %q is not a number", s, num)
		}
		total.Add(total, v.Mul(v, new(big.Rat).SetInt64(size)))
	}
	if total.Sign() < 0 {
		return 0, fmt.Errorf("%q: a duration must not be negative", s)
	}
	micros := new(big.Int).Quo(total.Num(), total.Denom())
	if !micros.IsInt64() || micros.Int64() > math.MaxInt64/int64(time.Microsecond) {
		return 0, fmt.Errorf("%q: %w", s, ErrTooLong)
	}
	return micros.Int64(), nil
}

// Parse parses a scenario duration in any friendly form: a Go duration
// ("90s", "1h30m", "250ms"), a Go duration with days ("7d", "1d12h"), or
// unit words ("20 minutes", "interval 1 hour", "10 min"). A bare "0" is
// zero. Negative durations are returned as such; callers decide whether
// they are allowed. It is not the grammar of a query's delay (ParseSpark).
func Parse(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("%w: want a duration such as 90s, 20m, 1h30m, 7d or \"20 minutes\"", ErrEmpty)
	}
	if t == "0" {
		return 0, nil
	}
	if d, err := time.ParseDuration(t); err == nil {
		return d, nil
	}
	if d, ok := parseWithDays(t); ok {
		return d, nil
	}
	neg := strings.HasPrefix(t, "-")
	us, err := parseWords(strings.TrimPrefix(t, "-"))
	if errors.Is(err, ErrTooLong) || err != nil && compactTooLong(t) {
		return 0, fmt.Errorf("%q: %w: want at most %s", s, ErrTooLong, MaxText)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: want a Go duration (90s, 1h30m), days (7d) or a Spark interval (\"20 minutes\")", s)
	}
	d := time.Duration(us) * time.Microsecond
	if neg {
		d = -d
	}
	return d, nil
}

// compactUnits are the units of Go's duration form and of days, in
// nanoseconds.
var compactUnits = map[string]int64{"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9, "d": 86400e9}

// compactTooLong reports whether s is a Go duration, days allowed ("7d",
// "1d12h"), that is well formed but too long for a time.Duration.
func compactTooLong(s string) bool {
	body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	total := new(big.Rat)
	for body != "" {
		i := 0
		for i < len(body) && (body[i] == '.' || body[i] >= '0' && body[i] <= '9') {
			i++
		}
		j := i
		for j < len(body) && !(body[j] == '.' || body[j] >= '0' && body[j] <= '9') {
			j++
		}
		v, ok := new(big.Rat).SetString(body[:i])
		unit, known := compactUnits[body[i:j]]
		if i == 0 || !ok || !known {
			return false
		}
		total.Add(total, v.Mul(v, new(big.Rat).SetInt64(unit)))
		body = body[j:]
	}
	return total.Cmp(new(big.Rat).SetInt64(math.MaxInt64)) > 0
}

// parseWithDays accepts a Go duration whose leading component is in days,
// such as "7d" or "1d12h30m".
func parseWithDays(s string) (time.Duration, bool) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	i := 0
	for i < len(body) && (body[i] == '.' || (body[i] >= '0' && body[i] <= '9')) {
		i++
	}
	if i == 0 || i >= len(body) || body[i] != 'd' {
		return 0, false
	}
	days, ok := new(big.Rat).SetString(body[:i])
	if !ok {
		return 0, false
	}
	days.Mul(days, new(big.Rat).SetInt64(int64(24*time.Hour)))
	if !days.IsInt() || !days.Num().IsInt64() {
		return 0, false
	}
	d := time.Duration(days.Num().Int64())
	if rest := body[i+1:]; rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || r < 0 || d > math.MaxInt64-r {
			return 0, false
		}
		d += r
	}
	if neg {
		d = -d
	}
	return d, true
}

// Format renders d compactly for humans and file names: whole days as "7d",
// otherwise Go's form without zero trailing units ("20m", "1h30m", "90ms").
func Format(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// maxDurationMillis is the largest number of milliseconds a time.Duration
// holds (about 106,751.99 days): beyond it, Format's argument would wrap.
const maxDurationMillis = int64(math.MaxInt64 / int64(time.Millisecond))

// FormatMillis renders ms milliseconds as Format does, over the whole
// int64 range: a span beyond what a time.Duration holds (a Spark delay of
// 106,752 days or more) is written in days and the rest ("106752d",
// "292471208d16h47m4.807s"), never as a wrapped, negative duration.
func FormatMillis(ms int64) string {
	if ms >= -maxDurationMillis && ms <= maxDurationMillis {
		return Format(time.Duration(ms) * time.Millisecond)
	}
	neg := ms < 0
	u := uint64(ms)
	if neg {
		u = -u // two's complement: right for math.MinInt64 too
	}
	s := strconv.FormatUint(u/uint64(msPerDay), 10) + "d"
	if rem := u % uint64(msPerDay); rem != 0 {
		s += Format(time.Duration(rem) * time.Millisecond)
	}
	if neg {
		s = "-" + s
	}
	return s
}

// FormatSeconds renders a span of sec seconds (results files' unit),
// rounded to the millisecond, as FormatMillis does; a span beyond the int64
// range of milliseconds is written in whole days.
func FormatSeconds(sec float64) string {
	ms := math.Round(sec * 1000)
	switch {
	case math.IsNaN(ms):
		return "NaN"
	case ms >= -math.MaxInt64 && ms < math.MaxInt64:
		return FormatMillis(int64(ms))
	}
	return strconv.FormatFloat(math.Round(sec/86400), 'f', 0, 64) + "d"
}
