package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// Options configure a run.
type Options struct {
	// Workers is the number of jobs run at once [GOMAXPROCS].
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
	// SnapshotEvery is the wall-clock interval between snapshots of a
	// resumable run [1s].
	SnapshotEvery time.Duration
	// Store overrides the scenario's store ("memory" or "pebble").
	Store string
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
	// NewSource overrides how a job's stream is made (tests).
	NewSource func(sc *scenario.Scenario) (Source, error)
	// StoreHook, if set, sees (and may wrap) every state store the run
	// opens; see StoreHook.
	StoreHook StoreHook
	// SnapshotAt, if set, replaces the wall-clock rule of a resumable
	// run's snapshots: a job snapshots after a batch when SnapshotAt
	// returns true for the job's FileName and the id of its next batch.
	// Tests use it to snapshot at chosen batches, whatever the machine's
	// speed; the results do not depend on it.
	SnapshotAt func(job string, nextBatchID int64) bool
	// AfterBatch, if set, is called on a job's goroutine after each of
	// its batches (after the job snapshot, if one was due) with the job's
	// FileName, the id of its next batch and done false, and once more
	// with done true when the job's stream is over, before the job
	// finishes. The job waits for it to return. Tests use it to hold a
	// run at a chosen point (cmd/simulate's test hooks).
	AfterBatch func(job string, nextBatchID int64, done bool)
}

// Progress receives a run's progress, in simulated seconds over all jobs.
type Progress interface {
	Start(total float64)
	Add(seconds float64)
}

// Run runs every job of s and assembles the results. The results are the
// same, byte for byte, whatever opts.Workers is, and whether or not the
// run was killed and resumed from opts.CheckpointDir. Close the results
// once they are written.
func Run(ctx context.Context, s *scenario.Scenario, opts Options) (_ *Results, err error) {
	jobs, err := Jobs(s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.File, err)
	}
	storeName := s.Store
	if opts.Store != "" {
		storeName = opts.Store
	}
	newSource := opts.NewSource
	if newSource == nil {
		newSource = defaultSource
	}
	// The run's own folder of temporaries: removed on failure, or by the
	// results' Close.
	work, workLock, err := newWorkDir(opts.ScratchDir)
	if err != nil {
		return nil, err
	}
	var rf *runFolder
	release := func() error {
		err := os.RemoveAll(work)
		workLock.Unlock()
		os.Remove(work + ".lock")
		if rf != nil {
			if uerr := rf.unlock(); err == nil {
				err = uerr
			}
		}
		return err
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	be, err := stores.Lookup(storeName, filepath.Join(work, "pebble"))
	if err != nil {
		return nil, err
	}
	ckRoot, resumable := opts.CheckpointDir, opts.CheckpointDir != ""
	if resumable {
		if rf, err = openRunFolder(ckRoot); err != nil {
			return nil, err
		}
		if err := rf.claim(s, storeName); err != nil {
			return nil, err
		}
		// Every job is checked before any job changes a file: a corrupted
		// or foreign file fails the run with the folder as it was.
		if err := checkResume(ckRoot, s, jobs, be, storeName, newSource); err != nil {
			return nil, err
		}
		// From here on the run writes in the folder.
		rf.wrote = true
	} else if len(s.Faults) > 0 {
		// Restarts need a checkpoint to restart from; keep it temporary.
		ckRoot = filepath.Join(work, "checkpoints")
	}
	partsDir := filepath.Join(work, "parts")
	if err := os.Mkdir(partsDir, 0o777); err != nil {
		return nil, err
	}
	snapEvery := opts.SnapshotEvery
	if snapEvery <= 0 {
		snapEvery = time.Second
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	total := float64(len(jobs)) * s.Duration.Std().Seconds()
	var prog Progress = nopProgress{}
	if opts.Progress != nil {
		prog = opts.Progress
	}
	prog.Start(total)

	results := make([]*jobResult, len(jobs))
	errs := make([]error, len(jobs))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				env := jobEnv{
					sc:            s,
					newSource:     func() (Source, error) { return newSource(s) },
					openStore:     opts.StoreHook.wrap(jobs[i].FileName, storeName, opener(be.Open)),
					resumeStore:   opts.StoreHook.wrap(jobs[i].FileName, storeName, opener(be.Resume)),
					stateFiles:    be.Files,
					storeName:     storeName,
					partsDir:      partsDir,
					resumable:     resumable,
					snapshotEvery: snapEvery,
					snapshotAt:    opts.SnapshotAt,
					afterBatch:    opts.AfterBatch,
					progress:      prog.Add,
					badClock:      i == 0,
				}
				if ckRoot != "" {
					env.jobDir = filepath.Join(ckRoot, jobs[i].FileName)
					if err := os.MkdirAll(env.jobDir, 0o777); err != nil {
						errs[i] = err
						cancel()
						continue
					}
				}
				results[i], errs[i] = runJob(ctx, env, jobs[i])
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil && err != context.Canceled {
			return nil, fmt.Errorf("query %s: %w", jobs[i].FileName, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	scJSON, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := &Results{
		Summary: &metrics.Summary{
			Format: metrics.ResultsFormat, Scenario: scJSON, Seed: s.Seed,
			Markers:  markers(s, results[0].badClock),
			Warnings: s.Warnings(),
		},
		Jobs:    jobs,
		release: release,
	}
	for _, r := range results {
		out.Summary.Queries = append(out.Summary.Queries, r.summary)
		out.parts = append(out.parts, r.parts)
	}
	// Only the part files are needed from here on.
	for _, d := range []string{"pebble", "checkpoints"} {
		if err := os.RemoveAll(filepath.Join(work, d)); err != nil {
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
	for range 100 {
		dir, err := fileio.MkdirTemp(scratch, "dedupsim-run-")
		if err != nil {
			return "", nil, fmt.Errorf("scratch folder %s: %w", scratch, err)
		}
		lock, err := fileio.TryLock(dir + ".lock")
		if err == nil {
			return dir, lock, nil
		}
		os.RemoveAll(dir)
		var locked *fileio.LockedError
		if !errors.As(err, &locked) {
			return "", nil, fmt.Errorf("scratch folder %s: %w", scratch, err)
		}
		// Another run's sweep holds the new lock file for a moment:
		// take another name.
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
		os.RemoveAll(strings.TrimSuffix(lockPath, ".lock"))
		l.Unlock()
		os.Remove(lockPath)
	}
}

const maxBadClockMarkers = 20

// markers lists the stalls, faults and bad-clock moments of the run, in
// seconds after the start.
func markers(s *scenario.Scenario, badClock []int64) []metrics.Marker {
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
	for _, f := range s.Faults {
		out = append(out, metrics.Marker{Kind: string(f.Kind), At: f.At.Std().Seconds(), Label: string(f.Kind)})
	}
	start := s.Start.UnixMicro()
	sort.Slice(badClock, func(i, j int) bool { return badClock[i] < badClock[j] })
	for _, t := range badClock {
		out = append(out, metrics.Marker{Kind: "bad-clock", At: float64(t-start) / 1e6, Label: "bad clock row"})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

type nopProgress struct{}

func (nopProgress) Start(float64) {}
func (nopProgress) Add(float64)   {}
