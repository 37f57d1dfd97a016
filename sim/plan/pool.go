package plan

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The scheduler. Each seed's search is sequential and deterministic: it
// asks for the simulations of given delays (searcher.run) and waits for
// them. The simulations come from one pool shared by every seed: a memo
// of delay -> result per seed, fed by Workers goroutines. A worker runs
// one batch at a time: one runner.Run, on one worker, of one seed's query
// at one or more delays (a sweep block), which generates the seed's
// stream once for all of them. It takes, in this order:
//
//  1. delays a search waits for, oldest request first and, within a
//     request, the largest delay first (it runs longest): as one batch,
//     its seed's share of the waiting delays over the workers not running
//     a batch (at most maxBatch), so that a request spreads over the idle
//     workers and, when there is more work than workers, delays share
//     streams;
//  2. one delay a search may ask next (its hint: the delays of every
//     request its next step can make, given the results known so far),
//     seeds in order;
//  3. for a seed whose search is over, one of the other seeds' delays,
//     which the combination of the seeds may simulate on it.
//
// So no worker waits for a round to finish while there is work a search
// will or may need. Speculation is bounded: a speculative simulation is
// always one of the delays of a seed's very next possible requests (at
// most 12 for a bisection round, 4 for the grid, one per other seed at
// the end), it is cancelled as soon as it is not any more (a result
// decided the step otherwise), and it never delays a simulation a search
// waits for by more than the one it runs. The search reads only what it
// asked for, so the plan, every byte of it, does not depend on the
// workers, the batches, the speculation or the timing.

// noDelay is the memo key of a simulation of the query as written.
const noDelay = time.Duration(-1)

// maxBatch bounds the delays of one batch of waited-for delays, as a grid
// round did.
const maxBatch = gridChunk

// simulateFunc simulates the one query of sc (with its sweep block of
// one or more delays, or none) on one worker, reporting simulated seconds
// to prog, and returns its summary at each delay, in the sweep's order.
type simulateFunc func(ctx context.Context, sc *scenario.Scenario, prog runner.Progress) ([]metrics.QuerySummary, error)

// runnerSimulate is the simulateFunc of plan: runner.Run on one worker,
// the delays' jobs sharing one generated stream.
func runnerSimulate(ctx context.Context, sc *scenario.Scenario, prog runner.Progress) ([]metrics.QuerySummary, error) {
	res, err := runner.Run(ctx, sc, runner.Options{Workers: 1, Progress: prog})
	if err != nil {
		return nil, err
	}
	// The plan reads the summary only.
	if err := res.Close(); err != nil {
		return nil, err
	}
	return res.Summary.Queries, nil
}

// hintFunc returns the delays a search may ask next, most useful first,
// from the results known so far (known). It runs under the pool's lock
// and must read nothing the search goroutine changes.
type hintFunc func(known func(time.Duration) (Point, bool)) []time.Duration

// task is one simulation of one seed's query at one delay.
type task struct {
	s *searcher
	d time.Duration
	// need is the request that first asked for it (0: speculative).
	need int
	// b is the batch running it; nil until it starts.
	b *batch
	// done is closed once sum or err is set.
	done chan struct{}
	sum  metrics.QuerySummary
	err  error
}

// finished reports whether t's result is in.
func (t *task) finished() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// batch is one runner.Run: tasks of one seed.
type batch struct {
	tasks  []*task
	cancel context.CancelFunc
	// cancelled is set (under the lock) when no search can need it.
	cancelled bool
}

// pool runs the simulations of every seed's search on Workers workers.
type pool struct {
	ctx      context.Context
	simulate simulateFunc
	prog     runner.Progress
	// maxBatch bounds a batch's delays.
	maxBatch int

	mu   sync.Mutex
	cond *sync.Cond
	// seeds are the searches, in seed order.
	seeds []*searcher
	// requests counts the requests so far (task.need).
	requests int
	closed   bool
	// running are the batches running.
	running map[*batch]bool
	// total is the progress bar's total, done the simulated seconds
	// processed (speculation included: the bar moves with the work, and
	// a cancelled simulation never moves it back).
	total, done float64
	wg          sync.WaitGroup

	workers int
	// idle counts the workers waiting for work that no change woke since
	// (tests read it).
	idle int
	// onRequest, if set, is called under the lock with each request
	// (tests).
	onRequest func(s *searcher, delays []time.Duration)
}

// newPool starts workers workers, each running batches of at most
// maxBatch delays; total is the progress bar's estimate of the simulated
// seconds. Close it.
func newPool(ctx context.Context, workers, maxBatch int, sim simulateFunc, prog runner.Progress, total float64) *pool {
	workers = max(workers, 1)
	p := &pool{ctx: ctx, simulate: sim, prog: prog, total: total, maxBatch: max(maxBatch, 1), running: map[*batch]bool{}, workers: workers}
	p.cond = sync.NewCond(&p.mu)
	if prog != nil {
		prog.Start(total)
	}
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

// add registers a seed's search.
func (p *pool) add(s *searcher) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.pool = p
	s.memo = map[time.Duration]*task{}
	p.seeds = append(p.seeds, s)
	slices.SortFunc(p.seeds, func(a, b *searcher) int { return cmp.Compare(a.sc.Seed, b.sc.Seed) })
}

// close cancels every simulation and waits for the workers.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	for b := range p.running {
		b.cancel()
	}
	p.wake()
	p.mu.Unlock()
	p.wg.Wait()
}

// known returns s's results so far, for its hint.
func (p *pool) known(s *searcher) func(time.Duration) (Point, bool) {
	return func(d time.Duration) (Point, bool) {
		t, ok := s.memo[d]
		if !ok || !t.finished() || t.err != nil {
			return Point{}, false
		}
		return s.point(d, t.sum), true
	}
}

// point is the Point of a simulation of s's query at d.
func (s *searcher) point(d time.Duration, q metrics.QuerySummary) Point {
	if d == noDelay {
		return Point{Summary: q, Meets: s.meets(q)}
	}
	return Point{Delay: d, HasDelay: true, Summary: q, Meets: s.meets(q)}
}

// request asks for s's simulations at delays, sets s's hint to next, and
// waits for them. The results are in delays' order.
func (p *pool) request(s *searcher, delays []time.Duration, next hintFunc) ([]metrics.QuerySummary, error) {
	p.mu.Lock()
	if p.onRequest != nil {
		p.onRequest(s, delays)
	}
	p.requests++
	ts := make([]*task, len(delays))
	for i, d := range delays {
		t, ok := s.memo[d]
		if !ok {
			t = &task{s: s, d: d, done: make(chan struct{})}
			s.memo[d] = t
		}
		if t.need == 0 {
			t.need = p.requests
		}
		ts[i] = t
	}
	s.hint = next
	s.waitingOn = ts
	p.prune(s)
	p.wake()
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		s.waitingOn = nil
		p.mu.Unlock()
	}()
	out := make([]metrics.QuerySummary, len(ts))
	for i, t := range ts {
		select {
		case <-t.done:
		case <-p.ctx.Done():
			return nil, p.ctx.Err()
		}
		if t.err != nil {
			if t.d == noDelay {
				return nil, fmt.Errorf("simulating %s: %w", s.q.Name, t.err)
			}
			return nil, fmt.Errorf("simulating %s at %s: %w", s.q.Name, interval.Format(t.d), t.err)
		}
		out[i] = t.sum
	}
	return out, nil
}

// prune cancels s's speculative batches of which its hint names no delay
// any more: no request of its next step can need them. Called with the
// lock held.
func (p *pool) prune(s *searcher) {
	var keep []time.Duration
	if s.hint != nil {
		keep = s.hint(p.known(s))
	}
	for b := range p.running {
		if b.tasks[0].s != s || b.cancelled {
			continue
		}
		useful := false
		for _, t := range b.tasks {
			useful = useful || t.need != 0 || slices.Contains(keep, t.d)
		}
		if useful {
			continue
		}
		b.cancelled = true
		b.cancel()
		for _, t := range b.tasks {
			delete(s.memo, t.d)
		}
	}
}

// next returns the next batch to run, or nil. Called with the lock held.
func (p *pool) next() []*task {
	free := p.workers - len(p.running)
	var need []*task
	for _, s := range p.seeds {
		for _, t := range s.memo {
			if t.b == nil && t.need != 0 {
				need = append(need, t)
			}
		}
	}
	if len(need) > 0 {
		slices.SortFunc(need, func(a, b *task) int {
			return cmp.Or(cmp.Compare(a.need, b.need), cmp.Compare(b.d, a.d))
		})
		return p.share(need, len(need), free)
	}
	// The searches' hints first, then those of the seeds whose search is
	// over. A speculative batch is one delay: it is cancelled alone, and
	// its result is in as soon as it is done.
	for _, over := range []bool{false, true} {
		for _, s := range p.seeds {
			if s.hint == nil || s.done != over {
				continue
			}
			for _, d := range s.hint(p.known(s)) {
				if _, ok := s.memo[d]; !ok {
					t := &task{s: s, d: d, done: make(chan struct{})}
					s.memo[d] = t
					return []*task{t}
				}
			}
		}
	}
	return nil
}

// share returns the first of ts and the ones after it of the same seed,
// up to its share of n over free workers (and maxBatch).
func (p *pool) share(ts []*task, n, free int) []*task {
	size := min(p.maxBatch, (n+free-1)/free)
	b := []*task{ts[0]}
	for _, t := range ts[1:] {
		if len(b) >= size || ts[0].d == noDelay {
			break
		}
		if t.s == ts[0].s && t.d != noDelay {
			b = append(b, t)
		}
	}
	return b
}

// work is one worker: it runs batches until the pool closes.
func (p *pool) work() {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		var ts []*task
		for !p.closed && p.ctx.Err() == nil {
			if ts = p.next(); ts != nil {
				break
			}
			p.idle++
			p.cond.Wait()
		}
		if ts == nil {
			return
		}
		ctx, cancel := context.WithCancel(p.ctx)
		b := &batch{tasks: ts, cancel: cancel}
		for _, t := range ts {
			t.b = b
		}
		p.running[b] = true
		sc := ts[0].s.simScenario(ts)
		p.mu.Unlock()
		sums, err := p.simulate(ctx, sc, batchProgress{p})
		cancel()
		p.mu.Lock()
		delete(p.running, b)
		if !b.cancelled {
			if err == nil && len(sums) != len(ts) {
				err = fmt.Errorf("%d results for %d delays", len(sums), len(ts))
			}
			for i, t := range ts {
				t.err = err
				if err == nil {
					t.sum = sums[i]
				}
				close(t.done)
			}
			// A result can narrow its seed's hint.
			p.prune(ts[0].s)
		}
		p.wake()
	}
}

// wake wakes the idle workers: something changed. Called with the lock
// held.
func (p *pool) wake() {
	p.idle = 0
	p.cond.Broadcast()
}

// batchProgress forwards a batch's progress to the bar.
type batchProgress struct{ p *pool }

// Start implements runner.Progress; the bar's total is the pool's.
func (bp batchProgress) Start(float64) {}

// Add implements runner.Progress.
func (bp batchProgress) Add(sec float64) {
	if bp.p.prog == nil {
		return
	}
	bp.p.prog.Add(sec)
	bp.p.mu.Lock()
	defer bp.p.mu.Unlock()
	if bp.p.done += sec; bp.p.done > bp.p.total {
		// Past the estimate: the bar's end moves a quarter further.
		bp.p.total = 1.25 * bp.p.done
		bp.p.prog.Start(bp.p.total)
	}
}

// simScenario is s's scenario restricted to its query, at the delays of
// ts (noDelay: as written).
func (s *searcher) simScenario(ts []*task) *scenario.Scenario {
	sc := *s.sc
	sc.Queries = []scenario.Query{s.q}
	sc.Sweep = nil
	if ts[0].d != noDelay {
		sc.Sweep = &scenario.Sweep{}
		for _, t := range ts {
			sc.Sweep.Delay = append(sc.Sweep.Delay, interval.Duration(t.d))
		}
	}
	return &sc
}
