package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// mixedStores runs two queries in memory (the scenario's store) and one,
// swept over two delays, on Pebble (its own store), with a restart and a
// lost checkpoint so that every store is reopened from its checkpoint.
const mixedStores = `
name: mixed
seed: 9
duration: 4m
trigger: 10s
workload:
  rate: 150/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.2
    copies: {dist: geometric, mean: 1.5}
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: restamp
queries:
  - name: pair-keyed
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
    store: pebble
  - name: unbounded
    query: dropDuplicates(["event_id"])
sweep:
  delay: [30s, 1m]
faults:
  - {at: 100s, kind: restart}
  - {at: 170s, kind: lose-checkpoint}
`

// mixedWant is the store of each job of mixedStores.
var mixedWant = map[string]string{
	"pair-keyed@30s": "memory", "pair-keyed@1m": "memory",
	"within@30s": "pebble", "within@1m": "pebble",
	"unbounded": "memory",
}

// backendsSeen records the type of every store a run opens, by job.
type backendsSeen struct {
	mu sync.Mutex
	m  map[string][]string
	// resumedAt is the highest version each job's stores opened at.
	resumedAt map[string]int64
}

func (b *backendsSeen) hook(ev StoreEvent) engines.Store {
	kind := fmt.Sprintf("%T", ev.Store)
	switch ev.Store.(type) {
	case *memstore.Store, *memstore.Checkpointed:
		kind = "memory"
	case *pebblestore.Store:
		kind = "pebble"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m, b.resumedAt = map[string][]string{}, map[string]int64{}
	}
	b.resumedAt[ev.Job] = max(b.resumedAt[ev.Job], ev.Version)
	if !slices.Contains(b.m[ev.Job], kind) {
		b.m[ev.Job] = append(b.m[ev.Job], kind)
	}
	return ev.Store
}

// checkStores checks that each job of r ran on want[job] (or on every
// job on all, when not ""), in its summary and in the stores it opened.
func checkStores(t *testing.T, r *Results, seen *backendsSeen, want map[string]string, all string) {
	t.Helper()
	if len(r.Summary.Queries) != len(want) {
		t.Fatalf("%d jobs, want %d", len(r.Summary.Queries), len(want))
	}
	for i, q := range r.Summary.Queries {
		job := r.Jobs[i].FileName
		w := want[job]
		if all != "" {
			w = all
		}
		if q.Store != w || r.Jobs[i].Store != w {
			t.Errorf("%s: summary store %s, job store %s; want %s", job, q.Store, r.Jobs[i].Store, w)
		}
		if seen != nil && !slices.Equal(seen.m[job], []string{w}) {
			t.Errorf("%s opened stores %v, want only %s", job, seen.m[job], w)
		}
	}
}

// TestMixedStoresMatchAllMemory: a run whose queries have stores of their
// own (two in memory, one swept on Pebble) opens each job's store on its
// query's backend, and its counters, timeseries and progress are those of
// the same scenario run all in memory (Options.Store, --store, replacing
// every query's store).
func TestMixedStoresMatchAllMemory(t *testing.T) {
	for _, c := range []struct{ name, extra string }{
		{"one store per operator", ""},
		{"spark partitions", "spark:\n  partitions: 3\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := load(t, mixedStores+c.extra)
			var mem, mixed backendsSeen
			want, err := runOpts(t, sc, Options{Workers: 2, Store: "memory", StoreHook: mem.hook})
			if err != nil {
				t.Fatal(err)
			}
			checkStores(t, want, &mem, mixedWant, "memory")
			got, err := runOpts(t, sc, Options{Workers: 2, StoreHook: mixed.hook})
			if err != nil {
				t.Fatal(err)
			}
			checkStores(t, got, &mixed, mixedWant, "")
			sameResults(t, want, got)
			if q := want.Summary.Queries[0]; q.InputRows == 0 || q.Batches < 20 {
				t.Fatalf("the run is too small to compare: %d rows in %d batches", q.InputRows, q.Batches)
			}
			if (c.extra != "") != (got.Summary.Queries[0].SparkSummary != nil) {
				t.Fatalf("spark summary %v with a spark block %v", got.Summary.Queries[0].SparkSummary != nil, c.extra != "")
			}
		})
	}
}

// TestJobsTakeTheirQueryStore: a query's store beats the scenario's, and
// a run's Options.Store (--store) beats both, for every job of a sweep.
func TestJobsTakeTheirQueryStore(t *testing.T) {
	sc := load(t, strings.Replace(mixedStores, "queries:\n", "store: pebble\nqueries:\n", 1)+"")
	sc.Queries[0].Store = "memory"
	jobs, err := Jobs(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"pair-keyed@30s": "memory", "pair-keyed@1m": "memory",
		"within@30s": "pebble", "within@1m": "pebble",
		"unbounded": "pebble",
	}
	for _, j := range jobs {
		if j.Store != want[j.FileName] {
			t.Errorf("job %s on %s, want %s", j.FileName, j.Store, want[j.FileName])
		}
	}
	short := load(t, strings.Replace(strings.Replace(mixedStores, "duration: 4m", "duration: 3m", 1), "170s", "150s", 1))
	for _, store := range []string{"memory", "pebble"} {
		var seen backendsSeen
		r, err := runOpts(t, short, Options{Workers: 2, Store: store, StoreHook: seen.hook})
		if err != nil {
			t.Fatal(err)
		}
		checkStores(t, r, &seen, mixedWant, store)
	}
}

// TestMixedStoresResume interrupts a mixed-store run at a Pebble job and
// resumes it: the results are the uninterrupted run's (the real SIGKILL
// test is cmd/simulate's TestKillMixedStoresThenResume).
func TestMixedStoresResume(t *testing.T) {
	sc := load(t, mixedStores)
	want, err := runOpts(t, sc, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ck")
	interruptAt(t, sc, dir, "", []int64{8, 14}, "within@30s", 18)
	var seen backendsSeen
	got, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: dir, StoreHook: seen.hook})
	if err != nil {
		t.Fatal(err)
	}
	checkStores(t, got, nil, mixedWant, "")
	for job, kinds := range seen.m {
		if !slices.Equal(kinds, []string{mixedWant[job]}) {
			t.Errorf("resumed %s opened stores %v, want only %s", job, kinds, mixedWant[job])
		}
	}
	if v := seen.resumedAt["within@30s"]; v != 15 {
		t.Fatalf("the resumed Pebble job opened its store at version %d, want 15 (its snapshot after batch 14)", v)
	}
	if summaryJSON(t, want) != summaryJSON(t, got) {
		t.Fatalf("resumed summary differs:\n%s\n%s", summaryJSON(t, want), summaryJSON(t, got))
	}
	sameResults(t, want, got)
}

// TestResumeRefusesChangedQueryStore: a mixed-store checkpoint resumed
// after one query's store changed, or with --store, is refused with one
// line, the folder unchanged; the same stores written differently (a
// query's store spelled out as the scenario's) resume.
func TestResumeRefusesChangedQueryStore(t *testing.T) {
	sc := load(t, mixedStores)
	base := filepath.Join(t.TempDir(), "ck")
	interruptAt(t, sc, base, "", []int64{6}, "within@30s", 9)
	moved := load(t, mixedStores)
	moved.Queries[1].Store = ""
	moved.Queries[2].Store = "pebble"
	back := load(t, mixedStores)
	back.Queries[1].Store = "memory"
	for _, c := range []struct {
		name  string
		sc    *scenario.Scenario
		store string
	}{
		{"a pebble query moved to memory", back, ""},
		{"the stores of two queries swapped", moved, ""},
		{"--store memory", sc, "memory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyTree(t, base)
			before := treeState(t, dir)
			res, err := Run(context.Background(), c.sc, Options{CheckpointDir: dir, Store: c.store})
			if err == nil {
				res.Close()
				t.Fatal("the resume ran")
			}
			if msg := err.Error(); !strings.Contains(msg, "another state store") || !strings.Contains(msg, dir) || strings.Contains(msg, "\n") {
				t.Fatalf("want one line naming %s and another state store, got %v", dir, err)
			}
			sameTree(t, "checkpoint", before, treeState(t, dir))
		})
	}
	t.Run("the same stores, spelled out", func(t *testing.T) {
		same := load(t, mixedStores)
		same.Queries[0].Store = "memory"
		same.Queries[2].Store = "memory"
		dir := copyTree(t, base)
		res, err := runOpts(t, same, Options{CheckpointDir: dir})
		if err != nil {
			t.Fatalf("a resume with the same stores was refused: %v", err)
		}
		checkStores(t, res, nil, mixedWant, "")
	})
}
