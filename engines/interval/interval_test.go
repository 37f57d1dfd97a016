package interval

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSpark(t *testing.T) {
	ok := map[string]int64{
		"10 seconds":              10_000,
		"10 second":               10_000,
		"4610 milliseconds":       4610,
		"1 hour":                  3_600_000,
		"1 minute 30 seconds":     90_000,
		"interval 2 hours":        7_200_000,
		"INTERVAL 1 Day":          86_400_000,
		"2 weeks":                 14 * 86_400_000,
		"1 month":                 31 * 86_400_000,
		"1.5 seconds":             1500,
		"1500 microseconds":       1,
		"999 microseconds":        0,
		"0 seconds":               0,
		"  20   minutes  ":        1_200_000,
		"1 day 2 hours 3 minutes": 86_400_000 + 7_200_000 + 180_000,
	}
	for in, want := range ok {
		got, err := ParseSpark(in)
		if err != nil || got != want {
			t.Errorf("ParseSpark(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "interval", "10", "ten seconds", "10 parsecs", "-1 second", "10 seconds 5", "1e3 seconds"} {
		if _, err := ParseSpark(in); err == nil {
			t.Errorf("ParseSpark(%q): want an error", in)
		}
	}
}

func TestParse(t *testing.T) {
	ok := map[string]time.Duration{
		"90s": 90 * time.Second, "1h30m": 90 * time.Minute, "7d": 7 * 24 * time.Hour, "1d12h": 36 * time.Hour,
		"0": 0, "20 minutes": 20 * time.Minute, "250ms": 250 * time.Millisecond, "-5s": -5 * time.Second,
		"1.5d": 36 * time.Hour,
		// Friendly words that a query's delay may not use (ParseSpark).
		"10 min": 10 * time.Minute, "1.5 hours": 90 * time.Minute, "10seconds": 10 * time.Second, "1 h": time.Hour,
	}
	for in, want := range ok {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "5 parsecs", "d", "1d-2h"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q): want an error", in)
		}
	}
}

func TestFormatRoundTrips(t *testing.T) {
	for _, d := range []time.Duration{0, time.Millisecond, 90 * time.Second, 20 * time.Minute, time.Hour, 36 * time.Hour, 7 * 24 * time.Hour, 1500 * time.Millisecond} {
		got, err := Parse(Format(d))
		if err != nil || got != d {
			t.Errorf("Parse(Format(%v) = %q) = %v, %v", d, Format(d), got, err)
		}
	}
}

// TestParseTooLong: a well-formed duration too long for a time.Duration
// (window: 1000000d) was reported as "not a duration"; it is ErrTooLong,
// with the largest one accepted.
func TestParseTooLong(t *testing.T) {
	for _, s := range []string{"1000000d", "200000d", "106752d", "2562048h", "1000000 days", "-1000000d", "106751d24h"} {
		_, err := Parse(s)
		if !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "want at most 106751d23h47m16.854s (about 292 years)") {
			t.Errorf("Parse(%q) = %v; want ErrTooLong naming the largest duration", s, err)
		}
	}
	for _, s := range []string{"106751d", "2562047h", "10 min", "7d"} {
		if _, err := Parse(s); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
	for _, s := range []string{"10x", "abc", "1d1x"} {
		if _, err := Parse(s); err == nil || errors.Is(err, ErrTooLong) {
			t.Errorf("Parse(%q) = %v; want not a duration", s, err)
		}
	}
}
