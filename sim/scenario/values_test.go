package scenario

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
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

func TestJSONForms(t *testing.T) {
	r := Rate(5000.0 / 3600)
	for _, c := range []struct {
		v    any
		want string
	}{
		{Duration(2 * time.Hour), `"2h"`},
		{Duration(90 * time.Second), `"1m30s"`},
		{Duration(7 * 24 * time.Hour), `"7d"`},
		{Duration(0), `"0s"`},
		{Rate(2000), `"2000/s"`},
		{r, `"1.3888888888888888/s"`},
		{Dist{Kind: LogNormal, Median: 30, P99: 900}, `{"dist":"lognormal","median":"30s","p99":"15m"}`},
		{Dist{Kind: LogNormal, Mu: 1, Sigma: 0.5}, `{"dist":"lognormal","mu":1,"sigma":0.5}`},
		{Dist{Kind: Geometric, Mean: 1.5, Counts: true}, `{"dist":"geometric","mean":1.5}`},
		{Dist{Kind: Uniform, Min: 1, Max: 3, Counts: true}, `{"dist":"uniform","min":1,"max":3}`},
		{Dist{Kind: Pareto, Min: 0.25, Alpha: 2}, `{"dist":"pareto","min":"250ms","alpha":2}`},
		{Dist{Kind: Empirical, File: "d.csv", Samples: []float64{1, 2}}, `{"dist":"empirical","file":"d.csv","samples":2}`},
		{Dist{}, `null`},
	} {
		got, err := json.Marshal(c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("json.Marshal(%#v) = %s, %v; want %s", c.v, got, err, c.want)
		}
	}
}

// TestLogNormalQuantiles checks that mu and sigma derived from a median and
// a p99 put those quantiles where they were asked for.
func TestLogNormalQuantiles(t *testing.T) {
	d := Dist{Kind: LogNormal, Median: 30, P99: 900}
	mu, sigma := d.LogNormalParams()
	ln := distuv.LogNormal{Mu: mu, Sigma: sigma}
	if got := ln.Quantile(0.5); math.Abs(got-30) > 1e-9 {
		t.Errorf("median %v, want 30", got)
	}
	if got := ln.Quantile(0.99); math.Abs(got-900) > 1e-6 {
		t.Errorf("p99 %v, want 900", got)
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
