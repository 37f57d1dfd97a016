package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/reports"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/shard"
)

// publishFunc runs a scenario and publishes its folder (runner.RunTo).
type publishFunc func(ctx context.Context, sc *scenario.Scenario, opts runner.Options, out string, render runner.Renderer) (*runner.Results, error)

// publisher returns how a sweep publishes its results: runner.RunTo, or,
// with --shard K/N (spec not empty), a shard folder of K of N, whose
// default folder (defaultOut) is results/<name>.shard-K-of-N.
// With byKey (run --shard), the shard is a part of the run split by key
// (shard.RunByKey).
func publisher(spec string, out *string, defaultOut, byKey bool) (publishFunc, error) {
	if spec == "" {
		return runner.RunTo, nil
	}
	sp, err := shard.ParseSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("--shard %w", err)
	}
	if defaultOut {
		*out += fmt.Sprintf(".shard-%d-of-%d", sp.K, sp.N)
	}
	return func(ctx context.Context, sc *scenario.Scenario, opts runner.Options, out string, _ runner.Renderer) (*runner.Results, error) {
		run := shard.Run
		if byKey {
			run = shard.RunByKey
		}
		sum, err := run(ctx, sc, opts, sp, out)
		if err != nil {
			return nil, err
		}
		return &runner.Results{Summary: sum}, nil
	}, nil
}

// notAShard refuses a shard folder where a results folder is wanted.
func notAShard(dir string) error {
	if !shard.IsShard(dir) {
		return nil
	}
	m, err := shard.ReadManifest(dir)
	if err != nil {
		return err
	}
	what := "a sweep"
	if m.Split == shard.SplitByKey {
		what = "a run split by key"
	}
	return fmt.Errorf("%s: shard %d/%d of %s, not a results folder: combine the shards first (simulate merge SHARD... --out DIR)", dir, m.Shard, m.Of, what)
}

func newMergeCmd(stdout, stderr io.Writer) *cobra.Command {
	var out string
	var noReport, quiet, force bool
	cmd := &cobra.Command{
		Use:   "merge SHARD... --out DIR",
		Short: "Combine the shard folders of a sharded sweep, or of a run split by key, into its results folder",
		Long: `merge combines the N shard folders that "simulate sweep --shard K/N" wrote
(K = 0 .. N-1, in any order) into the results folder the unsharded sweep writes:
the same files, byte for byte, except the wall-clock fields (eventsPerSecond,
wallSeconds, and the events/s the report prints), with its report and charts.

The N parts of a run split by key ("simulate run --shard K/N") merge the same
way into the unsplit run's folder: every part ran every batch, so what each
part saw whole (batches, watermarks, input rows) is taken once, what each
counted for its own events is summed (emitted, dropped, state, missed
duplicates, false drops, operator and engine counters), and the peaks are
recomputed from the summed samples.

It refuses, with one line and nothing written: a folder that is not a shard,
a missing or repeated shard, shards of different scenarios, input files, seeds,
delays, N, --store, splits or dedupsim versions, a shard whose files changed after it
was published (each file's size and SHA-256 are in its shard.json), and an
--out that is not dedupsim's (the rule of run).
See docs/sharding.md for running the shards as a Kubernetes Indexed Job or
with GNU parallel.`,
		Example: `  simulate sweep experiments/quickstart.yaml --delay 1m,5m --shard 0/2 --out /tmp/shard-0
  simulate sweep experiments/quickstart.yaml --delay 1m,5m --shard 1/2 --out /tmp/shard-1
  simulate merge /tmp/shard-1 /tmp/shard-0 --out /tmp/quickstart-sweep`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("want the shard folders to merge (e.g. simulate merge shard-0 shard-1 --out results/NAME)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out: want the results folder to write (e.g. --out results/NAME)")
			}
			if err := forceOut(stderr, force, out, false); err != nil {
				return err
			}
			var render runner.Renderer
			if !noReport {
				render = reports.Render
			}
			sum, err := shard.Merge(args, out, render)
			if err != nil {
				return err
			}
			if err := reports.SummaryTableWidth(stdout, sum, tableWidth(stdout)); err != nil {
				return err
			}
			for _, w := range reports.SaturationWarnings(sum) {
				fmt.Fprintln(stderr, w)
			}
			_, err = fmt.Fprintf(stdout, "results: %s\n", out)
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "results folder to write (required)")
	// Accepted as every long-running command accepts it; merge draws no
	// progress bar.
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar (merge draws none)")
	cmd.Flags().BoolVar(&noReport, "no-report", false, "write the results files only, not report.md, report.html and the charts")
	addForceFlag(cmd, &force)
	return cmd
}
