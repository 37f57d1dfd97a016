package generators

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/sim/scenario"
)

// workload returns a scenario with the defaults, a duration and a
// constant rate, changed by mods.
func workload(duration time.Duration, rate float64, mods ...func(s *scenario.Scenario)) *scenario.Scenario {
	s := scenario.Defaults()
	s.Name = "test"
	s.Duration = scenario.Duration(duration)
	r := scenario.Rate(rate)
	s.Workload.Rate = &r
	for _, m := range mods {
		m(&s)
	}
	return &s
}

// withRetries resends a share p of originals with the given copies and
// delay distributions and timestamp mode.
func withRetries(p float64, copies, delay scenario.Dist, mode scenario.TimestampMode) func(*scenario.Scenario) {
	return func(s *scenario.Scenario) {
		r := &s.Workload.Retries
		r.Probability = p
		copies.Counts = true
		r.Copies = copies
		r.Delay = delay
		r.Timestamp = mode
	}
}

func constant(v float64) scenario.Dist { return scenario.Dist{Kind: scenario.Constant, Value: v} }
func exponential(mean float64) scenario.Dist {
	return scenario.Dist{Kind: scenario.Exponential, Mean: mean}
}
func geometric(mean float64) scenario.Dist {
	return scenario.Dist{Kind: scenario.Geometric, Mean: mean, Counts: true}
}

// mixed is a workload that exercises every part at once: a profile with a
// stall, arrival delays, retries with restamping, bad clocks, heartbeats.
func mixed(seed uint64) *scenario.Scenario {
	return workload(20*time.Minute, 0, func(s *scenario.Scenario) {
		s.Seed = seed
		s.Workload.Rate = nil
		s.Workload.Profile = []scenario.Segment{
			{For: scenario.Duration(3 * time.Minute), Rate: 200},
			{For: scenario.Duration(2 * time.Minute), Rate: 0},
			{For: scenario.Duration(time.Minute), Rate: 50},
		}
		s.Workload.ArrivalDelay = exponential(2)
		s.Workload.Retries = scenario.Retries{
			Probability: 0.1,
			Copies:      geometric(1.5),
			Delay:       scenario.Dist{Kind: scenario.LogNormal, Median: 30, P99: 600},
			Timestamp:   scenario.Restamp,
			Metadata:    []string{scenario.MetaAttempt, scenario.MetaIngestTime},
		}
		s.Workload.FutureTimestamps = scenario.FutureTimestamps{
			Probability: 0.001,
			Skew:        scenario.Dist{Kind: scenario.Uniform, Min: 3600, Max: 7 * 86400},
		}
		s.Workload.Heartbeat = scenario.Duration(10 * time.Second)
	})
}

// mustNew builds the generator of s or fails the test.
func mustNew(tb testing.TB, s *scenario.Scenario) *Generator {
	tb.Helper()
	g, err := New(s)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// all returns every row of g.
func all(g *Generator) []Row {
	var rows []Row
	var r Row
	for g.Next(&r) {
		rows = append(rows, r)
	}
	return rows
}

// lockstep pulls g and h together to their end and returns the number of
// rows, failing at the first row that differs.
func lockstep(t testing.TB, g, h *Generator) int {
	t.Helper()
	var a, b Row
	for n := 0; ; n++ {
		okA, okB := g.Next(&a), h.Next(&b)
		if okA != okB {
			t.Fatalf("row %d: one stream ended, the other did not", n)
		}
		if !okA {
			return n
		}
		if a != b {
			t.Fatalf("row %d differs:\n%s\n%s", n, rowString(&a), rowString(&b))
		}
	}
}

// count returns the number of rows left in g.
func count(g *Generator) int {
	n := 0
	var r Row
	for g.Next(&r) {
		n++
	}
	return n
}

// within fails the test unless got is within tol of want; the message
// carries the seed and the command that reruns the test.
func within(t *testing.T, what string, got, want, tol float64, seed uint64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v (seed %d; rerun: go test ./generators -run '^%s$' -v)",
			what, got, want, tol, seed, t.Name())
	}
}

// micros returns a scenario offset in microseconds since the epoch.
func micros(s *scenario.Scenario, d time.Duration) int64 {
	return s.Start.Add(d).UnixMicro()
}

func rowString(r *Row) string {
	return fmt.Sprintf("{id %s/%d arrival %d event_time %d ingest %d attempt %d truth %+v}",
		r.EventID[:8], r.EventNum, r.Arrival, r.EventTime, r.IngestTime, r.Attempt, r.Truth)
}
