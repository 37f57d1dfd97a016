package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Options configure a run.
type Options struct {
	// Workers is the number of jobs run at once [GOMAXPROCS].
	Workers int
	// CheckpointDir makes the run resumable: the queries' checkpoints and
	// snapshots of every job live there, and running again with the same
	// folder resumes a killed run. "" uses a temporary folder when the
	// scenario has faults, and none otherwise.
	CheckpointDir string
	// SnapshotEvery is the wall-clock interval between snapshots of a
	// resumable run [1s].
	SnapshotEvery time.Duration
	// Store overrides the scenario's store ("memory" or "pebble").
	Store string
	// Progress, if set, is told the total simulated seconds once and then
	// how many more have been processed, from any goroutine.
	Progress Progress
	// NewSource overrides how a job's stream is made (tests).
	NewSource func(sc *scenario.Scenario) (Source, error)
	// StoreHook, if set, sees (and may wrap) every state store the run
	// opens; see StoreHook.
	StoreHook StoreHook
	// snapshotAt, if set, replaces the wall-clock rule of a resumable
	// run's snapshots: a snapshot is taken after a batch when it returns
	// true for the id of the next batch. Tests use it to snapshot at a
	// chosen batch, whatever the machine's speed.
	snapshotAt func(nextBatchID int64) bool
}

// Progress receives a run's progress, in simulated seconds over all jobs.
type Progress interface {
	Start(total float64)
	Add(seconds float64)
}

// Results is a finished run.
type Results struct {
	Summary  *metrics.Summary
	Records  []metrics.BatchRecord
	Progress map[string][]byte // progress/<name>.jsonl contents
	Jobs     []Job
}

// Run runs every job of s and assembles the results. The results are the
// same, byte for byte, whatever opts.Workers is.
func Run(ctx context.Context, s *scenario.Scenario, opts Options) (*Results, error) {
	jobs, err := Jobs(s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.File, err)
	}
	storeName := s.Store
	if opts.Store != "" {
		storeName = opts.Store
	}
	scratch, err := os.MkdirTemp("", "dedupsim-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	be, err := storeBackend(storeName, scratch)
	if err != nil {
		return nil, err
	}
	newSource := opts.NewSource
	if newSource == nil {
		newSource = defaultSource
	}
	ckRoot, resumable := opts.CheckpointDir, opts.CheckpointDir != ""
	if resumable {
		if err := claimCheckpoint(ckRoot, s, storeName); err != nil {
			return nil, err
		}
		// Every job is checked before any job changes a file: a corrupted
		// or foreign file fails the run with the folder as it was.
		if err := checkResume(ckRoot, s, jobs, be.check, newSource); err != nil {
			return nil, err
		}
	} else if len(s.Faults) > 0 {
		// Restarts need a checkpoint to restart from; keep it temporary.
		dir, err := os.MkdirTemp("", "dedupsim-checkpoint-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		ckRoot = dir
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

	var mu sync.Mutex
	var badClock []int64
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
					openStore:     opts.StoreHook.wrap(jobs[i].FileName, storeName, be.open),
					storeName:     storeName,
					resumable:     resumable,
					snapshotEvery: snapEvery,
					snapshotAt:    opts.snapshotAt,
					progress:      prog.Add,
				}
				if ckRoot != "" {
					env.jobDir = filepath.Join(ckRoot, jobs[i].FileName)
					if err := os.MkdirAll(env.jobDir, 0o755); err != nil {
						errs[i] = err
						cancel()
						continue
					}
				}
				if i == 0 {
					env.badClock = func(t int64) {
						mu.Lock()
						if len(badClock) < maxBadClockMarkers {
							badClock = append(badClock, t)
						}
						mu.Unlock()
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
			Markers: markers(s, badClock),
		},
		Progress: map[string][]byte{},
		Jobs:     jobs,
	}
	for i, r := range results {
		out.Summary.Queries = append(out.Summary.Queries, r.summary)
		out.Records = append(out.Records, r.records...)
		out.Progress[jobs[i].FileName] = r.progress
	}
	return out, nil
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
					out = append(out, metrics.Marker{Kind: "stall", At: at, Until: &until, Label: "stall (rate 0)"})
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
