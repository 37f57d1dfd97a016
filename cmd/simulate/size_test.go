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
	// Each refusal says what is wrong with the value: "1PiB" said "want
	// a size above 0", which it is.
	bad := map[string]string{
		"0": "want a size above 0", "-1MiB": "want a size above 0",
		"12XB": "want a whole number with an optional unit", "MiB": "want a whole number with an optional unit",
		"1.5GiB": "want a whole number with an optional unit", "1PiB": "unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
		"9999999TiB": "too large: at most 4194304TiB", strings.Repeat("9", 200): "too large",
	}
	for in, want := range bad {
		_, err := parseSize("--memory", in)
		if err == nil {
			t.Errorf("parseSize(%q) accepted", in)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "--memory ") || !strings.Contains(msg, want) || len(msg) > 200 || strings.Contains(msg, "\n") {
			t.Errorf("parseSize(%q): %q: want one short line naming the flag and saying %q", in, msg, want)
		}
	}
}
