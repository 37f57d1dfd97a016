// Package testhooks holds the runner's test hooks: the runner's Options
// carry them in an unexported field, and only sim/runner's own tree can
// build them (this package is internal), so that production code cannot
// reach them. Tests of other packages set them through
// sim/runner/runnertest. FOR TESTS ONLY; the results never depend on them.
package testhooks

import "github.com/dedupsim/dedupsim/sim/scenario"

// Hooks are the runner's test hooks; S is the runner's Source (a type
// parameter, since the runner imports this package).
type Hooks[S any] struct {
	// NewSource overrides how a job's stream is made.
	NewSource func(sc *scenario.Scenario) (S, error)
	// SnapshotAt, if set, replaces the wall-clock rule of a resumable
	// run's snapshots: a job snapshots after a batch when SnapshotAt
	// returns true for the job's FileName and the id of its next batch,
	// so that tests snapshot at chosen batches whatever the machine's
	// speed.
	SnapshotAt func(job string, nextBatchID int64) bool
	// AfterBatch, if set, is called on a job's goroutine after each of
	// its batches (after the job snapshot, if one was due) with the job's
	// FileName, the id of its next batch and done false, and once more
	// with done true when the job's stream is over, before the job
	// finishes. The job waits for it to return: tests hold a run at a
	// chosen point with it.
	AfterBatch func(job string, nextBatchID int64, done bool)
	// MaxBatchRows lowers the most rows a batch of a job on the modelled
	// cluster may hold while more are due [scenario.MaxRowsPerBatch], so
	// that tests meet the limit (ErrBatchLimit) without millions of rows.
	MaxBatchRows int
}
