package interval

// The human form of numbers, beside that of durations (Format): counts
// with thousands separators, sizes in binary units, rates as percentages.
// Everything that prints them (reports, the planner, compare, the command
// line, the messages of fileio) uses these, so that a count, a size or a
// rate reads the same everywhere; they live in this leaf so that every
// folder may import them.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Count renders n with thousands separators, 1234567 as "1,234,567",
// because design reviews read counts, not digit strings.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	if n < 0 {
		// The sign is cut from the digits, not negated away: -n overflows
		// for math.MinInt64.
		b.WriteByte('-')
		s = s[1:]
	}
	if len(s) <= 3 {
		return b.String() + s
	}
	head := len(s) % 3
	if head > 0 {
		b.WriteString(s[:head])
	}
	for i := head; i < len(s); i += 3 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// Bytes renders a byte count in binary units with about three
// significant digits: "512 B", "12.3 KiB", "1.50 GiB".
func Bytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	v := float64(n)
	u := -1
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, units[u])
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, units[u])
	default:
		return fmt.Sprintf("%.2f %s", v, units[u])
	}
}

// Percent renders a rate in [0, 1] as a percentage with about three
// significant digits. It never rounds a rate below 1 up to "100%" nor a
// rate above 0 down to "0%", since
// "missed 100%" and "lost 0%" are findings in themselves.
func Percent(r float64) string {
	p := r * 100
	switch {
	case p == 0:
		return "0%"
	case p == 100:
		return "100%"
	case p > 99.9 && p < 100:
		return "99.9%"
	case p >= 10:
		return fmt.Sprintf("%.1f%%", p)
	case p >= 1:
		return fmt.Sprintf("%.2f%%", p)
	}
	// Two significant digits for small rates: 0.0012%.
	dec := int(-math.Floor(math.Log10(p))) + 1
	if dec > 12 {
		dec = 12
	}
	return strconv.FormatFloat(p, 'f', dec, 64) + "%"
}

// Size renders n as a power-of-two size, exact when it is a whole number
// of its unit: "64 MiB", "1.5 KiB"; for limits, which are round.
func Size(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// PercentBeside renders the rate r as Percent does, with more digits when
// that alone would print r the same as target although they differ, so
// that a rate printed beside its target tells a miss from a meet:
// 0.10146% beside a 0.1% target is "0.1015%", not "0.10%".
func PercentBeside(r, target float64) string {
	s := Percent(r)
	if r == target || s != Percent(target) && !sameDigits(s, Percent(target)) {
		return s
	}
	p := r * 100
	for dec := 1; dec <= 15; dec++ {
		s = strconv.FormatFloat(p, 'f', dec, 64)
		t := strconv.FormatFloat(target*100, 'f', dec, 64)
		if s != t {
			return s + "%"
		}
	}
	return strconv.FormatFloat(p, 'g', -1, 64) + "%"
}

// sameDigits reports whether two percentages print the same number
// ("0.10%" and "0.1%").
func sameDigits(a, b string) bool {
	x, errA := strconv.ParseFloat(strings.TrimSuffix(a, "%"), 64)
	y, errB := strconv.ParseFloat(strings.TrimSuffix(b, "%"), 64)
	return errA == nil && errB == nil && x == y
}
