package plan

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// updateSched rewrites testdata/sched-*: only when the plan's output
// changes on purpose (such as its notes), never to make a scheduling
// difference pass.
var updateSched = flag.Bool("update-sched", false, "rewrite testdata/sched-* from the plan's output with 2 workers")

// goldenCases are plans whose text and JSON testdata/sched-NAME.* hold as
// the implementation before the scheduler (commit e17433e, searching in
// rounds) printed them, with Workers 2, and as later output changes on
// purpose rewrote them (-update-sched: the notes at the recommendation
// and the copies they rest on; the production rate simulated, not
// scaled). They cover every path of the
// search: the grid and the bisection, several seeds and a quantile, the
// budget's fallback, the unreachable plan, a query without a delay to
// plan, a query that never evicts and a production rate.
var goldenCases = []struct {
	name, yaml, query string
	t                 Targets
	seeds             int
	q                 float64
}{
	{"within-3seeds", knownGaps, "within-watermark", Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001}, 3, 0},
	{"within-quantile", knownGaps, "within-watermark", Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001}, 3, 0.5},
	{"within-budget", knownGaps, "within-watermark", Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.0001, MemoryBudget: 1 << 20}, 2, 0},
	{"pair-keyed", knownGaps, "pair-keyed", DefaultTargets, 2, 0},
	{"unbounded", knownGaps, "unbounded", Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.001, MemoryBudget: 1 << 30}, 2, 0},
	{"global", knownGaps, "global", Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.001, MemoryBudget: 1 << 30}, 1, 0},
	{"uniform-rate", uniformGaps, "within-watermark", Targets{MaxMissedRate: 0.01, MaxFalseDropRate: 0.001, ProductionRate: 300}, 2, 0},
}

// planBytes returns a plan's text and JSON, as simulate plan prints them.
func planBytes(t *testing.T, r *Result, name string, seed uint64) (string, string) {
	t.Helper()
	var a, b bytes.Buffer
	if err := r.WriteText(&a, name+".yaml", seed); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return a.String(), b.String()
}

// TestPlanSameAsRoundsForAnyWorkers: the scheduler changes no byte of a
// plan, text or JSON: with 3 seeds for 1, 2 and 4 workers (and batches of
// up to four delays or of one), and every other golden case for one of
// them in turn, the plan prints what the search in rounds printed.
func TestPlanSameAsRoundsForAnyWorkers(t *testing.T) {
	for i, c := range goldenCases {
		workers := []int{[]int{1, 2, 4}[i%3]}
		if i == 0 {
			workers = []int{1, 2, 4}
		}
		if *updateSched {
			r, err := Search(context.Background(), parse(t, c.yaml), c.query, c.t, Options{Workers: 2, Seeds: c.seeds, Quantile: c.q, SimulateEach: true})
			if err != nil {
				t.Fatal(err)
			}
			text, js := planBytes(t, r, c.name, r.Seeds[0].Seed)
			for ext, data := range map[string]string{".txt": text, ".json": js} {
				if err := os.WriteFile(filepath.Join("testdata", "sched-"+c.name+ext), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		wantText, err := os.ReadFile(filepath.Join("testdata", "sched-"+c.name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, err := os.ReadFile(filepath.Join("testdata", "sched-"+c.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		sc := parse(t, c.yaml)
		batches := []int{0}
		if i == 0 {
			// And with batches of one delay, each with its own stream.
			batches = append(batches, 1)
		}
		for _, w := range workers {
			for _, b := range batches {
				r, err := Search(context.Background(), sc, c.query, c.t, Options{Workers: w, Seeds: c.seeds, Quantile: c.q, maxBatch: b, SimulateEach: true})
				if err != nil {
					t.Fatalf("%s, %d workers: %v", c.name, w, err)
				}
				text, js := planBytes(t, r, c.name, sc.Seed)
				if text != string(wantText) {
					t.Errorf("%s, %d workers, batches of %d: text differs from the rounds':\n%s\nwant:\n%s", c.name, w, b, text, wantText)
				}
				if js != string(wantJSON) {
					t.Errorf("%s, %d workers, batches of %d: JSON differs from the rounds':\n%s\nwant:\n%s", c.name, w, b, js, wantJSON)
				}
			}
		}
	}
}

// fakeSim is a simulator in virtual time: a batch of delays costs one
// unit of stream plus, per delay, one unit and one more per minute of
// delay (larger delays hold more state and run longer). It runs until the
// test's clock reaches its end. Its results: each seed passes both rate
// targets from a threshold delay of its own on, and fails both below it.
type fakeSim struct {
	mu      sync.Mutex
	now     float64
	running map[*fakeJob]bool
}

type fakeJob struct {
	end     float64
	release chan struct{}
}

// threshold is seed's passing delay in the fake.
func threshold(seed uint64) time.Duration {
	return 3*time.Minute + time.Duration(seed%7)*11*time.Second
}

func (f *fakeSim) simulate(ctx context.Context, sc *scenario.Scenario, _ runner.Progress) ([]metrics.QuerySummary, error) {
	var out []metrics.QuerySummary
	cost := 1.0
	for _, d := range sc.Sweep.Delay {
		q := metrics.QuerySummary{Name: sc.Queries[0].Name, Query: fmt.Sprintf("at %s", d), PeakStateRows: int64(d.Std().Seconds() * 100), PeakStateBytes: int64(d.Std().Seconds() * 10000)}
		if d.Std() < threshold(sc.Seed) {
			q.MissedDuplicateRate, q.FalseDropRate = 0.5, 0.01
		}
		out = append(out, q)
		cost += 1 + d.Std().Minutes()
	}
	j := &fakeJob{release: make(chan struct{})}
	f.mu.Lock()
	j.end = f.now + cost
	f.running[j] = true
	f.mu.Unlock()
	select {
	case <-j.release:
		return out, nil
	case <-ctx.Done():
		// A simulation takes a moment to stop.
		time.Sleep(20 * time.Millisecond)
		f.mu.Lock()
		delete(f.running, j)
		f.mu.Unlock()
		return nil, ctx.Err()
	}
}

// request is one request a search made, with what had started then.
type schedRequest struct {
	seed   uint64
	delays []time.Duration
	// combine is set for the seeds' combination's requests.
	combine bool
}

// snapshot is the pool at a quiescent moment.
type snapshot struct {
	at   float64
	idle int
	// issued is each seed's requests so far; started its delays started
	// or done.
	issued  map[uint64]int
	started map[uint64][]time.Duration
	// waitingSpec is set when a delay a search waits for is unstarted
	// while a worker is idle.
	needIdle bool
}

// runVirtual plans knownGaps' within-watermark query on the fake
// simulator with workers workers and seeds seeds, advancing virtual time
// from one batch's end to the next once the pool is quiescent (every
// worker idle or in a batch, every search waiting for a result). It
// returns the plan, the requests and the snapshots.
func runVirtual(t *testing.T, workers, seeds int) (*Result, []schedRequest, []snapshot, float64, float64) {
	t.Helper()
	sc := parse(t, knownGaps)
	f := &fakeSim{running: map[*fakeJob]bool{}}
	var (
		mu   sync.Mutex
		p    *pool
		reqs []schedRequest
	)
	sim := func(ctx context.Context, s *scenario.Scenario, prog runner.Progress) ([]metrics.QuerySummary, error) {
		return f.simulate(ctx, s, prog)
	}
	opts := Options{Workers: workers, Seeds: seeds, simulate: sim}
	opts.onPool = func(pp *pool) {
		mu.Lock()
		p = pp
		mu.Unlock()
		pp.onRequest = func(s *searcher, delays []time.Duration) {
			reqs = append(reqs, schedRequest{seed: s.sc.Seed, delays: slices.Clone(delays), combine: s.done})
		}
	}
	type outcome struct {
		r   *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := Search(context.Background(), sc, "within-watermark", Targets{MaxMissedRate: 0.005, MaxFalseDropRate: 0.001}, opts)
		done <- outcome{r, err}
	}()
	var snaps []snapshot
	idleTime := 0.0
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case o := <-done:
			if o.err != nil {
				t.Fatal(o.err)
			}
			// The plan ends with no simulation left running: the
			// speculative ones were cancelled.
			f.mu.Lock()
			if n := len(f.running); n > 0 {
				t.Errorf("%d workers, %d seeds: %d simulations still run after the plan", workers, seeds, n)
			}
			f.mu.Unlock()
			return o.r, reqs, snaps, idleTime, f.now
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the plan did not end")
		}
		mu.Lock()
		pp := p
		mu.Unlock()
		if pp == nil {
			runtime.Gosched()
			continue
		}
		pp.mu.Lock()
		f.mu.Lock()
		quiet := len(pp.seeds) == seeds && pp.idle+len(f.running) == workers && len(f.running) > 0
		for _, s := range pp.seeds {
			// Waiting for a result, or over and not asking.
			blocked := len(s.waitingOn) == 0 && s.done
			for _, tk := range s.waitingOn {
				blocked = blocked || !tk.finished()
			}
			quiet = quiet && blocked
		}
		if !quiet {
			f.mu.Unlock()
			pp.mu.Unlock()
			time.Sleep(50 * time.Microsecond)
			continue
		}
		sn := snapshot{at: f.now, idle: pp.idle, issued: map[uint64]int{}, started: map[uint64][]time.Duration{}}
		for _, r := range reqs {
			sn.issued[r.seed]++
		}
		for _, s := range pp.seeds {
			for d, tk := range s.memo {
				if tk.b != nil {
					sn.started[s.sc.Seed] = append(sn.started[s.sc.Seed], d)
				} else if tk.need != 0 && pp.idle > 0 {
					sn.needIdle = true
				}
			}
		}
		snaps = append(snaps, sn)
		// The next batch to end ends; the idle workers idle until then.
		var first *fakeJob
		for j := range f.running {
			if first == nil || j.end < first.end {
				first = j
			}
		}
		idleTime += float64(pp.idle) * (first.end - f.now)
		f.now = first.end
		delete(f.running, first)
		close(first.release)
		f.mu.Unlock()
		pp.mu.Unlock()
	}
}

// TestPoolKeepsWorkersBusy: in virtual time, whenever a worker idles,
// every delay of each search's next request has already started (or is
// done): the idle worker had nothing the searches will or may need. A
// scheduler in rounds (a request's delays, then nothing until the search
// asks again) fails it at the end of every round. The requests each
// search makes, and the plan, do not depend on the workers.
func TestPoolKeepsWorkersBusy(t *testing.T) {
	var ref string
	allChecked, sawIdle := 0, false
	for _, c := range []struct{ workers, seeds int }{{2, 1}, {3, 1}, {2, 3}, {4, 3}, {2, 5}} {
		r, reqs, snaps, idle, makespan := runVirtual(t, c.workers, c.seeds)
		bySeed := map[uint64][]schedRequest{}
		for _, q := range reqs {
			bySeed[q.seed] = append(bySeed[q.seed], q)
		}
		checked := 0
		for _, sn := range snaps {
			if sn.needIdle {
				t.Errorf("%d workers, %d seeds, at %.1f: a worker idles while a delay a search waits for is unstarted", c.workers, c.seeds, sn.at)
			}
			if sn.idle == 0 {
				continue
			}
			for seed, rs := range bySeed {
				k := sn.issued[seed]
				if k >= len(rs) || rs[k].combine {
					continue
				}
				checked++
				for _, d := range rs[k].delays {
					if !slices.Contains(sn.started[seed], d) {
						t.Errorf("%d workers, %d seeds, at %.1f: %d worker(s) idle while seed %d's next request %v has %s unstarted",
							c.workers, c.seeds, sn.at, sn.idle, seed, rs[k].delays, d)
					}
				}
			}
		}
		allChecked += checked
		for _, sn := range snaps {
			if sn.idle > 0 {
				sawIdle = true
			}
		}
		if t.Failed() {
			for _, q := range reqs {
				t.Logf("request seed %d %v combine %v", q.seed, q.delays, q.combine)
			}
			for _, sn := range snaps {
				t.Logf("snap at %.1f idle %d issued %v started %v", sn.at, sn.idle, sn.issued, sn.started)
			}
		}
		t.Logf("%d workers, %d seeds: %d requests, %d quiescent moments (%d checks), makespan %.1f units, idle %.1f of %.1f worker-units",
			c.workers, c.seeds, len(reqs), len(snaps), checked, makespan, idle, makespan*float64(c.workers))
		if r.Recommended == nil || *r.Recommended < threshold(5) {
			t.Fatalf("%d workers: recommended %v; want at least seed 5's threshold %s", c.workers, r.Recommended, threshold(5))
		}
		if c.seeds == 1 {
			text, js := planBytes(t, r, "fake", 5)
			if ref == "" {
				ref = text + js
			} else if text+js != ref {
				t.Errorf("%d workers: the plan differs from 2 workers'", c.workers)
			}
		}
	}
	if !sawIdle {
		t.Error("no worker ever idled, not even at the end: the harness sees no idle worker")
	}
	t.Logf("%d idle moments before a request checked", allChecked)
}

// TestPlanEndsPromptlyWhenCancelled: cancelling the caller's context
// ends the plan with its error while simulations run, and no simulation
// outlives it.
func TestPlanEndsPromptlyWhenCancelled(t *testing.T) {
	sc := parse(t, knownGaps)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	running, requests := 0, 0
	sim := func(ctx context.Context, _ *scenario.Scenario, _ runner.Progress) ([]metrics.QuerySummary, error) {
		mu.Lock()
		running++
		mu.Unlock()
		<-ctx.Done()
		// A simulation takes a moment to stop.
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return nil, ctx.Err()
	}
	opts := Options{Workers: 3, Seeds: 3, simulate: sim, onPool: func(p *pool) {
		p.onRequest = func(*searcher, []time.Duration) {
			mu.Lock()
			requests++
			mu.Unlock()
		}
	}}
	done := make(chan error, 1)
	go func() {
		_, err := Search(ctx, sc, "within-watermark", DefaultTargets, opts)
		done <- err
	}()
	// Cancel once every seed waits and every worker simulates.
	for {
		mu.Lock()
		ready := requests == 3 && running == 3
		mu.Unlock()
		if ready {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled plan: error %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the cancelled plan did not end")
	}
	mu.Lock()
	defer mu.Unlock()
	if running != 0 {
		t.Errorf("%d simulations still run after the plan returned", running)
	}
}
