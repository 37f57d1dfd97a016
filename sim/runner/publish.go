package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

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
// in one step. On any failure, or a kill at any moment, out is left as it
// was. The returned results are closed: only their Summary may be read.
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
	if render != nil {
		if err := render(st.Dir); err != nil {
			return nil, err
		}
	}
	// Close before the swap: it removes the run's temporaries from the
	// scratch folder and releases a checkpoint's lock.
	if err := res.Close(); err != nil {
		return nil, err
	}
	if err := st.Publish(); err != nil {
		return nil, err
	}
	return res, nil
}

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
