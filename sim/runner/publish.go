package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Renderer adds a report to a results folder being built (reports.Render).
type Renderer func(dir string) error

// RunTo runs s and publishes its results folder at out: out is checked
// before anything runs (it may be replaced only when absent, empty, or a
// results folder dedupsim wrote), the run's temporaries live in a scratch
// folder inside the staging folder (so a killed run's are swept with it),
// the results files and the report (when render is not nil) are written
// into a staging folder beside out, and the staging folder replaces out
// in one step. On any failure before the simulation finished, a full disk,
// or a kill or cancellation at any moment, out is left as it was. A
// finished simulation is never lost to its report: when render fails
// otherwise (an error of the report's own, such as a timeseries.csv over
// what it reads back), the files it
// wrote are removed, the results are published without them, and RunTo
// returns the results with a *ReportError. The returned results are
// closed: only their Summary may be read.
func RunTo(ctx context.Context, s *scenario.Scenario, opts Options, out string, render Renderer) (*Results, error) {
	if err := checkpointOutside(opts.CheckpointDir, out); err != nil {
		return nil, err
	}
	st, err := metrics.Stage(out)
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	if opts.ScratchDir == "" {
		if opts.ScratchDir, err = st.ScratchDir(); err != nil {
			return nil, err
		}
	}
	res, err := Run(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	if err := WriteFiles(st.Dir, res); err != nil {
		return nil, err
	}
	var reportErr error
	if render != nil {
		reportErr = renderOrUndo(st.Dir, out, render)
		var re *ReportError
		if reportErr != nil && (ctx.Err() != nil || !errors.As(reportErr, &re)) {
			return nil, reportErr
		}
	}
	// Close before the swap: it removes the run's temporaries from the
	// scratch folder and releases a checkpoint's lock.
	if err := res.Close(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := st.Publish(); err != nil {
		return nil, err
	}
	return res, reportErr
}

// ReportError is RunTo's error when the results were published but their
// report could not be rendered: Out holds the results files, without
// report.md, report.html and the charts.
type ReportError struct {
	Out string
	Err error
}

func (e *ReportError) Error() string {
	return fmt.Sprintf("results published in %s without their report: %v", e.Out, e.Err)
}

func (e *ReportError) Unwrap() error { return e.Err }

// renderOrUndo renders the report into the staging folder dir; when that
// fails it removes what the renderer added, and returns a *ReportError
// whose message names out, never the staging folder (a name the user
// never gave and that is gone once the results are published).
func renderOrUndo(dir, out string, render Renderer) error {
	before := map[string]bool{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("results folder %s: %w", out, err)
	}
	for _, e := range ents {
		before[e.Name()] = true
	}
	rerr := render(dir)
	if rerr == nil {
		return nil
	}
	if diskFull(rerr) {
		// The disk, not the report: publishing on it could fail
		// half-way too, so the old folder stays as it was.
		return renamed{rerr, dir, out}
	}
	ents, err = os.ReadDir(dir)
	if err == nil {
		for _, e := range ents {
			if !before[e.Name()] {
				if err = os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		return fmt.Errorf("results folder %s: report: %v; removing its partial files: %w", out, rerr, err)
	}
	return &ReportError{Out: out, Err: renamed{rerr, dir, out}}
}

// diskFull reports whether err is a write that found no room.
func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EFBIG) || errors.Is(err, syscall.EDQUOT)
}

// renamed is an error whose message says to instead of from.
type renamed struct {
	err      error
	from, to string
}

func (e renamed) Error() string { return strings.ReplaceAll(e.err.Error(), e.from, e.to) }
func (e renamed) Unwrap() error { return e.err }

// checkpointOutside refuses a checkpoint folder that is out or inside it
// (publishing replaces out whole, and the checkpoint with it), and an out
// inside the checkpoint folder (which holds only the run's checkpoints).
func checkpointOutside(ck, out string) error {
	if ck == "" {
		return nil
	}
	a, err := filepath.Abs(ck)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", ck, err)
	}
	b, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("results folder %s: %w", out, err)
	}
	sep := string(filepath.Separator)
	switch {
	case a == b:
		return fmt.Errorf("checkpoint %s is the results folder, which publishing replaces: give the checkpoint its own folder", ck)
	case strings.HasPrefix(a, b+sep):
		return fmt.Errorf("checkpoint %s is inside the results folder %s, which publishing replaces whole: put it outside", ck, out)
	case strings.HasPrefix(b, a+sep):
		return fmt.Errorf("results folder %s is inside the checkpoint %s, which holds only the run's checkpoints: put it outside", out, ck)
	}
	return nil
}

// Stage stages a results folder at out for a command other than run that
// publishes one (plan --out): the same check, staging, marker and atomic
// publish as RunTo (metrics.Stage).
func Stage(out string) (*metrics.Staging, error) { return metrics.Stage(out) }

// CheckOut reports whether a results folder may be written at out: absent,
// empty, or a results folder dedupsim wrote (metrics.CheckReplaceable).
func CheckOut(out string) error { return metrics.CheckReplaceable(out) }
