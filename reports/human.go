package reports

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"

	"github.com/dedupsim/dedupsim/metrics"
)

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
	return interval.FormatSeconds(*sec)
}

// formatSpan renders a span of seconds as a duration rounded to what a
// reader needs: "42s", "4m50s", "1h2m", "6d23h".
func formatSpan(sec float64) string {
	if sec < 0 {
		return "-" + formatSpan(-sec)
	}
	if sec >= 86400 {
		// Days and hours, in floating point: a span beyond what a
		// time.Duration holds (twice a delay of 60,000 days) cannot wrap.
		hours := math.Round(sec / 3600)
		days := math.Floor(hours / 24)
		out := strconv.FormatFloat(days, 'f', 0, 64) + "d"
		if h := hours - days*24; h != 0 {
			out += strconv.FormatFloat(h, 'f', 0, 64) + "h"
		}
		return out
	}
	d := secondsDuration(sec)
	switch {
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

// formatHorizon renders how long q remembers a key by its engine's own
// name: Spark's watermark delay ("10m", or "none"), and for another engine
// its horizon with its name ("TTL 10m", "W 20m", "d 10m", "TTL none" for a
// Flink query that never forgets).
func formatHorizon(q *metrics.QuerySummary) string {
	if q.Horizon == nil || q.Horizon.Name == "" {
		return formatDelay(q.Delay)
	}
	return q.Horizon.Name + " " + formatDelay(q.Horizon.Seconds)
}
