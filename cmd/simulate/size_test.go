package main

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"": 0, "1": 1, "100B": 100, "256MiB": 256 << 20, "1GiB": 1 << 30,
		"2 GB": 2e9, "64KiB": 64 << 10, "3TiB": 3 << 40, "5MB": 5e6,
	}
	for in, want := range good {
		got, err := parseSize("--memory", in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1MiB", "12XB", "MiB", "1.5GiB", "9999999TiB", strings.Repeat("9", 200)} {
		_, err := parseSize("--memory", in)
		if err == nil {
			t.Errorf("parseSize(%q) accepted", in)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "--memory ") || !strings.Contains(msg, "want a size") || len(msg) > 160 {
			t.Errorf("parseSize(%q): %q: want one short line naming the flag and the expectation", in, msg)
		}
	}
}
