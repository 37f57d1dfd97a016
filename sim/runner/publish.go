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
// results folder dedupsim wrote), the results files and the report (when
// render is not nil) are written into a staging folder beside out, and the
// staging folder replaces out in one step. On any failure, or a kill at
// any moment, out is left as it was.
func RunTo(ctx context.Context, s *scenario.Scenario, opts Options, out string, render Renderer) (*Results, error) {
	st, err := metrics.Stage(out)
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	res, err := Run(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	if err := Write(st.Dir, res); err != nil {
		return nil, err
	}
	if render != nil {
		if err := render(st.Dir); err != nil {
			return nil, err
		}
	}
	if err := st.Publish(); err != nil {
		return nil, err
	}
	return res, nil
}
