package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The human forms of the numbers a results folder holds, shared by
// everything that prints them for people (reports, the planner,
// bench-stores), so that a count, a size or a rate reads the same
// everywhere.

// FormatCount renders n with thousands separators, 1234567 as "1,234,567",
// because design reviews read counts, not digit strings.
func FormatCount(n int64) string {
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

// FormatBytes renders a byte count in binary units: "512 B", "12.3 KiB",
// "1.50 GiB". Reports, the planner and bench-stores all print sizes
// through it, so a size reads the same everywhere.
func FormatBytes(n int64) string {
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

// FormatPercent renders a rate in [0, 1] as a percentage with about three
// significant digits. It never rounds a rate below 1 up to "100%" nor a
// rate above 0 down to "0%", since
// "missed 100%" and "lost 0%" are findings in themselves.
func FormatPercent(r float64) string {
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
