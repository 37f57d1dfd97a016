package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner/internal/testhooks"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
	"github.com/dedupsim/dedupsim/sim/stores"
	"golang.org/x/sync/errgroup"
)

// Options configure a run.
type Options struct {
	// Workers is the number of jobs computing at once [GOMAXPROCS], and
	// of the goroutines that run a partitioned query's partitions. A run
	// that is not resumable starts every job at once over one shared
	// stream, Workers of them computing at a time; a resumable run runs
	// Workers jobs at once, each over its own generator.
	Workers int
	// CheckpointDir makes the run resumable: the queries' checkpoints and
	// snapshots of every job live there, and running again with the same
	// folder resumes a killed run. The run holds the folder's lock
	// (run.lock) until its Results are closed; a folder another run
	// holds, a foreign folder, a symlink inside it, a checkpoint of
	// another run or a file changed since it was written is refused with
	// one line, before anything in it is written. "" keeps the queries'
	// checkpoints in ScratchDir when the scenario has faults, and none
	// otherwise.
	CheckpointDir string
	// SnapshotEvery is the least wall-clock interval between snapshots
	// of a resumable run's job [1s]; a job whose snapshots take more than
	// a twentieth of it snapshots less often (see snapshotCost).
	SnapshotEvery time.Duration
	// Store, when set ("memory" or "pebble"), replaces the store of
	// every query: the queries' own stores and the scenario's.
	Store string
	// PebbleMemory is the memory budget, in bytes, of each Pebble store
	// the run opens: half block cache, half the overlay of keys added
	// since the last flush [stores.DefaultPebbleMemory]. Results do not
	// depend on it.
	PebbleMemory int64
	// ScratchDir is where the run puts every temporary file: the stores
	// of Pebble without a checkpoint folder, the queries' checkpoints of
	// a run with faults but no CheckpointDir, and the part files of the
	// timeseries rows and progress lines of a job that is not resumable.
	// The run makes its own folder inside it (created if needed) and
	// removes it when it fails, or, since the part files are the results'
	// rows, when its Results are closed; a killed process leaves it, so a
	// caller that passes a folder it sweeps at its next start never leaks
	// one. "" uses the system's temporary folder.
	ScratchDir string
	// Progress, if set, is told the total simulated seconds once and then
	// how many more have been processed, from any goroutine.
	Progress Progress
	// StoreHook, if set, sees (and may wrap) every state store the run
	// opens; see StoreHook.
	StoreHook StoreHook
	// Notify, if set, receives the run's notices, one line each, from any
	// goroutine: what the run did differently from what the scenario
	// asks, as Spark would (a checkpoint that keeps its partition count).
	Notify func(msg string)
	// KeyShard, if set, makes the run part K of N of a run split by key
	// (see KeyShard): sim/shard runs and merges the parts. Such a run
	// cannot be resumable, nor have a spark: block, and every query must
	// split (CheckKeyShard).
	KeyShard *KeyShard
	// numberedSeen, if set, is told the job of every store opened as
	// numbers (memstore.Numbered), from the job's goroutine: for tests.
	numberedSeen func(job string)
	// hooks are the test hooks (a stream of the test's, snapshots at
	// chosen batches, a hold after a batch, a lower batch limit), set
	// only through WithTestHooks, which only sim/runner's tree can call
	// with hooks (their type is internal): runnertest for other
	// packages' tests.
	hooks testHooks
}

// testHooks are the runner's test hooks (internal/testhooks).
type testHooks = testhooks.Hooks[Source]

// WithTestHooks returns opts with the test hooks h. FOR TESTS ONLY: h's
// type is internal to sim/runner, so other packages' tests set hooks
// through sim/runner/runnertest, and production code cannot.
func WithTestHooks(opts Options, h testhooks.Hooks[Source]) Options {
	opts.hooks = h
	return opts
}

// TestHooksOf returns the test hooks of opts (see WithTestHooks).
func TestHooksOf(opts Options) testhooks.Hooks[Source] { return opts.hooks }

// Progress receives a run's progress, in simulated seconds over all jobs.
type Progress interface {
	Start(total float64)
	Add(seconds float64)
}

// Run runs every job of s and assembles the results. The results are the
// same, byte for byte, whatever opts.Workers is, and whether or not the
// run was killed and resumed from opts.CheckpointDir. Close the results
// once they are written.
//
// It goes in three steps: prepare the run (its jobs, its folder of
// temporaries, the store backend, the checkpoint folder, checked before
// anything in it changes), run the jobs on opts.Workers goroutines, and
// assemble their results.
func Run(ctx context.Context, s *scenario.Scenario, opts Options) (_ *Results, err error) {
	r, err := prepare(s, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.release()
		}
	}()
	results, err := r.runJobs(ctx)
	if err != nil {
		return nil, err
	}
	return r.assemble(results)
}

// execution is a run being prepared and executed.
type execution struct {
	sc        *scenario.Scenario
	opts      Options
	jobs      []Job
	newSource func(sc *scenario.Scenario) (Source, error)
	// backends holds the backend of every store name the jobs run on
	// (Job.Store).
	backends map[string]stores.Backend
	// work is the run's own folder of temporaries, locked by workLock:
	// removed on failure, or by the results' Close.
	work     string
	workLock *fileio.Lock
	// rf is the run checkpoint folder of a resumable run, locked.
	rf *runFolder
	// ckRoot holds the jobs' folders ("" keeps no checkpoint).
	ckRoot   string
	partsDir string
	prog     Progress
	// pool runs the partitions of partitioned queries, while the jobs
	// run.
	pool *microbatch.Pool
}

// prepare expands s into jobs and sets up everything they share. A
// resumable run's checkpoint folder is claimed and every job's files are
// checked before any job changes one: a corrupted or foreign file fails
// the run with the folder as it was.
func prepare(s *scenario.Scenario, opts Options) (_ *execution, err error) {
	jobs, err := Jobs(s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.File, err)
	}
	if opts.CheckpointDir != "" {
		for _, j := range jobs {
			if j.Rows != nil {
				return nil, fmt.Errorf("scenario %s: queries %s: a %s query cannot yet run in a resumable run (--checkpoint): run it without one", s.File, j.Name, j.Engine)
			}
		}
	}
	if ks := opts.KeyShard; ks != nil {
		if ks.N < 1 || ks.K < 0 || ks.K >= ks.N {
			return nil, fmt.Errorf("key shard %d/%d: K counts from 0 to N-1", ks.K, ks.N)
		}
		if opts.CheckpointDir != "" {
			return nil, fmt.Errorf("--shard: a part of a run split by key cannot be resumable (no --checkpoint): rerun a failed part whole")
		}
		if err := CheckKeyShard(s); err != nil {
			return nil, err
		}
	}
	if opts.Store != "" {
		// The command line's store replaces every query's.
		for i := range jobs {
			jobs[i].Store = opts.Store
		}
	}
	if err := checkOpenFiles(s, jobs, opts.Workers, opts.CheckpointDir != ""); err != nil {
		return nil, err
	}
	r := &execution{sc: s, opts: opts, jobs: jobs, newSource: opts.hooks.NewSource, prog: opts.Progress}
	if r.newSource == nil {
		r.newSource = defaultSource
	}
	if r.prog == nil {
		r.prog = nopProgress{}
	}
	if r.work, r.workLock, err = newWorkDir(opts.ScratchDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.release()
		}
	}()
	r.backends = map[string]stores.Backend{}
	for _, j := range jobs {
		if _, ok := r.backends[j.Store]; ok {
			continue
		}
		be, err := stores.LookupMemory(j.Store, filepath.Join(r.work, "pebble"), opts.PebbleMemory)
		if err != nil {
			return nil, err
		}
		r.backends[j.Store] = be
	}
	switch {
	case opts.CheckpointDir != "":
		r.ckRoot = opts.CheckpointDir
		if r.rf, err = openRunFolder(r.ckRoot); err != nil {
			return nil, err
		}
		if err := r.rf.claim(s, runStores(jobs)); err != nil {
			return nil, err
		}
		if err := checkResume(r.ckRoot, s, jobs, r.backends, r.newSource); err != nil {
			return nil, err
		}
		// From here on the run writes in the folder.
		r.rf.wrote = true
	case slices.ContainsFunc(s.Faults, scenario.Fault.IsRestart):
		// Restarts need a checkpoint to restart from; keep it temporary.
		r.ckRoot = filepath.Join(r.work, "checkpoints")
	}
	r.partsDir = filepath.Join(r.work, "parts")
	if err := os.Mkdir(r.partsDir, 0o777); err != nil {
		return nil, err
	}
	return r, nil
}

// release removes the run's temporaries and releases its locks.
func (r *execution) release() error {
	err := os.RemoveAll(r.work)
	os.Remove(r.work + ".lock")
	r.workLock.Unlock()
	if r.rf != nil {
		if uerr := r.rf.unlock(); err == nil {
			err = uerr
		}
	}
	return err
}

// runJobs runs the jobs and returns their results in job order. The
// first job that fails stops the others; its error, naming the query, is
// the run's. A cancelled ctx returns its error.
//
// A run that is not resumable reads one shared stream (see sharedStream):
// every job runs at once, at most opts.Workers of them computing at a
// time. A resumable run's jobs read their own generators, at most
// opts.Workers jobs at once, in job order.
func (r *execution) runJobs(ctx context.Context) ([]*jobResult, error) {
	workers := r.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r.prog.Start(float64(len(r.jobs)) * r.sc.Duration.Std().Seconds())
	results := make([]*jobResult, len(r.jobs))
	errs := make([]error, len(r.jobs))
	if r.sc.Spark != nil {
		// The partitions of every job's query share one pool.
		r.pool = microbatch.NewPool(workers)
		defer r.pool.Close()
	}
	g, gctx := errgroup.WithContext(ctx)
	if r.rf != nil {
		g.SetLimit(workers)
		for i := range r.jobs {
			if gctx.Err() != nil {
				break
			}
			g.Go(func() error {
				results[i], errs[i] = r.runJob(gctx, i, nil)
				return errs[i]
			})
		}
		g.Wait()
	} else if err := r.runShared(gctx, g, workers, results, errs); err != nil {
		return nil, err
	}
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("query %s: %w", r.jobs[i].FileName, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}

// runShared runs every job at once over one shared stream, workers of
// them computing at a time, and waits for them.
func (r *execution) runShared(ctx context.Context, g *errgroup.Group, workers int, results []*jobResult, errs []error) error {
	src, err := r.newSource(r.sc)
	if err != nil {
		return err
	}
	tokens := newCPUTokens(workers)
	stream := newSharedStream(src, len(r.jobs), tokens)
	stop := context.AfterFunc(ctx, stream.close)
	defer stop()
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		stream.run(ctx)
	}()
	for i := range r.jobs {
		g.Go(func() error {
			tok := &jobToken{t: tokens}
			defer tok.give()
			rd := stream.reader(ctx, i, tok)
			defer rd.detach()
			if errs[i] = tok.take(ctx); errs[i] != nil {
				return errs[i]
			}
			results[i], errs[i] = r.runJob(ctx, i, func() (Source, error) { return rd, nil })
			return errs[i]
		})
	}
	g.Wait()
	stream.close()
	<-produced
	if c, ok := src.(io.Closer); ok {
		c.Close()
	}
	// A log that could not be read to its end fails the run. ctx is the
	// group's, which g.Wait has cancelled: a job stopped by a signal or
	// an error has that error, and a run whose every job ended cleanly
	// has read the stream to its end.
	if !slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		if err := generators.SourceErr(src); err != nil {
			return err
		}
	}
	return nil
}

// runJob runs job i in its environment.
// newSource, if not nil, is the job's stream; else the job makes its own.
func (r *execution) runJob(ctx context.Context, i int, newSource func() (Source, error)) (*jobResult, error) {
	j := r.jobs[i]
	be := r.backends[j.Store]
	if newSource == nil {
		newSource = func() (Source, error) { return r.newSource(r.sc) }
	}
	snapEvery := r.opts.SnapshotEvery
	if snapEvery <= 0 {
		snapEvery = time.Second
	}
	env := jobEnv{
		sc:            r.sc,
		newSource:     newSource,
		openStore:     r.opts.StoreHook.wrap(j.FileName, j.Store, interruptOn(ctx, opener(be.Open))),
		resumeStore:   r.opts.StoreHook.wrap(j.FileName, j.Store, interruptOn(ctx, opener(be.Resume))),
		stateFiles:    be.Files,
		storeName:     j.Store,
		partsDir:      r.partsDir,
		resumable:     r.rf != nil,
		snapshotEvery: snapEvery,
		snapshotAt:    r.opts.hooks.SnapshotAt,
		afterBatch:    r.opts.hooks.AfterBatch,
		progress:      r.prog.Add,
		badClock:      i == 0,
		notify:        r.opts.Notify,
		maxBatchRows:  r.opts.hooks.MaxBatchRows,
		pool:          r.pool,
		keyShard:      r.opts.KeyShard,
	}
	if j.Store == stores.Memory && r.opts.hooks.NewSource == nil && r.opts.StoreHook == nil {
		gen := r.sc.Generator()
		seen := r.opts.numberedSeen
		env.numbering = func(cols []int) func([]byte) (uint64, bool) {
			number := generators.KeyNumbering(gen, cols)
			if number != nil && seen != nil {
				seen(j.FileName)
			}
			return number
		}
	}
	if r.ckRoot != "" {
		env.jobDir = filepath.Join(r.ckRoot, j.FileName)
		if err := os.MkdirAll(env.jobDir, 0o777); err != nil {
			return nil, err
		}
	}
	return runJob(ctx, env, j)
}

// assemble makes the results of the finished jobs: the summary (the
// scenario as run, its markers and warnings, every job's totals) and the
// part files the rows are read from.
func (r *execution) assemble(results []*jobResult) (*Results, error) {
	scJSON, err := json.Marshal(r.sc)
	if err != nil {
		return nil, err
	}
	out := &Results{
		Summary: &metrics.Summary{
			Format: metrics.ResultsFormat, Scenario: scJSON, Seed: r.sc.Seed,
			Windows:  metrics.NewWindows(r.sc.Duration.Std().Seconds(), r.sc.LastTrafficTrigger().Seconds()),
			Markers:  markers(r.sc, results[0].badClock, results[0].badClockAt),
			Warnings: r.sc.Warnings(),
		},
		Jobs:    r.jobs,
		release: r.release,
	}
	if r.sc.Spark != nil {
		w := out.Summary.Windows
		w.Traffic = append(w.Traffic, metrics.SparkTrafficFields()...)
	}
	for _, jr := range results {
		out.Summary.Queries = append(out.Summary.Queries, jr.summary)
		out.parts = append(out.parts, jr.parts)
		out.sparkParts = append(out.sparkParts, jr.spark)
	}
	// Only the part files are needed from here on.
	for _, d := range []string{"pebble", "checkpoints"} {
		if err := os.RemoveAll(filepath.Join(r.work, d)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// newWorkDir makes the run's folder of temporaries inside scratch, or the
// system's temporary folder, and locks it (a sibling "<dir>.lock" held
// while the run lives). It first removes the work folders that killed runs
// left in scratch: those whose lock is free.
func newWorkDir(scratch string) (string, *fileio.Lock, error) {
	if scratch == "" {
		scratch = os.TempDir()
	} else if err := os.MkdirAll(scratch, 0o777); err != nil {
		return "", nil, fmt.Errorf("scratch folder %s: %w", scratch, err)
	}
	sweepWorkDirs(scratch)
	// The lock comes before the folder: a run's sweep removes only folders
	// whose lock file it can take, so a folder created under a lock that
	// is held (and still linked at its name) is never swept away.
	for range 100 {
		dir := filepath.Join(scratch, "dedupsim-run-"+fileio.RandomName())
		lock, err := fileio.TryLock(dir + ".lock")
		if err != nil {
			var locked *fileio.LockedError
			if errors.As(err, &locked) {
				continue // another run's sweep holds it for a moment
			}
			return "", nil, fmt.Errorf("scratch folder %s: %w", scratch, err)
		}
		if !lock.Holds(dir + ".lock") {
			// Swept between our open and our flock: take another name.
			lock.Unlock()
			continue
		}
		if err := os.Mkdir(dir, 0o777); err != nil {
			if errors.Is(err, os.ErrExist) {
				// A dead run's folder: the next sweep removes both.
				lock.Unlock()
				continue
			}
			os.Remove(dir + ".lock")
			lock.Unlock()
			return "", nil, fmt.Errorf("scratch folder %s: %w", scratch, err)
		}
		return dir, lock, nil
	}
	return "", nil, fmt.Errorf("scratch folder %s: could not create a work folder", scratch)
}

// sweepWorkDirs removes the work folders of dead runs in scratch. A folder
// without a lock file is one whose run died between creating it and
// locking it, or one from an older dedupsim; only folders with a free
// lock file are removed, so a live run's folder is never touched.
func sweepWorkDirs(scratch string) {
	locks, _ := filepath.Glob(filepath.Join(scratch, "dedupsim-run-*.lock"))
	for _, lockPath := range locks {
		l, err := fileio.TryLock(lockPath)
		if err != nil {
			continue
		}
		// Remove the lock file while holding it: a run that opened it
		// before then finds its flock on a file no longer linked
		// (Lock.Holds) and takes another name.
		os.RemoveAll(strings.TrimSuffix(lockPath, ".lock"))
		os.Remove(lockPath)
		l.Unlock()
	}
}

const maxBadClockMarkers = 20

// markers lists the stalls, faults and bad-clock moments of the run, in
// seconds after the start: each bad-clock fault, and the first bad-clock
// rows of the stream (arrivals badClock, event times badClockAt) other
// than the faults' own.
func markers(s *scenario.Scenario, badClock, badClockAt []int64) []metrics.Marker {
	out := []metrics.Marker{}
	if segs := s.Workload.Profile; len(segs) > 0 {
		end := s.Duration.Std().Seconds()
		for at := 0.0; at < end; {
			for _, seg := range segs {
				if at >= end {
					break
				}
				d := seg.For.Std().Seconds()
				if seg.Rate == 0 {
					until := min(at+d, end)
					if n := len(out); n > 0 && *out[n-1].Until == at {
						// Consecutive stalls (a profile ending and
						// starting with one) are one stall.
						out[n-1].Until = &until
					} else {
						out = append(out, metrics.Marker{Kind: "stall", At: at, Until: &until, Label: "stall (rate 0)"})
					}
				}
				at += d
			}
		}
	}
	start := s.Start.UnixMicro()
	faultRow := map[int64]bool{}
	for _, f := range s.Faults {
		m := metrics.Marker{Kind: string(f.Kind), At: f.At.Std().Seconds(), Label: string(f.Kind)}
		if f.Kind == scenario.BadClock {
			m.Label = "bad-clock fault: one row stamped " + interval.Format(f.Skew.Std()) + " ahead"
			faultRow[start+f.At.Micros()] = true
		}
		out = append(out, m)
	}
	for i, t := range badClock {
		if faultRow[t] {
			continue
		}
		ahead := time.Duration(badClockAt[i]-t) * time.Microsecond
		out = append(out, metrics.Marker{Kind: "bad-clock", At: float64(t-start) / 1e6,
			Label: "bad clock row, stamped " + interval.Format(ahead.Round(time.Second)) + " ahead"})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

type nopProgress struct{}

func (nopProgress) Start(float64) {}
func (nopProgress) Add(float64)   {}
