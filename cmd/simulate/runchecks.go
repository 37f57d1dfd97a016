package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// checkRunFlags refuses the numeric flags of run and sweep that make no
// sense, which were accepted: a negative --workers, and a --snapshot-interval
// of 0 or less.
func checkRunFlags(f runFlags) error {
	if f.workers < 0 {
		return fmt.Errorf("--workers %d: want 0 (all cores) or more", f.workers)
	}
	if f.snapshot <= 0 {
		return fmt.Errorf("--snapshot-interval %v: want a wall-clock interval above 0, such as 1s or 500ms", f.snapshot)
	}
	return nil
}

// reportAdvice is what a run whose results were published without their
// report (reportErr) advises: simulate report, unless the report failed on
// a file over its size limit, which simulate report reads within the same
// limit (it failed after 242 s): then what does work.
func reportAdvice(reportErr error, out string) string {
	var tl *fileio.TooLargeError
	if errors.As(reportErr, &tl) {
		return fmt.Sprintf("simulate report cannot draw it either (it reads %s within the same limit); the results files in %s are whole: for a report, run fewer batch rows (a shorter duration, a longer trigger, or fewer queries or delays), or run with --no-report",
			filepath.Base(tl.Path), out)
	}
	return fmt.Sprintf("redraw it with: simulate report %s (or run with --no-report)", out)
}

// notAPlanReview refuses, saying what it is, the folder plan --out wrote:
// it carries the results marker but is a review document (plan.json, no
// summary.json), which report called "not a results folder".
func notAPlanReview(dir string) error {
	_, planErr := os.Lstat(filepath.Join(dir, "plan.json"))
	_, sumErr := os.Lstat(filepath.Join(dir, "summary.json"))
	if planErr != nil || sumErr == nil {
		return nil
	}
	return fmt.Errorf("%s: a plan's review folder (simulate plan --out), not a run's results folder: report redraws a run's; run the same simulate plan command again to redraw the review (its run at the recommended delay is under %s)",
		fileio.ShowPath(dir), fileio.ShowPath(filepath.Join(dir, "run")))
}

// addGoAheadFlag registers --go-ahead on a command that simulates.
func addGoAheadFlag(cmd *cobra.Command, goAhead *bool) {
	cmd.Flags().BoolVar(goAhead, "go-ahead", false, "run even when the estimate before the run says it cannot finish (its peak state over the machine's memory, or over a day's work)")
}

// checkEstimate estimates the run of sc before anything is generated,
// prints the estimate on stderr when the work is long (unless quiet), and
// refuses in one line a run that cannot finish, unless goAhead.
func checkEstimate(stderr io.Writer, sc *scenario.Scenario, workers int, store string, goAhead, quiet bool) error {
	e, err := runner.EstimateRun(sc, workers, store)
	if err != nil {
		return err
	}
	if err := e.Check(goAhead); err != nil {
		return err
	}
	if e.Long() && !quiet {
		fmt.Fprintf(stderr, "estimate: %s\n", e)
	}
	return nil
}

// checkCommandEstimate is checkEstimate for a command whose --go-ahead
// flag is read from cmd (plan, bench-stores, export): the estimate of one
// run of the scenario as written, a lower bound of what they simulate.
func checkCommandEstimate(cmd *cobra.Command, sc *scenario.Scenario, workers int, quiet bool) error {
	goAhead, _ := cmd.Flags().GetBool("go-ahead")
	return checkEstimate(cmd.ErrOrStderr(), sc, workers, "", goAhead, quiet)
}
