package fitlog

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
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
	if err := Write(out, f, nil, nil); err != nil {
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

// checkQueries are the queries the side by side check runs: a short
// horizon that misses re-stamped copies and loses events to the bad
// clocks, a long one, and no watermark (state holds every event).
var checkQueries = []string{
	`withWatermark("event_time", "15 seconds").dropDuplicatesWithinWatermark(["event_id"])`,
	`withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])`,
	`dropDuplicates(["event_id"])`,
}

// TestFittedScenarioAnswersLikeTheLog is issue 30's check: the sample log
// (made outside dedupsim's generator) and the scenario fitted to it, run
// through the same queries, agree on duplicates within 10%, missed
// duplicates within 20% (or 0.3% of the duplicates), peak state within
// 10% and false drops from bad clocks within 30%.
func TestFittedScenarioAnswersLikeTheLog(t *testing.T) {
	spec := LogSpec{Path: sampleLog, ID: []string{"event_id"}, EventTime: "event_time", ArrivalTime: "ingest_time", Customer: "customer_id"}
	open, err := Opener(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Fit(open, Options{Log: "events.csv.gz", Queries: checkQueries})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fitted")
	if err := Write(out, f, &Check{Ctx: context.Background(), Log: spec, Runner: runner.Options{Workers: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string][2]float64{}
	for _, r := range f.Report.Compare {
		if rows[r.Query] == nil {
			rows[r.Query] = map[string][2]float64{}
		}
		rows[r.Query][r.Metric] = [2]float64{r.Log, r.Fitted}
	}
	if len(rows) != len(checkQueries) {
		t.Fatalf("%d queries compared, want %d", len(rows), len(checkQueries))
	}
	within := func(q, m string, rel, abs float64) {
		v := rows[q][m]
		d := math.Abs(v[1] - v[0])
		t.Logf("%s %s: log %v, fitted %v", q, m, v[0], v[1])
		if d > rel*v[0] && d > abs {
			t.Errorf("%s: %s: log %v, fitted %v: off by more than %.0f%% (and %v)", q, m, v[0], v[1], 100*rel, abs)
		}
	}
	for _, q := range slices.Sorted(maps.Keys(rows)) {
		dups := rows[q][MeasureDuplicates][0]
		within(q, MeasureDuplicates, 0.10, 0)
		within(q, MeasureMissed, 0.20, 0.003*dups)
		within(q, MeasurePeakStateRows, 0.10, 0)
		within(q, MeasureFalseDropsBad, 0.30, 0)
	}
	// The check must have something to check: the short horizon misses
	// copies and loses events to the bad clocks.
	if v := rows["q1"][MeasureMissed][0]; v < 50 {
		t.Errorf("q1 misses only %v duplicates on the log: the check is too weak", v)
	}
	if v := rows["q1"][MeasureFalseDropsBad][0]; v < 100 {
		t.Errorf("q1 loses only %v events to bad clocks on the log", v)
	}
	if _, err := os.Stat(filepath.Join(out, f.Options.Name+"-log.yaml")); err != nil {
		t.Errorf("the log's scenario is not beside the fitted one: %v", err)
	}
}
