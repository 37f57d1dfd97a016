package metrics

import (
	"math"
	"testing"
)

func TestHumanFormats(t *testing.T) {
	cases := []struct{ got, want string }{
		{FormatCount(0), "0"},
		{FormatCount(999), "999"},
		{FormatCount(1234567), "1,234,567"},
		{FormatCount(-1234), "-1,234"},
		{FormatBytes(512), "512 B"},
		{FormatBytes(1536), "1.50 KiB"},
		{FormatBytes(300 << 20), "300 MiB"},
		{FormatBytes(3 << 30), "3.00 GiB"},
		{FormatPercent(0), "0%"},
		{FormatPercent(1), "100%"},
		{FormatPercent(0.99999), "99.9%"},
		{FormatPercent(0.638), "63.8%"},
		{FormatPercent(0.0059), "0.59%"},
		{FormatPercent(0.000001), "0.00010%"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

// TestFormatCountExtremes covers the ends of int64: -n overflows for
// math.MinInt64, so a sign taken by negating recursed forever.
func TestFormatCountExtremes(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{
		{math.MinInt64, "-9,223,372,036,854,775,808"},
		{math.MaxInt64, "9,223,372,036,854,775,807"},
		{-999, "-999"},
		{-1000, "-1,000"},
		{-100000, "-100,000"},
		{100000, "100,000"},
	}
	for _, c := range cases {
		if got := FormatCount(c.n); got != c.want {
			t.Errorf("FormatCount(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
