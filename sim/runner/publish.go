package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dedupsim/dedupsim/engines/fileio"
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
	var reportErr error
	res, err := PublishRun(ctx, out, &opts.ScratchDir, func() (*Results, error) { return Run(ctx, s, opts) },
		func(dir string, res *Results) error {
			if err := WriteFiles(dir, res); err != nil {
				return err
			}
			if render == nil {
				return nil
			}
			reportErr = renderOrUndo(dir, out, render)
			var re *ReportError
			if reportErr != nil && (ctx.Err() != nil || !errors.As(reportErr, &re)) {
				return reportErr
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return res, reportErr
}

// Publish stages a results folder at out (metrics.Stage: out is checked
// first), lets fill write into the staging folder, and publishes it in
// one step when fill succeeds; on any failure out is left as it was.
func Publish(out string, fill func(st *fileio.Staging) error) error {
	st, err := metrics.Stage(out)
	if err != nil {
		return err
	}
	defer st.Discard()
	if err := fill(st); err != nil {
		return err
	}
	return st.Publish()
}

// RemoveForeign deletes from the results folder out everything dedupsim
// did not write there (metrics.RemoveForeign) and returns it: what --force
// does before a command replaces the folder.
func RemoveForeign(out string) ([]string, error) { return metrics.RemoveForeign(out) }

// PublishRun is the stage-run-publish sequence of every command that
// runs something into a results folder at out (Publish): when *scratch is
// empty it is pointed at a scratch folder inside the staging folder (so a
// killed run's temporaries are swept with it), run runs, write writes
// its result into the staging folder, and the result is closed (which
// removes its temporaries and releases its locks) before the folder is
// published, unless ctx was cancelled meanwhile. The returned result is
// closed; on any error it is the zero R and out is left as it was.
func PublishRun[R io.Closer](ctx context.Context, out string, scratch *string, run func() (R, error), write func(dir string, res R) error) (R, error) {
	var done R
	err := Publish(out, func(st *fileio.Staging) error {
		if *scratch == "" {
			d, err := st.ScratchDir()
			if err != nil {
				return err
			}
			*scratch = d
		}
		res, err := run()
		if err != nil {
			return err
		}
		defer res.Close()
		if err := write(st.Dir, res); err != nil {
			return err
		}
		if err := res.Close(); err != nil {
			return err
		}
		done = res
		return ctx.Err()
	})
	if err != nil {
		var zero R
		return zero, err
	}
	return done, nil
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
