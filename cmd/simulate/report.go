package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/reports"
)

func newReportCmd(stdout io.Writer) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Redraw a results folder's report and charts without rerunning",
		Long: `report reads a results folder written by "simulate run" or "simulate sweep"
(its summary.json and timeseries.csv) and rewrites, in the same folder:

  report.md, report.html         findings (and a sweep's recommendation), the
                                 per-query summary table, the charts, the scenario
                                 as run and explain's warnings; report.html is
                                 one self-contained page
  state-rows.png, .svg           state rows over processing time, one line per query
  state-bytes.png, .svg          the same in modelled bytes
  watermark.png, .svg            the watermark and its lag behind processing time
  horizon-tradeoff.png, .svg     with a sweep: delay against missed duplicates,
                                 false drops and peak state

Nothing is simulated again: the output depends only on the two results files,
so rendering twice yields byte-identical files.`,
		Example: `  simulate report results/quickstart
  simulate run experiments/horizon-tradeoff.yaml --no-report && simulate report results/horizon-tradeoff`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("want one results folder, got %d arguments (e.g. simulate report results/quickstart)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := notAShard(dir); err != nil {
				return err
			}
			if err := notAPlanReview(dir); err != nil {
				return err
			}
			if err := forceOut(cmd.ErrOrStderr(), force, dir, false); err != nil {
				return err
			}
			// A signal stops the command at once: the folder is replaced
			// in one atomic step, never after the signal.
			if err := interruptible(cmd.Context(), func() error { return reports.Rerender(dir) }); err != nil {
				if cmd.Context().Err() != nil {
					return err
				}
				return withoutStaging(err, dir)
			}
			_, err := fmt.Fprintf(stdout, "wrote %s and %s\n", filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
			return err
		},
	}
	addForceFlag(cmd, &force)
	return cmd
}

// withoutStaging returns err with every path of dir's staging folder (a
// hidden sibling, ".NAME.dedupsim-staging-HEX", that report renders into)
// replaced by dir: the user gave dir, and the staging folder is gone once
// the command ends.
func withoutStaging(err error, dir string) error {
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		return err
	}
	staging := regexp.MustCompile(regexp.QuoteMeta(filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+".dedupsim-staging-")) + `[0-9a-f]+`)
	msg := err.Error()
	if !staging.MatchString(msg) {
		return err
	}
	msg = staging.ReplaceAllLiteralString(msg, dir)
	// "DIR is not a readable results folder: DIR: why" says DIR twice.
	msg = strings.Replace(msg, dir+" is not a readable results folder: "+dir+": ", dir+" is not a readable results folder: ", 1)
	return errors.New(msg)
}
