package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// formatCount renders n with thousands separators, 1234567 as "1,234,567",
// because design reviews read counts, not digit strings.
func formatCount(n int64) string {
	if n < 0 {
		return "-" + formatCount(-n)
	}
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	head := len(s) % 3
	if head > 0 {
		b.WriteString(s[:head])
	}
	for i := head; i < len(s); i += 3 {
		if b.Len() > 0 {
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

// rate returns num/den, or 0 when den is 0.
func rate(num, den int64) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// secondsDuration converts seconds to a time.Duration, rounded to the
// millisecond, the resolution of results files.
func secondsDuration(sec float64) time.Duration {
	return time.Duration(math.Round(sec*1000)) * time.Millisecond
}

// formatDelay renders a watermark delay in seconds the way scenarios write
// durations ("20m", "1h30m", "7d"), or "none" for a query without a
// watermark.
func formatDelay(sec *float64) string {
	if sec == nil {
		return "none"
	}
	return interval.Format(secondsDuration(*sec))
}

// formatSpan renders a span of seconds as a duration rounded to what a
// reader needs: "42s", "4m50s", "1h2m", "6d23h".
func formatSpan(sec float64) string {
	if sec < 0 {
		return "-" + formatSpan(-sec)
	}
	d := secondsDuration(sec)
	switch {
	case d >= 24*time.Hour:
		d = d.Round(time.Hour)
		days, hours := d/(24*time.Hour), (d%(24*time.Hour))/time.Hour
		if hours == 0 {
			return fmt.Sprintf("%dd", days)
		}
		return fmt.Sprintf("%dd%dh", days, hours)
	case d >= time.Hour:
		d = d.Round(time.Minute)
	case d >= time.Minute:
		d = d.Round(time.Second)
	}
	return interval.Format(d)
}

// formatOffset renders seconds after the scenario's start as a clock
// reading, "00:40" or "01:30:15" (hours may exceed 24), the way findings
// and chart labels name moments.
func formatOffset(sec float64) string {
	neg := sec < 0
	if neg {
		sec = -sec
	}
	total := int64(math.Round(sec))
	h, m, s := total/3600, total/60%60, total%60
	out := fmt.Sprintf("%02d:%02d", h, m)
	if s != 0 {
		out += fmt.Sprintf(":%02d", s)
	}
	if neg {
		out = "-" + out
	}
	return out
}

// humanNumber renders an axis value compactly: 950, 1.5k, 10k, 2.5M, 1G.
func humanNumber(v float64) string {
	a := math.Abs(v)
	sign := ""
	if v < 0 {
		sign = "-"
	}
	switch {
	case a == 0:
		return "0"
	case a >= 1e9:
		return sign + trimFloat(a/1e9) + "G"
	case a >= 1e6:
		return sign + trimFloat(a/1e6) + "M"
	case a >= 1e3:
		return sign + trimFloat(a/1e3) + "k"
	}
	return sign + trimFloat(a)
}

// trimFloat prints v with at most three significant digits and no
// trailing zeros.
func trimFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', 3, 64)
}
