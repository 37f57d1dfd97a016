package runner

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
)

// TestNumberedKeysMatchTheHashTable runs a slice of the production day of
// about 1e7 rows (its three queries, 14 min 25 s at 11,600 rows/s) twice:
// as a run without a checkpoint opens its stores, the unbounded query's
// keys held as bits of event numbers (memstore.Numbered), and with every
// key in the memory store's hash table (a store hook turns numbering off,
// as bench-stores runs). Counters, timeseries and every batch's progress
// must be the same.
func TestNumberedKeysMatchTheHashTable(t *testing.T) {
	s := loadExperiment(t, "production-day.yaml")
	shrink(s, 14*time.Minute+25*time.Second)
	if testing.Short() {
		shrink(s, time.Minute)
	}
	var mu sync.Mutex
	var numbered []string
	fast, err := runOpts(t, s, Options{numberedSeen: func(job string) {
		mu.Lock()
		defer mu.Unlock()
		numbered = append(numbered, job)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(numbered, []string{"unbounded"}) {
		t.Fatalf("stores opened as numbers: %v, want the unbounded query's", numbered)
	}
	slow, err := runOpts(t, s, Options{StoreHook: func(ev StoreEvent) engines.Store { return ev.Store }})
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, slow, fast)
	rows := int64(0)
	for _, q := range fast.Summary.Queries {
		rows = max(rows, q.InputRows)
	}
	if !testing.Short() && rows < 1e7 {
		t.Fatalf("%d rows, want at least 1e7", rows)
	}
	// The unbounded query holds every event: the originals, which arrive
	// by a Poisson process at the workload's rate over the slice, so
	// their number is lambda = rate × duration within a few standard
	// deviations (sqrt(lambda)); six leave a false failure below 1e-8.
	// (Derived from the scenario, so the full slice and -short's minute
	// are held to the same rule.)
	ub := byName(t, fast, "unbounded")["unbounded"]
	lambda := float64(*s.Workload.Rate) * time.Duration(s.Duration).Seconds()
	if ub.FinalStateRows != ub.LogicalEvents || math.Abs(float64(ub.FinalStateRows)-lambda) > 6*math.Sqrt(lambda) {
		t.Errorf("unbounded: %d final state rows of %d events; want every event, %.0f ± %.0f", ub.FinalStateRows, ub.LogicalEvents, lambda, 6*math.Sqrt(lambda))
	}
}

// TestNumberedKeysMatchPebble: the same comparison against Pebble, the
// store the production day's unbounded query used before its keys were
// numbered, on a one-minute slice (Pebble is slower): numbered keys, the
// hash table and Pebble give the same results.
func TestNumberedKeysMatchPebble(t *testing.T) {
	s := loadExperiment(t, "production-day.yaml")
	shrink(s, time.Minute)
	var mu sync.Mutex
	numbered := 0
	fast, err := runOpts(t, s, Options{numberedSeen: func(string) { mu.Lock(); numbered++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if numbered != 1 {
		t.Fatalf("%d stores opened as numbers, want 1", numbered)
	}
	pebble, err := runOpts(t, s, Options{Store: "pebble"})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range pebble.Summary.Queries {
		if q.Store != "pebble" {
			t.Fatalf("%s ran on %s, want pebble", q.Name, q.Store)
		}
	}
	sameResults(t, pebble, fast)
}
