package curve

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// base is a small capacity-plan-like scenario: re-stamped retries whose
// gaps straddle the delays tried, originals a little late.
const base = `name: curve-test
seed: %d
duration: %s
trigger: %s
noDataMicroBatches: %v
workload:
  rate: %s
  ids: %s
  customers: 100
  arrivalDelay: {dist: exponential, mean: %s}
  retries:
    probability: 0.2
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: %s
%s
queries:
  - name: q
    query: %s
`

type variant struct {
	name                      string
	seed                      int
	duration, trigger         string
	noData                    bool
	rate, ids, arrival, stamp string
	extra                     string
	query                     string
}

func (v variant) yaml() string {
	return fmt.Sprintf(base, v.seed, v.duration, v.trigger, v.noData, v.rate, v.ids, v.arrival, v.stamp, v.extra, v.query)
}

var within = `withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])`

var variants = []variant{
	{name: "within", seed: 1, duration: "6m", trigger: "5s", noData: true, rate: "60/s", ids: "uuid", arrival: "3s", stamp: "restamp", query: within},
	{name: "within-nodata-off", seed: 2, duration: "6m", trigger: "5s", noData: false, rate: "60/s", ids: "int", arrival: "8s", stamp: "restamp", query: within},
	{name: "within-same-stamp", seed: 3, duration: "6m", trigger: "2s", noData: true, rate: "40/s", ids: "int", arrival: "10s", stamp: "same", query: within},
	{name: "pair-keyed", seed: 4, duration: "6m", trigger: "5s", noData: true, rate: "60/s", ids: "uuid", arrival: "5s", stamp: "restamp",
		query: `withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])`},
	{name: "pair-keyed-same", seed: 5, duration: "6m", trigger: "3s", noData: true, rate: "50/s", ids: "int", arrival: "20s", stamp: "same",
		query: `withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])`},
	{name: "heartbeat-badclock", seed: 6, duration: "8m", trigger: "5s", noData: true, rate: "30/s", ids: "int", arrival: "4s", stamp: "restamp",
		extra: "  heartbeat: 7s\nfaults:\n  - {kind: bad-clock, at: 3m, skew: 2m}", query: within},
}

// delays are the delays compared: around the threshold of every kind of
// verdict, and the grid's small ones.
var delays = []time.Duration{0, time.Second, 2 * time.Second, 5 * time.Second, 9 * time.Second, 20 * time.Second, 47 * time.Second, 90 * time.Second, 3 * time.Minute}

// TestCurveEqualsDirectRuns: at every delay compared, the one-pass curve
// holds the direct run's counters, rates and state exactly.
func TestCurveEqualsDirectRuns(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			sc, err := scenario.Parse([]byte(v.yaml()), v.name+".yaml")
			if err != nil {
				t.Fatal(err)
			}
			c, err := Compute(context.Background(), sc, "q", Options{StateDelays: delays})
			if err != nil {
				t.Fatal(err)
			}
			run := *sc
			run.Sweep = &scenario.Sweep{}
			for _, d := range delays {
				run.Sweep.Delay = append(run.Sweep.Delay, interval.Duration(d))
			}
			res, err := runner.Run(context.Background(), &run, runner.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			qs := res.Summary.Queries
			if len(qs) != len(delays) {
				t.Fatalf("%d summaries for %d delays", len(qs), len(delays))
			}
			varied := map[string]bool{}
			for i, d := range delays {
				p, ok := c.At(d)
				if !ok || !p.HasState {
					t.Fatalf("%s: not on the curve", d)
				}
				if diff := compare(p.Summary, qs[i]); diff != "" {
					t.Errorf("at %s: %s", d, diff)
				}
				varied[fmt.Sprint(qs[i].MissedDuplicates, qs[i].DroppedByWatermark, qs[i].PeakStateRows)] = true
			}
			if len(varied) < 5 {
				t.Errorf("the delays compared change the missed, late and state counts too little (%v): the test shows nothing", varied)
			}
		})
	}
}

// compare lists the fields of got that differ from the run's.
func compare(got, want metrics.QuerySummary) string {
	type f struct {
		name string
		a, b any
	}
	fs := []f{
		{"inputRows", got.InputRows, want.InputRows},
		{"logicalEvents", got.LogicalEvents, want.LogicalEvents},
		{"trueDuplicates", got.TrueDuplicates, want.TrueDuplicates},
		{"emittedRows", got.EmittedRows, want.EmittedRows},
		{"missedDuplicates", got.MissedDuplicates, want.MissedDuplicates},
		{"falseDrops", got.FalseDrops, want.FalseDrops},
		{"falseDropsByCause", got.FalseDropsByCause, want.FalseDropsByCause},
		{"droppedByWatermark", got.DroppedByWatermark, want.DroppedByWatermark},
		{"droppedDuplicates", got.DroppedDuplicates, want.DroppedDuplicates},
		{"missedDuplicateRate", got.MissedDuplicateRate, want.MissedDuplicateRate},
		{"falseDropRate", got.FalseDropRate, want.FalseDropRate},
		{"peakStateRows", got.PeakStateRows, want.PeakStateRows},
		{"peakStateBytes", got.PeakStateBytes, want.PeakStateBytes},
		{"finalStateRows", got.FinalStateRows, want.FinalStateRows},
		{"finalStateBytes", got.FinalStateBytes, want.FinalStateBytes},
		{"batches", got.Batches, want.Batches},
		{"noDataBatches", got.NoDataBatches, want.NoDataBatches},
	}
	out := ""
	for _, x := range fs {
		if fmt.Sprint(x.a) != fmt.Sprint(x.b) {
			out += fmt.Sprintf("%s %v, run %v; ", x.name, x.a, x.b)
		}
	}
	return out
}

// TestCheckRefuses: the shapes that do not reduce to thresholds are
// refused with ErrUnsupported.
func TestCheckRefuses(t *testing.T) {
	for _, q := range []string{
		`dropDuplicates(["event_id"])`,
		`withWatermark("event_time", "1 minute").dropDuplicates(["event_id"])`,
		`withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["customer_id"])`,
		`withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"]).dropDuplicatesWithinWatermark(["event_id"])`,
	} {
		v := variants[0]
		v.query = q
		sc, err := scenario.Parse([]byte(v.yaml()), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(sc, sc.Queries[0]); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", q, err)
		}
	}
	v := variants[0]
	v.extra = "faults:\n  - {kind: restart, at: 2m}"
	sc, err := scenario.Parse([]byte(v.yaml()), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(sc, sc.Queries[0]); !errors.Is(err, ErrUnsupported) {
		t.Errorf("restart: %v, want ErrUnsupported", err)
	}
}
