package fit

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators/randvar"
)

// TestFitRecoversKnownParameters fits a log made by synthLog (not
// dedupsim's generator) and checks every known parameter against the
// interval the fit states.
func TestFitRecoversKnownParameters(t *testing.T) {
	p := defaultSynth()
	rows := synthLog(p)
	r, err := Fit(SliceOpener(rows), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rows %d, events %.0f, profile %d segments", r.Rows, r.Events, len(r.Profile))

	// Profile: one fitted segment per true segment, boundaries within a
	// trigger, each true rate inside its interval.
	if len(r.Profile) != len(p.segments) {
		t.Fatalf("profile has %d segments, want %d: %+v", len(r.Profile), len(p.segments), r.Profile)
	}
	offset := p.start.Sub(r.Start)
	var at time.Duration
	for i, s := range p.segments {
		got := r.Profile[i]
		if d := (got.Start - offset - at).Abs(); d > 10*time.Second {
			t.Errorf("segment %d starts at %v, want %v (+-10s)", i, got.Start-offset, at)
		}
		if s.rate == 0 && got.Count != 0 {
			t.Errorf("segment %d: a stall with %d originals", i, got.Count)
		}
		if !got.Rate.Contains(s.rate) {
			t.Errorf("segment %d rate %v [%v, %v] does not hold the true %v", i, got.Rate.Value, got.Rate.Lo, got.Rate.Hi, s.rate)
		}
		at += s.length
	}

	// Arrival delay: lognormal, mu and sigma within their intervals.
	d := r.ArrivalDelay
	if d.Spec.Kind != randvar.KindLogNormal {
		t.Fatalf("arrival delay fitted as %s (candidates %+v), want lognormal", d.Spec.Kind, d.Candidates)
	}
	if iv := d.Params["mu"]; !iv.Contains(p.delayMu) {
		t.Errorf("delay mu %+v does not hold %v", iv, p.delayMu)
	}
	if iv := d.Params["sigma"]; !iv.Contains(p.delaySig) {
		t.Errorf("delay sigma %+v does not hold %v", iv, p.delaySig)
	}

	// Retries.
	if !r.Resent.Contains(p.resend) {
		t.Errorf("resent %+v does not hold %v", r.Resent, p.resend)
	}
	if want := 1 + p.twoCopies; !r.Copies.Mean.Contains(want) {
		t.Errorf("copies mean %+v does not hold %v", r.Copies.Mean, want)
	}
	if h := r.Copies.Histogram; r.Copies.Spec.Kind != randvar.KindEmpirical || len(h) != 3 || h[1] == 0 || h[2] == 0 {
		t.Errorf("copies fitted as %+v (histogram %v), want the observed 1s and 2s", r.Copies.Spec.Kind, r.Copies.Histogram)
	}
	if r.Timestamp != "restamp" {
		t.Errorf("timestamp %s (votes %v), want restamp", r.Timestamp, r.TimestampVotes)
	}
	g := r.Gap
	if g.Spec.Kind != randvar.KindLogNormal {
		t.Fatalf("gap fitted as %s (candidates %+v), want lognormal", g.Spec.Kind, g.Candidates)
	}
	if iv := g.Params["mu"]; !iv.Contains(p.gapMu) {
		t.Errorf("gap mu %+v does not hold %v", iv, p.gapMu)
	}
	if iv := g.Params["sigma"]; !iv.Contains(p.gapSig) {
		t.Errorf("gap sigma %+v does not hold %v", iv, p.gapSig)
	}

	// Bad clocks: each one a fault at its own time and skew.
	if len(r.Faults) != len(p.badAt) {
		t.Fatalf("%d bad-clock faults, want %d", len(r.Faults), len(p.badAt))
	}
	for i, f := range r.Faults {
		if f.At-offset != p.badAt[i] || f.Skew != p.badSkew {
			t.Errorf("fault %d at %v skew %v, want %v and %v", i, f.At-offset, f.Skew, p.badAt[i], p.badSkew)
		}
	}
	if r.KeyForm != "uuid" {
		t.Errorf("key form %s, want uuid", r.KeyForm)
	}
	if !r.Customers.Contains(float64(p.customers)) {
		t.Errorf("customers %+v, want %d", r.Customers, p.customers)
	}
	if math.Abs(r.Events-float64(r.SampledEvents)/r.SampleFraction) > 1 {
		t.Errorf("events %v from %d sampled at %v", r.Events, r.SampledEvents, r.SampleFraction)
	}
}

// TestProfileBoundaries cuts counts with a partial bin at each boundary
// (a rate change inside a bin): the stall must hold no count, and each
// partial bin goes to the side whose rate it is closer to in likelihood.
func TestProfileBoundaries(t *testing.T) {
	var counts []float64
	add := func(n int, v float64) {
		for range n {
			counts = append(counts, v)
		}
	}
	add(300, 6)
	add(1, 3) // half a bin at 6/s, then the stall
	add(200, 0)
	add(1, 6) // half a bin at 12/s
	add(300, 12)
	starts := profileStarts(counts, 10)
	if want := []int{0, 301, 501}; !slices.Equal(starts, want) {
		t.Fatalf("starts %v, want %v", starts, want)
	}
}

// TestFitCommonBadClocksAndKeptTimes fits a log whose copies keep the
// first row's event time and where 0.2% of rows (originals and copies)
// come from a clock 2 to 10 minutes ahead: a futureTimestamps share whose
// interval holds the true one, with a uniform skew whose bounds hold the
// true ones, and copies fitted as same.
func TestFitCommonBadClocksAndKeptTimes(t *testing.T) {
	p := defaultSynth()
	p.mode = "same"
	p.badAt = nil
	p.badShare, p.badMin, p.badMax = 0.002, 2*time.Minute, 10*time.Minute
	r, err := Fit(SliceOpener(synthLog(p)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.BadClockRows < RareBadClocks || len(r.Faults) != 0 {
		t.Fatalf("%d bad rows, %d faults: want a share", r.BadClockRows, len(r.Faults))
	}
	if !r.BadClock.Contains(p.badShare) {
		t.Errorf("bad-clock share %+v does not hold %v", r.BadClock, p.badShare)
	}
	if r.Skew.Spec.Kind != randvar.KindUniform {
		t.Fatalf("skew fitted as %s (candidates %+v), want uniform", r.Skew.Spec.Kind, r.Skew.Candidates)
	}
	// The maximum-likelihood bounds are the observed extremes: within a
	// second of the true ones (about 110 values spread over 8 minutes).
	if lo, hi := r.Skew.Spec.Min, r.Skew.Spec.Max; math.Abs(lo-p.badMin.Seconds()) > 10 || math.Abs(hi-p.badMax.Seconds()) > 10 {
		t.Errorf("skew [%v, %v] s, want [%v, %v]", lo, hi, p.badMin.Seconds(), p.badMax.Seconds())
	}
	if r.Timestamp != "same" {
		t.Errorf("timestamp %s (votes %v), want same", r.Timestamp, r.TimestampVotes)
	}
	w := r.Scenario("x", "x", "log", []string{`dropDuplicates(["event_id"])`})
	for _, want := range []string{"futureTimestamps:", "skew: {dist: uniform", "timestamp: same"} {
		if !strings.Contains(string(w.YAML), want) {
			t.Errorf("the scenario lacks %q", want)
		}
	}
}

// TestFitJitteredCopies fits copies whose event time moves by up to 5 s:
// jitter, bounded by the largest move.
func TestFitJitteredCopies(t *testing.T) {
	p := defaultSynth()
	p.mode, p.jitter = "jitter", 5*time.Second
	r, err := Fit(SliceOpener(synthLog(p)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Timestamp != "jitter" || r.Jitter > p.jitter || r.Jitter < p.jitter-100*time.Millisecond {
		t.Errorf("timestamp %s jitter %v (votes %v), want jitter of about %v", r.Timestamp, r.Jitter, r.TimestampVotes, p.jitter)
	}
}

// TestFitRefusesALogThatChanges: a log that grows between the two passes
// is an error, not a panic or a silent mix.
func TestFitRefusesALogThatChanges(t *testing.T) {
	rows := synthLog(defaultSynth())[:1000]
	passes := 0
	open := func() (Source, error) {
		passes++
		if passes == 2 {
			more := append(slices.Clone(rows), Record{ID: []byte("x"), EventTime: rows[999].Arrival + 1e9, Arrival: rows[999].Arrival + 1e9})
			return &Slice{Rows: more}, nil
		}
		return &Slice{Rows: rows}, nil
	}
	if _, err := Fit(open, Options{}); err == nil || !strings.Contains(err.Error(), "changed between") {
		t.Fatalf("err %v, want the log changed", err)
	}
}
