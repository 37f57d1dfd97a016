package fitlog

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/generators/fit"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// roundTrip is a scenario whose generated rows the fitter reads back.
const roundTrip = `
name: round-trip
seed: 11
start: 2026-05-01T00:00:00Z
duration: 23m
workload:
  profile:
    - {for: 10m, rate: 20/s}
    - {for: 3m, rate: 0}
    - {for: 10m, rate: 40/s}
  ids: int
  customers: 500
  arrivalDelay: {dist: exponential, mean: 3s}
  retries:
    probability: 0.2
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 30s, p99: 5m}
    timestamp: jitter
    jitter: 2s
  futureTimestamps:
    probability: 0.002
    skew: {dist: uniform, min: 5m, max: 15m}
queries:
  - name: q
    query: dropDuplicates(["event_id"])
`

// TestFitRecoversTheGeneratorsParameters fits dedupsim's own generated
// stream (every family and mode the sample log does not use:
// exponential delays, geometric copies, jittered copies, a common
// bad-clock share, integer ids) and checks each parameter against the
// fit's interval.
func TestFitRecoversTheGeneratorsParameters(t *testing.T) {
	sc, err := scenario.Parse([]byte(roundTrip), "round-trip.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := generators.New(sc.Generator())
	if err != nil {
		t.Fatal(err)
	}
	var rows []fit.Record
	var ev, rs int
	var r generators.Row
	for g.Next(&r) {
		if r.Truth.Copy == 0 {
			ev++
			if r.Truth.Copies > 1 {
				rs++
			}
		}
		rows = append(rows, fit.Record{ID: []byte(strconv.FormatInt(r.EventNum, 10)), EventTime: r.EventTime, Arrival: r.Arrival,
			Customer: []byte(strconv.FormatInt(r.CustomerID, 10))})
	}
	res, err := fit.Fit(fit.SliceOpener(rows), fit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, iv fit.Interval, want float64) {
		t.Helper()
		if !iv.Contains(want) {
			t.Errorf("%s: %v [%v, %v] does not hold %v", what, iv.Value, iv.Lo, iv.Hi, want)
		}
	}
	if len(res.Profile) != 3 {
		t.Fatalf("%d segments: %+v", len(res.Profile), res.Profile)
	}
	for i, want := range []float64{20, 0, 40} {
		check("rate "+strconv.Itoa(i), res.Profile[i].Rate, want)
	}
	if res.ArrivalDelay.Spec.Kind != randvar.KindExponential {
		t.Fatalf("delay %s (%+v)", res.ArrivalDelay.Spec.Kind, res.ArrivalDelay.Candidates)
	}
	check("delay mean", res.ArrivalDelay.Params["mean"], 3)
	// The share resent is exact (every event is followed): the
	// generator's own draws, 2.5 standard errors above its 0.2 with this
	// seed, so the interval is checked against the realized share.
	if got, want := res.Resent.Value, float64(rs)/float64(ev); got != want || !res.Resent.Contains(want) {
		t.Errorf("resent %+v, want the realized %d/%d = %v", res.Resent, rs, ev, want)
	}
	if res.Copies.Spec.Kind != randvar.KindGeometric {
		t.Errorf("copies %s (histogram %v)", res.Copies.Spec.Kind, res.Copies.Histogram)
	}
	check("copies mean", res.Copies.Mean, 1.5)
	if res.Gap.Spec.Kind != randvar.KindLogNormal {
		t.Fatalf("gap %s (%+v)", res.Gap.Spec.Kind, res.Gap.Candidates)
	}
	check("gap mu", res.Gap.Params["mu"], math.Log(30))
	check("gap sigma", res.Gap.Params["sigma"], math.Log(10)/2.3263478740408408)
	if res.Timestamp != "jitter" || res.Jitter > 2*time.Second || res.Jitter < 1900*time.Millisecond {
		t.Errorf("timestamp %s, jitter %v (votes %v)", res.Timestamp, res.Jitter, res.TimestampVotes)
	}
	check("bad clocks", res.BadClock, 0.002)
	if res.Skew.Spec.Kind != randvar.KindUniform {
		t.Errorf("skew %s (%+v)", res.Skew.Spec.Kind, res.Skew.Candidates)
	}
	if res.KeyForm != "int" {
		t.Errorf("key form %s", res.KeyForm)
	}
	check("customers", res.Customers, 500)
}
