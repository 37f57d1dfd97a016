package scenario

import (
	"math"
	"testing"
)

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"2000/s", 2000, true},
		{"2000", 2000, true},
		{"0", 0, true},
		{"120/m", 2, true},
		{"120/min", 2, true},
		{"120 / minute", 2, true},
		{"5000/h", 5000.0 / 3600, true},
		{"7200/hour", 2, true},
		{"3/sec", 3, true},
		{"1e3/s", 1000, true},
		{"-5/s", -5, true}, // parses; Validate rejects it
		{"5/x", 0, false},
		{"fast", 0, false},
		{"NaN/s", 0, false},
		{"", 0, false},
	} {
		got, err := ParseRate(c.in)
		if (err == nil) != c.ok || (c.ok && math.Abs(float64(got)-c.want) > 1e-12) {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestFileSafe(t *testing.T) {
	for name, want := range map[string]bool{
		"pair-keyed": true, "a": true, "v1.2_x": true, "9": true,
		"": false, "-x": false, ".x": false, "..": false, "a/b": false, "a b": false, "é": false,
	} {
		if fileSafe(name) != want {
			t.Errorf("fileSafe(%q) = %v, want %v", name, !want, want)
		}
	}
}
