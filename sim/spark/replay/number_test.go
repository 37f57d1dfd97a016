package replay

import "testing"

func TestDecimal(t *testing.T) {
	same := [][]string{
		{"1", "1.0", "10e-1", "0.1e1", "1.000", "1E0"},
		{"0", "-0", "0.0", "0e5"},
		{"-2.5", "-25e-1"},
		{"1e999999", "10e999998"},
	}
	for _, group := range same {
		want := ""
		for _, s := range group {
			d, ok := parseDecimal(s)
			if !ok {
				t.Fatalf("%s: not parsed", s)
			}
			if want == "" {
				want = d.canonical()
			} else if d.canonical() != want {
				t.Errorf("%s = %s, want %s", s, d.canonical(), want)
			}
		}
	}
	if a, _ := parseDecimal("1"); a.canonical() == func() string { b, _ := parseDecimal("1.5"); return b.canonical() }() {
		t.Error("1 and 1.5 collide")
	}
	micros := map[string]int64{
		"10": 10_000_000, "10.0009": 10_000_900, "9.0000001": 9_000_000, "-1.5": -1_500_000,
		"-0.0000009": 0, "1e-7": 0, "1.7e9": 1_700_000_000_000_000, "0.000001": 1,
	}
	for s, want := range micros {
		d, _ := parseDecimal(s)
		if got, ok := d.micros(); !ok || got != want {
			t.Errorf("micros(%s) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"1e300", "9223372036855", "1e999999999"} {
		d, _ := parseDecimal(s)
		if _, ok := d.micros(); ok {
			t.Errorf("micros(%s): want out of range", s)
		}
	}
}
