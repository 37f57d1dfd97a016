package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/curve"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// addCurveFlags adds sweep's --curve and --json.
func addCurveFlags(cmd *cobra.Command, f *runFlags) {
	cmd.Flags().BoolVar(&f.curve, "curve", false, "also compute the exact one-pass curve (sim/curve) of every swept query it supports, at every delay of plan's resolution up to the largest swept one: the horizon chart draws it as a line through the swept runs, and curves.json holds it")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "with --curve: print curves.json (each query's delay, missed rate, false-drop rate by cause, peak state rows and bytes) instead of the table")
}

// sweepCurves computes the curves of sweep --curve, says in one line on
// stderr for each swept query the curve does not support why its chart
// shows the swept delays only, and returns the renderer that writes
// curves.json beside the results before render (nil: no report) draws
// them, and the curves' JSON for --json.
func sweepCurves(ctx context.Context, sc *scenario.Scenario, f runFlags, render runner.Renderer, stderr io.Writer) (runner.Renderer, []byte, error) {
	if !f.curve {
		if f.asJSON {
			return nil, nil, fmt.Errorf("--json prints the curves: give --curve too")
		}
		return render, nil, nil
	}
	if f.shard != "" {
		return nil, nil, fmt.Errorf("--curve with --shard: a shard runs part of the sweep's jobs; compute the curve in the sweep's own run (drop --shard) or with simulate plan")
	}
	cs, err := curve.ForSweep(ctx, sc)
	if err != nil {
		return nil, nil, err
	}
	for _, u := range cs.Unsupported {
		fmt.Fprintf(stderr, "sweep --curve: no curve for %s, its chart shows the swept delays only: %s\n", fileio.Clean(u.Query), u.Reason)
	}
	var js []byte
	if f.asJSON {
		if js, err = json.MarshalIndent(cs, "", "  "); err != nil {
			return nil, nil, err
		}
	}
	return func(dir string) error {
		if err := curve.WriteSweep(dir, cs); err != nil {
			return err
		}
		if render == nil {
			return nil
		}
		return render(dir)
	}, js, nil
}
