package microbatch

import (
	"sync"
	"sync/atomic"
)

// A partitioned query's tasks are independent, as Spark's are: each
// partition's keys meet only that partition's store. With a Pool the
// query runs each dedup operator's partitions (their lookups and inserts,
// then their eviction) on the pool's goroutines as well as its own; the
// batch's watermark stays the query's, computed from the whole batch
// before and after, and every partition writes only its own slots of the
// shared buffers, so the results are those of the sequential loop,
// whatever the number of workers and of cores.

// Pool is a fixed set of goroutines that run the partitions of
// partitioned queries; one pool serves every query of a run. A query
// hands a batch's partitions to the workers that are idle at that moment
// and runs the rest itself, so a busy pool never makes a query wait. The
// zero of a pool's use is nil: a nil *Pool runs everything on the
// caller's goroutine.
type Pool struct {
	work chan *partWork
	wg   sync.WaitGroup
}

// NewPool starts a pool of workers-1 goroutines (the caller is the
// workers-th); it returns nil, the sequential pool, for workers <= 1.
// Close it when its queries are done.
func NewPool(workers int) *Pool {
	if workers <= 1 {
		return nil
	}
	p := &Pool{work: make(chan *partWork)}
	for range workers - 1 {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for w := range p.work {
				w.loop()
				w.done.Done()
			}
		}()
	}
	return p
}

// Close stops the pool's goroutines once they finished their work.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	close(p.work)
	p.wg.Wait()
}

// SetPool makes a partitioned query run its partitions on p (nil: on the
// query's goroutine). It changes no result.
func (q *Query) SetPool(p *Pool) { q.pool = p }

// partWork is one operator's per-partition step, made once per operator
// and run once per batch: fn(part) for every partition, partitions handed
// out one at a time.
type partWork struct {
	fn   func(part int) error
	n    int
	next atomic.Int64
	errs []error
	done sync.WaitGroup
}

func newPartWork(n int, fn func(part int) error) *partWork {
	return &partWork{fn: fn, n: n, errs: make([]error, n)}
}

// loop runs partitions until none is left.
func (w *partWork) loop() {
	for {
		part := int(w.next.Add(1) - 1)
		if part >= w.n {
			return
		}
		w.errs[part] = w.fn(part)
	}
}

// run runs fn for every partition on p's idle workers and the caller's
// goroutine, and returns the error of the first partition that failed, in
// partition order, as the sequential loop would.
func (p *Pool) run(w *partWork) error {
	w.next.Store(0)
	if p != nil {
	hand:
		for range w.n - 1 {
			w.done.Add(1)
			select {
			case p.work <- w:
			default:
				w.done.Done()
				break hand
			}
		}
	}
	w.loop()
	w.done.Wait()
	for part, err := range w.errs {
		if err != nil {
			clear(w.errs[part:])
			return err
		}
	}
	return nil
}
