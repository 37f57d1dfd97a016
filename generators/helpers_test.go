package generators

import (
	"fmt"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"math"
	"testing"
	"time"
)

// workload returns a configuration with the defaults (seed 1, the
// start of 2026), a duration and a constant rate, changed by mods.
func workload(duration time.Duration, rate float64, mods ...func(s *Config)) *Config {
	s := Config{Seed: 1, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Duration: interval.Duration(duration), Workload: DefaultWorkload()}
	r := Rate(rate)
	s.Workload.Rate = &r
	for _, m := range mods {
		m(&s)
	}
	return &s
}

// withRetries resends a share p of originals with the given copies and
// delay distributions and timestamp mode.
func withRetries(p float64, copies, delay randvar.Spec, mode TimestampMode) func(*Config) {
	return func(s *Config) {
		r := &s.Workload.Retries
		r.Probability = p
		copies.Counts = true
		r.Copies = copies
		r.Delay = delay
		r.Timestamp = mode
	}
}

func constant(v float64) randvar.Spec { return randvar.Spec{Kind: randvar.KindConstant, Value: v} }
func exponential(mean float64) randvar.Spec {
	return randvar.Spec{Kind: randvar.KindExponential, Mean: mean}
}
func geometric(mean float64) randvar.Spec {
	return randvar.Spec{Kind: randvar.KindGeometric, Mean: mean, Counts: true}
}

// mixed is a workload that exercises every part at once: a profile with a
// stall, arrival delays, retries with restamping, bad clocks, heartbeats.
func mixed(seed uint64) *Config {
	return workload(20*time.Minute, 0, func(s *Config) {
		s.Seed = seed
		s.Workload.Rate = nil
		s.Workload.Profile = []Segment{
			{For: interval.Duration(3 * time.Minute), Rate: 200},
			{For: interval.Duration(2 * time.Minute), Rate: 0},
			{For: interval.Duration(time.Minute), Rate: 50},
		}
		s.Workload.ArrivalDelay = exponential(2)
		s.Workload.Retries = Retries{
			Probability: 0.1,
			Copies:      geometric(1.5),
			Delay:       randvar.Spec{Kind: randvar.KindLogNormal, Median: 30, P99: 600},
			Timestamp:   Restamp,
			Metadata:    []string{MetaAttempt, MetaIngestTime},
		}
		s.Workload.FutureTimestamps = FutureTimestamps{
			Probability: 0.001,
			Skew:        randvar.Spec{Kind: randvar.KindUniform, Min: 3600, Max: 7 * 86400},
		}
		s.Workload.Heartbeat = interval.Duration(10 * time.Second)
	})
}

// mustNew builds the generator of s or fails the test.
func mustNew(tb testing.TB, s *Config) *Generator {
	tb.Helper()
	g, err := New(*s)
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
func micros(s *Config, d time.Duration) int64 {
	return s.Start.Add(d).UnixMicro()
}

func rowString(r *Row) string {
	return fmt.Sprintf("{id %s/%d arrival %d event_time %d ingest %d attempt %d truth %+v}",
		r.EventID[:8], r.EventNum, r.Arrival, r.EventTime, r.IngestTime, r.Attempt, r.Truth)
}
