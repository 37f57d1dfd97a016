// Package runnertest sets the runner's test hooks from the tests of other
// packages (cmd/simulate's hooks, built only with the tag
// dedupsim_testhooks; sim/scenario's fuzz test). FOR TESTS ONLY: no
// production code imports it (sim/importmap_test.go checks it), and the
// results of a run never depend on its hooks.
package runnertest

import (
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/runner/internal/testhooks"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Hooks are the runner's test hooks (see the fields of
// sim/runner/internal/testhooks.Hooks, which these are).
type Hooks struct {
	// NewSource overrides how a job's stream is made.
	NewSource func(sc *scenario.Scenario) (runner.Source, error)
	// SnapshotAt replaces the wall-clock rule of a resumable run's
	// snapshots: a job snapshots after a batch when it returns true for
	// the job's FileName and the id of its next batch.
	SnapshotAt func(job string, nextBatchID int64) bool
	// AfterBatch is called on a job's goroutine after each of its batches
	// (done false) and once when its stream is over (done true); the job
	// waits for it to return.
	AfterBatch func(job string, nextBatchID int64, done bool)
	// MaxBatchRows lowers the most rows a batch on the modelled cluster
	// may hold while more are due.
	MaxBatchRows int
}

// With returns opts with the hooks h, replacing any it had.
func With(opts runner.Options, h Hooks) runner.Options {
	return runner.WithTestHooks(opts, testhooks.Hooks[runner.Source]{
		NewSource: h.NewSource, SnapshotAt: h.SnapshotAt, AfterBatch: h.AfterBatch, MaxBatchRows: h.MaxBatchRows,
	})
}

// Of returns the hooks opts carries.
func Of(opts runner.Options) Hooks {
	h := runner.TestHooksOf(opts)
	return Hooks{NewSource: h.NewSource, SnapshotAt: h.SnapshotAt, AfterBatch: h.AfterBatch, MaxBatchRows: h.MaxBatchRows}
}
