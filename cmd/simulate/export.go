package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/export"
	"github.com/dedupsim/dedupsim/sim/spark/replay"
)

func newExportCmd(stdout io.Writer) *cobra.Command {
	var out, format string
	var quiet, force bool
	cmd := &cobra.Command{
		Use:   "export SCENARIO|TRACE [--out DIR] [--format parquet|json]",
		Short: "Export a scenario or a replay trace as files, a PySpark job and dedupsim's prediction",
		Long: `export turns a scenario (a .yaml file) or a replay trace (a .json file) into
what a real Spark needs to run it, so that its progress can be compared with
dedupsim's prediction (see docs/spark-round-trip.md):

  batches/    one file per micro-batch, in batch order: the generated rows
              (event_id, customer_id, event_time, ingest_time, attempt,
              payload) or the trace's rows, Parquet (default) or JSON Lines
  job.py      a PySpark job: each query starts on an empty input folder, and
              for each batch file Spark gets the file and processAllAvailable()
              runs that batch and whatever no-data batch it decides on;
              restarts stop and start the query; a listener writes every
              progress event to a JSON lines file
  expected/   dedupsim's prediction, one progress record per batch, for
              simulate compare
  README.md   the commands, the Spark version the prediction targets, and
              what is compared

The default --out is export-NAME (the scenario's name or the trace's file
name). It may be replaced only when it is absent, empty, or an export dedupsim
wrote; nothing is written when the export fails. A trace Spark cannot be
driven through with files (a manual clock, columns that differ only in case,
a column mixing strings and numbers, a query Spark fails) is refused with one
line saying why.`,
		Example: `  simulate export experiments/quickstart.yaml --out /tmp/export-quickstart
  simulate export sim/spark/replay/testdata/conformance/deduplicate-with-watermark.json --out /tmp/export-trace --format json`,
		Args: oneArg("one scenario file or trace", "simulate export experiments/quickstart.yaml --out /tmp/export-quickstart"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := export.ParseFormat(format)
			if err != nil {
				return fmt.Errorf("--format: %w", err)
			}
			path := args[0]
			if cmd.Flags().Changed("out") && out == "" {
				return fmt.Errorf("--out \"\": want an export folder (leave --out out for export-NAME)")
			}
			if out != "" {
				// A bad --out is refused before the input is read.
				if err := forceOut(cmd.ErrOrStderr(), force, out, true); err != nil {
					return err
				}
				if err := export.CheckOut(out); err != nil {
					return err
				}
			}
			opts := export.Options{Format: f}
			var sum *export.Summary
			if strings.EqualFold(filepath.Ext(path), ".json") {
				t, err := replay.LoadFile(path)
				if err != nil {
					return err
				}
				if out == "" {
					out = "export-" + export.TraceName(path)
				}
				if err := defaultOutChecks(cmd, force, out, true); err != nil {
					return err
				}
				if sum, err = export.Trace(cmd.Context(), t, path, out, opts); err != nil {
					return fmt.Errorf("%s: %w", fileio.ShowPath(path), err)
				}
			} else {
				sc, err := scenario.Load(path)
				if err != nil {
					return err
				}
				if out == "" {
					out = "export-" + sc.Name
				}
				if err := checkCommandEstimate(cmd, sc, 1, quiet); err != nil {
					return err
				}
				if err := defaultOutChecks(cmd, force, out, true); err != nil {
					return err
				}
				if sum, err = export.Scenario(cmd.Context(), sc, out, opts); err != nil {
					return fmt.Errorf("%s: %w", fileio.ShowPath(path), err)
				}
			}
			printExport(stdout, sum)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "export folder (default export-NAME)")
	cmd.Flags().StringVar(&format, "format", string(export.Parquet), "batch file format: parquet or json")
	addForceFlag(cmd, &force)
	addGoAheadFlag(cmd, new(bool))
	// Accepted as every long-running command accepts it; export draws no
	// progress bar.
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar (export draws none)")
	return cmd
}

// printExport says what an export wrote and what to run next.
func printExport(w io.Writer, s *export.Summary) {
	fmt.Fprintf(w, "%s: %d batch files (%s, %d rows), job.py, README.md\n", s.Dir, s.Batches, s.Format, s.Rows)
	for _, q := range s.Queries {
		fmt.Fprintf(w, "  expected/%s.jsonl: %d batches predicted", q.Names[0], q.Batches)
		if len(q.Names) > 1 {
			fmt.Fprintf(w, " over %d checkpoints (%s)", len(q.Names), strings.Join(q.Names, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "next: cd %s && spark-submit job.py && simulate compare expected progress.jsonl\n", s.Dir)
}
