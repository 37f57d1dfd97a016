package fitlog

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators/fit"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The sample log's parameters, as experiments/fit-sample/make_log.py
// states them.
var sample = struct {
	start              time.Time
	segments           [][2]float64 // seconds, rate
	delayMu, delaySig  float64
	resend, meanCopies float64
	gapMu, gapSig      float64
	badAt              []float64
	badSkew            time.Duration
	customers          float64
}{
	start:    time.Date(2026, 3, 1, 0, 0, 3, 500_000_000, time.UTC),
	segments: [][2]float64{{600, 6}, {300, 0}, {600, 12}},
	delayMu:  math.Log(2), delaySig: 0.8,
	resend: 0.15, meanCopies: 1.3,
	gapMu: math.Log(20), gapSig: 0.5,
	badAt:     []float64{180, 450, 720, 1080, 1260},
	badSkew:   3 * time.Minute,
	customers: 300,
}

// TestSampleLogFitsItsParameters fits the committed sample log (made by
// a Python script, not dedupsim's generator) and checks each stated
// parameter against the interval the fit gives.
func TestSampleLogFitsItsParameters(t *testing.T) {
	r, err := fit.Fit(fit.SliceOpener(readSample(t)), fit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Profile) != len(sample.segments) {
		t.Fatalf("%d segments, want %d: %+v", len(r.Profile), len(sample.segments), r.Profile)
	}
	for i, s := range sample.segments {
		if !r.Profile[i].Rate.Contains(s[1]) {
			t.Errorf("segment %d: rate %+v does not hold %v", i, r.Profile[i].Rate, s[1])
		}
		if s[1] == 0 && r.Profile[i].Count != 0 {
			t.Errorf("segment %d: a stall with %d originals", i, r.Profile[i].Count)
		}
	}
	check := func(what string, iv fit.Interval, want float64) {
		if !iv.Contains(want) {
			t.Errorf("%s: %v [%v, %v] does not hold %v", what, iv.Value, iv.Lo, iv.Hi, want)
		}
	}
	if r.ArrivalDelay.Spec.Kind != randvar.KindLogNormal || r.Gap.Spec.Kind != randvar.KindLogNormal {
		t.Fatalf("delay %s, gap %s: want lognormal both", r.ArrivalDelay.Spec.Kind, r.Gap.Spec.Kind)
	}
	check("delay mu", r.ArrivalDelay.Params["mu"], sample.delayMu)
	check("delay sigma", r.ArrivalDelay.Params["sigma"], sample.delaySig)
	check("gap mu", r.Gap.Params["mu"], sample.gapMu)
	check("gap sigma", r.Gap.Params["sigma"], sample.gapSig)
	check("resent", r.Resent, sample.resend)
	check("copies", r.Copies.Mean, sample.meanCopies)
	check("customers", r.Customers, sample.customers)
	if r.Timestamp != "restamp" {
		t.Errorf("timestamp %s, want restamp", r.Timestamp)
	}
	if len(r.Faults) != len(sample.badAt) {
		t.Fatalf("%d faults, want %d", len(r.Faults), len(sample.badAt))
	}
	off := sample.start.Sub(r.Start)
	for i, f := range r.Faults {
		if got := (f.At - off).Seconds(); got != sample.badAt[i] || f.Skew != sample.badSkew {
			t.Errorf("fault %d: at %v skew %v, want %v and %v", i, got, f.Skew, sample.badAt[i], sample.badSkew)
		}
	}
}

// TestFittedScenarioLoadsAndRuns writes the fit of the sample log and
// runs the scenario it wrote.
func TestFittedScenarioLoadsAndRuns(t *testing.T) {
	f, err := Fit(fit.SliceOpener(readSample(t)), Options{Log: "events.csv.gz"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fitted")
	if err := Write(out, f, nil); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(filepath.Join(out, f.File))
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Run(context.Background(), sc, runner.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if _, err := os.Stat(filepath.Join(out, ".dedupsim-results")); err != nil {
		t.Errorf("no marker: %v", err)
	}
}
