package curve

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// rowBase is a small scenario for the engines that take rows one at a
// time: re-stamped (or not) retries whose gaps straddle the horizons
// tried, originals a little late, the query's keys given whole.
const rowBase = `name: curve-rows-test
seed: %d
duration: %s
trigger: %s
workload:
  rate: %s
  ids: %s
  customers: 100
  arrivalDelay: {dist: exponential, mean: %s}
  retries:
    probability: 0.3
    copies: {dist: geometric, mean: 1.6}
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: %s
%s
queries:
  - name: q
%s`

type rowVariant struct {
	name                      string
	seed                      int
	duration, trigger         string
	rate, ids, arrival, stamp string
	extra                     string
	query                     string
	// noState: the curve tracks no state for the query.
	noState bool
}

func (v rowVariant) yaml() string {
	return fmt.Sprintf(rowBase, v.seed, v.duration, v.trigger, v.rate, v.ids, v.arrival, v.stamp, v.extra, v.query)
}

const (
	flinkFirst = "    engine: flink\n    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1\n    options: {table.exec.state.ttl: 1 min}\n"
	flinkLast  = "    engine: flink\n    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time DESC) AS rn FROM events) WHERE rn = 1\n    options: {table.exec.state.ttl: 1 min}\n"
	flinkCust  = "    engine: flink\n    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id, customer_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1\n    options: {table.exec.state.ttl: 1 min}\n"
	ksStream   = "    engine: kafka-streams\n    window: 2 minutes\n    time: stream\n"
	ksParts    = "    engine: kafka-streams\n    window: 2 minutes\n    time: stream\n    partitions: 4\n"
	beamProc   = "    engine: beam\n    timeDomain: processing\n    duration: 1 minute\n"
	beamEvent  = "    engine: beam\n    timeDomain: event\n    duration: 1 minute\n"
)

var rowVariants = []rowVariant{
	{name: "flink-keep-first", seed: 1, duration: "6m", trigger: "5s", rate: "60/s", ids: "uuid", arrival: "3s", stamp: "restamp", query: flinkFirst, noState: true},
	{name: "flink-keep-first-cust", seed: 2, duration: "6m", trigger: "2s", rate: "40/s", ids: "int", arrival: "8s", stamp: "same", query: flinkCust, noState: true},
	{name: "flink-keep-last", seed: 3, duration: "5m", trigger: "5s", rate: "40/s", ids: "int", arrival: "3s", stamp: "restamp", query: flinkLast, noState: true},
	{name: "kstreams-stream", seed: 4, duration: "6m", trigger: "5s", rate: "60/s", ids: "uuid", arrival: "5s", stamp: "restamp", query: ksStream},
	{name: "kstreams-partitions", seed: 5, duration: "6m", trigger: "3s", rate: "50/s", ids: "int", arrival: "20s", stamp: "same", query: ksParts},
	{name: "kstreams-badclock", seed: 6, duration: "8m", trigger: "5s", rate: "30/s", ids: "int", arrival: "4s", stamp: "restamp",
		extra: "  heartbeat: 7s\nfaults:\n  - {kind: bad-clock, at: 3m, skew: 2m}", query: ksStream},
	// Dense: a put exactly W - 1 ms before the stream time is likely at
	// every sample, so the state's bound is tested to the millisecond.
	{name: "kstreams-dense", seed: 10, duration: "3m", trigger: "5s", rate: "500/s", ids: "int", arrival: "2s", stamp: "restamp", query: ksStream},
	{name: "beam-processing", seed: 7, duration: "6m", trigger: "5s", rate: "60/s", ids: "uuid", arrival: "3s", stamp: "restamp", query: beamProc},
	{name: "beam-event", seed: 8, duration: "6m", trigger: "2s", rate: "40/s", ids: "int", arrival: "10s", stamp: "same", query: beamEvent},
	{name: "beam-event-badclock", seed: 9, duration: "8m", trigger: "5s", rate: "30/s", ids: "int", arrival: "4s", stamp: "restamp",
		extra: "faults:\n  - {kind: bad-clock, at: 3m, skew: 2m}", query: beamEvent},
}

// rowDelays are the horizons compared: around the thresholds of the
// retries' gaps, and the grid's small ones.
var rowDelays = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 9 * time.Second, 20 * time.Second, 47 * time.Second, 90 * time.Second, 3 * time.Minute}

// TestRowCurveEqualsDirectRuns is TestCurveEqualsDirectRuns for Flink's
// TTL, Kafka Streams' window and Beam's duration: at every horizon
// compared, the one-pass curve holds the direct run's counters, rates
// and (where it tracks it) state exactly.
func TestRowCurveEqualsDirectRuns(t *testing.T) {
	for _, v := range rowVariants {
		t.Run(v.name, func(t *testing.T) {
			sc, err := scenario.Parse([]byte(v.yaml()), v.name+".yaml")
			if err != nil {
				t.Fatal(err)
			}
			c, err := Compute(context.Background(), sc, "q", Options{StateDelays: rowDelays})
			if err != nil {
				t.Fatal(err)
			}
			run := *sc
			run.Sweep = &scenario.Sweep{}
			for _, d := range rowDelays {
				run.Sweep.Delay = append(run.Sweep.Delay, interval.Duration(d))
			}
			res, err := runner.Run(context.Background(), &run, runner.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			qs := res.Summary.Queries
			if len(qs) != len(rowDelays) {
				t.Fatalf("%d summaries for %d horizons", len(qs), len(rowDelays))
			}
			if c.Has(0) {
				t.Error("the curve holds a horizon of 0")
			}
			varied := map[string]bool{}
			for i, d := range rowDelays {
				p, ok := c.At(d)
				if !ok || p.HasState == v.noState {
					t.Fatalf("%s: on the curve %v, with state %v", d, ok, p.HasState)
				}
				want := qs[i]
				if v.noState {
					want.PeakStateRows, want.PeakStateBytes, want.FinalStateRows, want.FinalStateBytes = 0, 0, 0, 0
				}
				if diff := compare(p.Summary, want); diff != "" {
					t.Errorf("at %s: %s", d, diff)
				}
				varied[fmt.Sprint(qs[i].MissedDuplicates, qs[i].PeakStateRows)] = true
			}
			if len(varied) < 4 {
				t.Errorf("the horizons compared change the missed and state counts too little (%v): the test shows nothing", varied)
			}
		})
	}
}

// TestRowCheckRefuses: the rules that do not reduce to thresholds on the
// horizon are refused with ErrUnsupported, each with its reason.
func TestRowCheckRefuses(t *testing.T) {
	for _, q := range []string{
		"    engine: flink\n    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ASC) AS rn FROM events) WHERE rn = 1\n    options: {table.exec.state.ttl: 1 min, watermark: 5 s}\n",
		"    engine: flink\n    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1\n    options: {table.exec.state.ttl: 1 min}\n",
		"    engine: flink\n    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1\n    options: {table.exec.state.ttl: 1 min, table.exec.mini-batch.enabled: true, table.exec.mini-batch.allow-latency: 1 s, table.exec.mini-batch.size: 100}\n",
		"    engine: kafka-streams\n    window: 2 minutes\n    time: record\n",
		"    engine: kafka-streams\n    window: 2 minutes\n    time: wall-clock\n    punctuate: 10s\n",
		"    engine: beam\n    timeDomain: event\n    duration: 1 minute\n    window: {fixed: 1 minute}\n",
	} {
		v := rowVariants[0]
		v.query = q
		sc, err := scenario.Parse([]byte(v.yaml()), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(sc, sc.Queries[0]); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", q, err)
		}
	}
}
