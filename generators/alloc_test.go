package generators

import (
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"testing"
	"time"
)

// TestNextDoesNotAllocate checks the hot path: after the pending queue has
// grown to its working size, Next allocates nothing.
func TestNextDoesNotAllocate(t *testing.T) {
	for name, s := range benchWorkloads() {
		g := mustNew(t, s)
		var r Row
		for range 200000 {
			if !g.Next(&r) {
				t.Fatalf("%s: ended during warm-up", name)
			}
		}
		if a := testing.AllocsPerRun(20000, func() { g.Next(&r) }); a != 0 {
			t.Errorf("workload=%s: Next allocates %v times per row", name, a)
		}
	}
}

// benchWorkloads are the workloads of the benchmarks, named like the
// lessons of experiments/.
func benchWorkloads() map[string]*Config {
	lognormal := randvar.Spec{Kind: randvar.KindLogNormal, Median: 30, P99: 900}
	return map[string]*Config{
		// quickstart: a steady rate, uuid ids, exponential arrival delays.
		"quickstart": workload(2*time.Hour, 2000, func(s *Config) {
			s.Workload.ArrivalDelay = exponential(2)
		}),
		// retries: mobile clients resending 5% of events, restamped.
		"retries": workload(2*time.Hour, 2000, withRetries(0.05, geometric(1.5), lognormal, Restamp), func(s *Config) {
			s.Workload.ArrivalDelay = exponential(2)
		}),
		// everything: the mixed workload of the tests, at a higher rate.
		"mixed": func() *Config {
			s := mixed(1)
			s.Duration = interval.Duration(2 * time.Hour)
			for i := range s.Workload.Profile {
				s.Workload.Profile[i].Rate *= 10
			}
			return s
		}(),
	}
}
