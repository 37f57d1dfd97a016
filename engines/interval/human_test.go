package interval

import (
	"math"
	"testing"
)

func TestHumanFormats(t *testing.T) {
	cases := []struct{ got, want string }{
		{Count(0), "0"},
		{Count(999), "999"},
		{Count(1234567), "1,234,567"},
		{Count(-1234), "-1,234"},
		{Bytes(512), "512 B"},
		{Bytes(1536), "1.50 KiB"},
		{Bytes(300 << 20), "300 MiB"},
		{Bytes(3 << 30), "3.00 GiB"},
		{Percent(0), "0%"},
		{Percent(1), "100%"},
		{Percent(0.99999), "99.9%"},
		{Percent(0.638), "63.8%"},
		{Percent(0.0059), "0.59%"},
		{Percent(0.000001), "0.00010%"},
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
		if got := Count(c.n); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{512: "512 B", 1536: "1.5 KiB", 1 << 20: "1 MiB", 64 << 20: "64 MiB", 3 << 40: "3 TiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestCountGroups holds compare's cases from when it grouped digits itself.
func TestCountGroups(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 1883002: "1,883,002"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestFormatMillisWholeRange: a span beyond what a time.Duration holds (a
// Spark delay of 106,752 days or more) prints as days, never as a wrapped,
// negative duration (issue 33).
func TestFormatMillisWholeRange(t *testing.T) {
	const day = int64(86_400_000)
	cases := []struct {
		ms   int64
		want string
	}{
		{0, "0s"},
		{90_000, "1m30s"},
		{7 * day, "7d"},
		{106_751 * day, "106751d"},
		{106_752 * day, "106752d"},
		{106_752*day + 3_600_000, "106752d1h"},
		{-106_752 * day, "-106752d"},
		{math.MaxInt64, "106751991167d7h12m55.807s"},
		{math.MinInt64, "-106751991167d7h12m55.808s"},
	}
	for _, c := range cases {
		if got := FormatMillis(c.ms); got != c.want {
			t.Errorf("FormatMillis(%d) = %q, want %q", c.ms, got, c.want)
		}
	}
	if got, want := FormatSeconds(106_752*86_400), "106752d"; got != want {
		t.Errorf("FormatSeconds(106752 days) = %q, want %q", got, want)
	}
	if got, want := FormatSeconds(1e20*86_400), "100000000000000000000d"; got != want {
		t.Errorf("FormatSeconds(1e20 days) = %q, want %q", got, want)
	}
}
