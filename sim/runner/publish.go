package runner

import (
	"context"

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
