// Package storebench compares state stores on one scenario, as a user
// does before choosing between Spark's HDFS-backed (in-memory) state store
// and RocksDB. For a scenario with a spark: block it compares Spark's
// providers as modelled (spark.go): executor memory and disk and batch
// durations at the block's partitions and executors. Otherwise it
// compares the simulator's own backends: it runs every query of the scenario
// on the memory store, checkpointed like Spark's HDFS-backed store, and on
// Pebble, checks that both produced identical results, and measures per
// query and backend the engine's throughput, the peak state (the per-entry
// model, the memory store's measured Go heap, Pebble's disk and memtable),
// the checkpoint bytes written per batch and the time to recover the
// stores from their last checkpoint.
//
// # How it measures
//
// It runs the scenario through sim/runner once per backend with a
// runner.StoreHook that wraps every store the run opens. The wrapper times
// each Commit and, after it, samples what the backend can tell: for the
// memory store the Go heap (runtime.GC, then runtime.ReadMemStats) each
// time the job's state has grown 5% past the last sample, for Pebble its
// Metrics. Those samples run inside the engine's timed section, so their
// time is measured and subtracted before events/s is computed; what is not
// subtracted is one extra interface call per row through the wrapper, a
// few nanoseconds. Jobs run one at a time (one worker), so that a heap
// measurement holds one job's state only and no job competes with another
// for the CPU. After each run the query's stores are reopened from their
// checkpoint folders and timed: that is the recovery time.
//
// This package runs simulations; the rest of reports only reads results
// (metrics.StoreBench is the stores.json it produces).
package storebench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Backends are the backends compared, in the order they run and appear.
func Backends() []string { return []string{scenario.StoreMemory, scenario.StorePebble} }

// heapStep is the growth of a job's state rows, as a fraction, past which
// the memory backend's heap is sampled again. Each sample forces a full
// garbage collection; sampling at every batch would cost a long run
// thousands of them, and 5% bounds how far below the true peak the
// sampled peak can be (heap follows state, in steps).
const heapStep = 0.05

// Options configure a comparison.
type Options struct {
	// Progress, if set, is told the simulated seconds of all the runs
	// together (both backends), and then how many have been processed.
	Progress runner.Progress
	// TempDir is where the runs' checkpoint folders are made and removed
	// [os.TempDir()]. Pebble's numbers depend on the file system there.
	TempDir string
	// Repeats is how many times each backend runs the scenario [1]; the
	// wall-clock numbers (events/s, recovery) are then the median of the
	// runs, each run's kept beside it, the backends taking turns so that
	// a slow spell of the machine falls on both.
	Repeats int
}

// Result is a finished comparison.
type Result struct {
	// Bench is the content of stores.json.
	Bench *metrics.StoreBench
	// Memory holds the memory backend's run results; Pebble's are
	// identical apart from wall-clock fields and the store name.
	Memory *runner.Results
	// tmp holds the runs' folders, which Memory reads its rows from.
	tmp string
}

// Close releases the comparison's temporary folders; Memory cannot be
// read afterwards.
func (r *Result) Close() error {
	err := r.Memory.Close()
	if rerr := os.RemoveAll(r.tmp); err == nil {
		err = rerr
	}
	return err
}

// Run runs every query of sc on each backend and compares them. It fails,
// naming the query and the field, if the backends produce different
// results: their numbers would then compare different computations.
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (_ *Result, err error) {
	if sc.Spark != nil {
		// A modelled Spark cluster: compare Spark's providers, not the
		// simulator's stores (the meter measures one store per dedup
		// operator, not partitioned state).
		return runProviders(ctx, sc, opts)
	}
	tmp, err := os.MkdirTemp(opts.TempDir, "dedupsim-bench-stores-")
	if err != nil {
		return nil, fmt.Errorf("bench-stores: %w", err)
	}
	results := map[string]*runner.Results{}
	defer func() {
		// The memory run's rows are read until the result is closed; the
		// rest goes now.
		if peb := results[scenario.StorePebble]; peb != nil {
			peb.Close()
		}
		if err != nil {
			if mem := results[scenario.StoreMemory]; mem != nil {
				mem.Close()
			}
			os.RemoveAll(tmp)
		}
	}()
	repeats := max(opts.Repeats, 1)
	var prog runner.Progress
	if opts.Progress != nil {
		prog = &allRuns{p: opts.Progress, runs: len(Backends()) * repeats}
	}
	// runs[backend][rep] holds one StoreRun per job; times[backend] the
	// whole runs' wall and CPU seconds.
	runs := map[string][][]metrics.StoreRun{}
	times := map[string]*metrics.StoreBackendTime{}
	for rep := range repeats {
		for _, backend := range Backends() {
			wall0, cpu0 := time.Now(), processCPU()
			res, jobs, err := runOnce(ctx, sc, backend, tmp, rep, prog)
			if err != nil {
				return nil, err
			}
			bt := times[backend]
			if bt == nil {
				bt = &metrics.StoreBackendTime{Store: backend}
				times[backend] = bt
			}
			bt.WallSecondsRuns = append(bt.WallSecondsRuns, time.Since(wall0).Seconds())
			bt.CPUSecondsRuns = append(bt.CPUSecondsRuns, (processCPU() - cpu0).Seconds())
			runs[backend] = append(runs[backend], jobs)
			if rep == 0 {
				results[backend] = res
				continue
			}
			// Only the first repetition's results are kept; the others
			// are measurements only.
			if err := res.Close(); err != nil {
				return nil, err
			}
			if err := os.RemoveAll(filepath.Join(tmp, fmt.Sprintf("%s-%d", backend, rep))); err != nil {
				return nil, fmt.Errorf("bench-stores: %w", err)
			}
		}
	}
	mem, peb := results[scenario.StoreMemory], results[scenario.StorePebble]
	if err := Compare(mem, peb); err != nil {
		return nil, err
	}
	sb := &metrics.StoreBench{
		Format: metrics.StoresFormat, Scenario: sc.Name, Seed: sc.Seed, Identical: true,
		Machine: metrics.StoreMachine{
			GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
		},
	}
	for i := range mem.Jobs {
		for _, backend := range Backends() {
			sb.Runs = append(sb.Runs, medianRun(runs[backend], i))
		}
	}
	for _, backend := range Backends() {
		bt := *times[backend]
		bt.WallSeconds, bt.CPUSeconds = median(bt.WallSecondsRuns), median(bt.CPUSecondsRuns)
		sb.Backends = append(sb.Backends, bt)
	}
	return &Result{Bench: sb, Memory: mem, tmp: tmp}, nil
}

// medianRun is job i's StoreRun of the first repetition with its
// wall-clock numbers replaced by their medians over the repetitions
// (each kept, in the order they ran); one repetition is returned as is.
func medianRun(reps [][]metrics.StoreRun, i int) metrics.StoreRun {
	r := reps[0][i]
	if len(reps) == 1 {
		return r
	}
	var eps, rec []float64
	for _, rp := range reps {
		eps = append(eps, rp[i].EventsPerSecond)
		rec = append(rec, rp[i].RecoverySeconds)
	}
	r.EventsPerSecondRuns, r.RecoverySecondsRuns = eps, rec
	r.EventsPerSecond, r.RecoverySeconds = median(eps), median(rec)
	// The engine time of the median run, or the mean of the middle two.
	var engine, commit, measure []float64
	for _, rp := range reps {
		engine = append(engine, rp[i].EngineSeconds)
		commit = append(commit, rp[i].CommitSeconds)
		measure = append(measure, rp[i].MeasureSeconds)
	}
	r.EngineSeconds, r.CommitSeconds, r.MeasureSeconds = median(engine), median(commit), median(measure)
	return r
}

// median returns the median of xs (the mean of the middle two for an
// even count); xs is not changed.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// runOnce runs sc on one backend, metered, and measures its recovery.
// Repetition rep's checkpoints go to their own folder under tmp.
func runOnce(ctx context.Context, sc *scenario.Scenario, backend, tmp string, rep int, prog runner.Progress) (*runner.Results, []metrics.StoreRun, error) {
	dir := filepath.Join(tmp, backend)
	if rep > 0 {
		dir = fmt.Sprintf("%s-%d", dir, rep)
	}
	m := &meter{backend: backend, jobs: map[string]*jobMeter{}}
	res, err := runner.Run(ctx, sc, runner.Options{
		// One job at a time: see the package documentation.
		Workers: 1,
		Store:   backend,
		// A checkpoint folder turns the memory store's checkpoints
		// on (Spark's HDFS-backed store always checkpoints) and keeps
		// both backends' folders for the recovery measurement.
		CheckpointDir: dir,
		// The run need not be resumable: no job snapshots, whose
		// writing would only add noise.
		SnapshotEvery: time.Duration(math.MaxInt64),
		StoreHook:     m.hook,
		Progress:      prog,
		ScratchDir:    filepath.Join(tmp, "scratch"),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s backend: %w", backend, err)
	}
	jobs, err := m.finish(res)
	if err != nil {
		res.Close()
		return nil, nil, fmt.Errorf("%s backend: %w", backend, err)
	}
	return res, jobs, nil
}

// Write writes the results files into the folder dir (a staging folder,
// see RunTo): the memory run's results (summary.json, timeseries.csv,
// progress/) and stores.json, then, when render is not nil, the report,
// which gains the store comparison from stores.json (reports.Render:
// stores.md, stores.png and .svg, and a section of report.md and
// report.html).
func Write(dir string, r *Result, render runner.Renderer) error {
	if err := runner.Write(dir, r.Memory); err != nil {
		return err
	}
	if err := metrics.WriteStoreBench(dir, r.Bench); err != nil {
		return fmt.Errorf("results %s: %w", dir, err)
	}
	if render == nil {
		return nil
	}
	if err := render(dir); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	return nil
}

// RunTo compares the backends on sc and publishes the results folder at
// out, with the guarantees of runner.RunTo: out is checked before anything
// runs, everything is written into a staging folder beside it, and the
// staging folder replaces out in one step; on failure out is untouched.
// render, when not nil, draws the report (see Write).
func RunTo(ctx context.Context, sc *scenario.Scenario, opts Options, out string, render runner.Renderer) (*Result, error) {
	return runner.PublishRun(ctx, out, &opts.TempDir, func() (*Result, error) {
		res, err := Run(ctx, sc, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.File, err)
		}
		return res, nil
	}, func(dir string, res *Result) error { return Write(dir, res, render) })
}

// Compare returns an error naming the first difference between two runs of
// the same scenario on different backends: a summary field (wall-clock
// fields and the store name aside), a timeseries cell or a progress line.
func Compare(a, b *runner.Results) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("memory and pebble backends disagree: "+format, args...)
	}
	if len(a.Summary.Queries) != len(b.Summary.Queries) {
		return fail("%d queries (memory) vs %d (pebble)", len(a.Summary.Queries), len(b.Summary.Queries))
	}
	for i := range a.Summary.Queries {
		x, y := withoutWallClock(a.Summary.Queries[i]), withoutWallClock(b.Summary.Queries[i])
		if err := sameFields(x, y); err != nil {
			return fail("query %s: %v", a.Summary.Queries[i].Name, err)
		}
	}
	if !reflect.DeepEqual(a.Summary.Markers, b.Summary.Markers) {
		return fail("markers differ")
	}
	if err := sameRows(a, b); err != nil {
		return err
	}
	for _, j := range a.Jobs {
		same, err := sameProgress(a, b, j.FileName)
		if err != nil {
			return err
		}
		if !same {
			return fail("progress/%s.jsonl differs", j.FileName)
		}
	}
	return nil
}

// sameProgress compares the progress files of a job in two runs, a block
// at a time.
func sameProgress(a, b *runner.Results, name string) (bool, error) {
	ra, err := a.OpenProgress(name)
	if err != nil {
		return false, err
	}
	defer ra.Close()
	rb, err := b.OpenProgress(name)
	if err != nil {
		return false, err
	}
	defer rb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(ra, ba)
		nb, eb := io.ReadFull(rb, bb)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		aEnd := ea == io.EOF || ea == io.ErrUnexpectedEOF
		bEnd := eb == io.EOF || eb == io.ErrUnexpectedEOF
		if ea != nil && !aEnd {
			return false, ea
		}
		if eb != nil && !bEnd {
			return false, eb
		}
		if aEnd || bEnd {
			// Equal blocks, one of them short: both files ended.
			return true, nil
		}
	}
}

// sameRows compares the timeseries rows of two runs, streaming both, and
// names the first cell that differs.
func sameRows(a, b *runner.Results) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("memory and pebble backends disagree: "+format, args...)
	}
	nextB, stop := iter.Pull2(b.Rows())
	defer stop()
	var ra, rb []string
	i := 0
	for recA, err := range a.Rows() {
		if err != nil {
			return err
		}
		i++
		recB, errB, ok := nextB()
		if errB != nil {
			return errB
		}
		if !ok {
			return fail("%d or more timeseries rows (memory) vs %d (pebble)", i, i-1)
		}
		ra, rb = recA.Record(ra), recB.Record(rb)
		for c := range ra {
			if ra[c] != rb[c] {
				return fail("timeseries row %d (query %s, batch %d): %s %s (memory) vs %s (pebble)",
					i, recA.Query, recA.BatchID, metrics.TimeseriesHeader[c], ra[c], rb[c])
			}
		}
	}
	if _, errB, ok := nextB(); errB != nil {
		return errB
	} else if ok {
		return fail("%d timeseries rows (memory) vs more (pebble)", i)
	}
	return nil
}

// withoutWallClock returns q without the fields that may differ between
// backends: the wall-clock measurements and the store's name.
func withoutWallClock(q metrics.QuerySummary) metrics.QuerySummary {
	q.EventsPerSecond, q.WallSeconds, q.Store = 0, 0, ""
	return q
}

// sameFields compares two summaries field by field, by their JSON names,
// and names the first field that differs.
func sameFields(a, b metrics.QuerySummary) error {
	ma, err := fieldsOf(a)
	if err != nil {
		return err
	}
	mb, err := fieldsOf(b)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(ma))
	for k := range ma {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !bytes.Equal(ma[k], mb[k]) {
			return fmt.Errorf("%s %s (memory) vs %s (pebble)", k, ma[k], mb[k])
		}
	}
	return nil
}

func fieldsOf(q metrics.QuerySummary) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	err = json.Unmarshal(data, &m)
	return m, err
}

// allRuns spreads one progress bar over the runs of every backend: each
// runner.Run starts its own total, the bar wants the sum.
type allRuns struct {
	p       runner.Progress
	runs    int
	started bool
}

// Start implements runner.Progress; runner.Run calls it before its jobs
// start, from the caller's goroutine.
func (a *allRuns) Start(total float64) {
	if !a.started {
		a.started = true
		a.p.Start(total * float64(a.runs))
	}
}

// Add implements runner.Progress.
func (a *allRuns) Add(seconds float64) { a.p.Add(seconds) }

// meter collects one backend run's measurements, per job.
type meter struct {
	backend string
	// mu guards jobs: the hook runs on the jobs' goroutines. Each
	// jobMeter is then only touched by its own job's goroutine.
	mu   sync.Mutex
	jobs map[string]*jobMeter
}

// jobMeter is the measurements of one job.
type jobMeter struct {
	backend string
	// stores are the job's open (or last opened) stores, by operator.
	stores map[int]*meteredStore

	// heapBase is the live heap when the job opened its first store;
	// heapPeak the largest growth over it; sampledRows the state rows at
	// the last heap sample.
	heapBase    uint64
	heapPeak    int64
	sampledRows int64

	diskPeak, memTablePeak int64
	// measure is the time spent sampling inside the engine's timed
	// section; commit the time spent in the stores' Commit.
	measure, commit time.Duration
	// ckBytes counts the checkpoint bytes of the stores closed so far,
	// compact the part of them that snapshots or flushes wrote, flushes
	// Pebble's flushes.
	ckBytes, compact, flushes int64
}

// hook is the runner.StoreHook: it wraps every store in a meteredStore.
func (m *meter) hook(ev runner.StoreEvent) engines.Store {
	m.mu.Lock()
	j := m.jobs[ev.Job]
	if j == nil {
		j = &jobMeter{backend: m.backend, stores: map[int]*meteredStore{}}
		m.jobs[ev.Job] = j
		if m.backend == scenario.StoreMemory {
			// The job has made its stream but holds no state yet: the
			// heap growth from here on is the state's.
			j.heapBase = liveHeap()
		}
	}
	m.mu.Unlock()
	s := &meteredStore{Store: ev.Store, job: j, op: ev.Op, dir: ev.Dir, version: ev.Version}
	j.stores[ev.Op] = s
	return s
}

// liveHeap returns the bytes of live heap objects, after a full garbage
// collection so that garbage not yet collected does not count.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// rows returns the state rows of the job's open stores.
func (j *jobMeter) rows() int64 {
	var n int64
	for _, s := range j.stores {
		if !s.closed {
			n += int64(s.Len())
		}
	}
	return n
}

// sampleHeap records the heap growth over the job's base.
func (j *jobMeter) sampleHeap(rows int64) {
	j.heapPeak = max(j.heapPeak, int64(liveHeap())-int64(j.heapBase))
	j.sampledRows = rows
}

// afterCommit samples what the backend can tell after a batch's commit.
func (j *jobMeter) afterCommit() {
	t0 := time.Now()
	switch j.backend {
	case scenario.StoreMemory:
		if rows := j.rows(); rows > 0 && float64(rows) > float64(j.sampledRows)*(1+heapStep) {
			j.sampleHeap(rows)
		}
	case scenario.StorePebble:
		j.samplePebble()
	}
	j.measure += time.Since(t0)
}

// samplePebble records the disk and memtable bytes of the job's open
// Pebble stores together.
func (j *jobMeter) samplePebble() {
	var disk, mt int64
	for _, s := range j.stores {
		if p, ok := s.Store.(*pebblestore.Store); ok && !s.closed {
			pm := p.Metrics()
			disk += int64(pm.DiskBytes)
			mt += int64(pm.MemTableBytes)
		}
	}
	j.diskPeak = max(j.diskPeak, disk)
	j.memTablePeak = max(j.memTablePeak, mt)
}

// meteredStore wraps a store of a job to time its commits and sample its
// backend's metrics after each.
type meteredStore struct {
	engines.Store
	job *jobMeter
	op  int
	dir string
	// version is the committed batch count: the version a recovery opens.
	version int64
	// finalRows is Len when the store was closed.
	finalRows int64
	closed    bool
}

// Commit commits the batch, timed, then samples the backend.
func (s *meteredStore) Commit(batchID int64) error {
	t0 := time.Now()
	err := s.Store.Commit(batchID)
	s.job.commit += time.Since(t0)
	if err != nil {
		return err
	}
	s.version = batchID + 1
	s.job.afterCommit()
	return nil
}

// Close records the store's final size and checkpoint bytes, then closes
// it. The runner closes stores outside the engine's timed section, so the
// samples taken here cost the throughput nothing.
func (s *meteredStore) Close() error {
	if s.closed {
		return s.Store.Close()
	}
	j := s.job
	s.finalRows = int64(s.Len())
	switch st := s.Store.(type) {
	case *memstore.Checkpointed:
		if rows := j.rows(); rows >= j.sampledRows {
			// The state may have grown by less than a step since the
			// last sample: the end of the run can be its peak.
			j.sampleHeap(rows)
		}
		j.ckBytes += st.BytesWritten
		j.compact += st.SnapshotBytes
	case *pebblestore.Store:
		// The last flush runs in the background; wait for it, so that
		// what the store wrote does not depend on the scheduler.
		if err := st.WaitFlush(); err != nil {
			return errors.Join(err, s.Store.Close())
		}
		j.samplePebble()
		// Like for like with the memory store's deltas and snapshots:
		// the changelogs and the sstables its flushes wrote.
		pm := st.Metrics()
		j.ckBytes += pm.CommitBytes + pm.FlushBytes
		j.compact += pm.FlushBytes
		j.flushes += pm.Flushes
	}
	s.closed = true
	return s.Store.Close()
}

// Range forwards to the wrapped store: the runner only sees the wrapper.
func (s *meteredStore) Range(fn func(key []byte, expiresAt int64) bool) error {
	r, ok := s.Store.(engines.Ranger)
	if !ok {
		return fmt.Errorf("store %T cannot list its entries", s.Store)
	}
	return r.Range(fn)
}

// Snapshot forwards a resumable run's snapshot request to stores that take
// one (see runner.StoreHook); for the others there is nothing to do.
func (s *meteredStore) Snapshot(version int64) error {
	if sn, ok := s.Store.(interface{ Snapshot(int64) error }); ok {
		return sn.Snapshot(version)
	}
	return nil
}

// finish turns a backend run's measurements into one StoreRun per job, in
// job order, measuring each job's recovery on the way.
func (m *meter) finish(res *runner.Results) ([]metrics.StoreRun, error) {
	var out []metrics.StoreRun
	for i, job := range res.Jobs {
		q := res.Summary.Queries[i]
		j := m.jobs[job.FileName]
		if j == nil {
			return nil, fmt.Errorf("query %s: the run opened no state store", job.FileName)
		}
		r := metrics.StoreRun{
			Query: job.FileName, Store: m.backend, InputRows: q.InputRows, Batches: q.Batches,
			EngineSeconds:  max(q.WallSeconds-j.measure.Seconds(), 0),
			MeasureSeconds: j.measure.Seconds(),
			CommitSeconds:  j.commit.Seconds(),
			PeakStateRows:  q.PeakStateRows, ModelPeakBytes: q.PeakStateBytes,
			CheckpointBytes: j.ckBytes, CompactBytes: ptr(j.compact),
		}
		if r.EngineSeconds > 0 {
			r.EventsPerSecond = float64(r.InputRows) / r.EngineSeconds
		}
		if r.Batches > 0 {
			r.CheckpointBytesPerBatch = float64(r.CheckpointBytes) / float64(r.Batches)
		}
		switch m.backend {
		case scenario.StoreMemory:
			r.GoHeapPeakBytes = ptr(max(j.heapPeak, 0))
		case scenario.StorePebble:
			r.DiskPeakBytes, r.MemTablePeakBytes = ptr(j.diskPeak), ptr(j.memTablePeak)
			r.Flushes = ptr(j.flushes)
		}
		if err := m.recover(j, &r); err != nil {
			return nil, fmt.Errorf("query %s: recovery: %w", job.FileName, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// recover reopens the job's stores from their last checkpoint, timed, and
// checks that they hold what they held at the end of the run.
func (m *meter) recover(j *jobMeter, r *metrics.StoreRun) error {
	ops := make([]int, 0, len(j.stores))
	for op := range j.stores {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	var took time.Duration
	for _, op := range ops {
		s := j.stores[op]
		if !s.closed {
			return fmt.Errorf("operator %d: the run left its store open", op)
		}
		t0 := time.Now()
		st, err := runner.OpenStore(m.backend, s.dir, s.version)
		took += time.Since(t0)
		if err != nil {
			return err
		}
		n := int64(st.Len())
		if err := st.Close(); err != nil {
			return fmt.Errorf("%s: %w", s.dir, err)
		}
		if n != s.finalRows {
			return fmt.Errorf("%s: reopened at version %d with %d rows, the run ended with %d", s.dir, s.version, n, s.finalRows)
		}
		r.RecoveredRows += n
		r.RecoveredVersion = max(r.RecoveredVersion, s.version)
	}
	r.RecoverySeconds = took.Seconds()
	return nil
}

func ptr(v int64) *int64 { return &v }
