package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/sim/spark/compare"
)

// errDifferent is compare's error when a batch differs: the verdict and
// the table on stdout say where.
var errDifferent = errors.New("the progress of Spark differs from the prediction (see the verdict and the table)")

func newCompareCmd(stdout io.Writer) *cobra.Command {
	var maxRows int
	var ignoreExtra bool
	cmd := &cobra.Command{
		Use:   "compare EXPECTED ACTUAL...",
		Short: "Compare dedupsim's predicted progress with Spark's, batch by batch and counter by counter",
		Long: `compare reads dedupsim's prediction (EXPECTED: the expected/ folder of an
export, or one of its files) and Spark's progress records (each ACTUAL: the
JSON lines file job.py writes, a JSON array of query.recentProgress, pretty
JSON records, or a driver log), matches the records by query name and batchId,
and compares numInputRows, eventTime.watermark and, for each state operator,
operatorName, numRowsTotal, numRowsUpdated, numRowsRemoved,
numRowsDroppedByWatermark and customMetrics.numDroppedDuplicateRows. Every
other field is ignored, and so are triggers that ran no batch.

It prints a one-line verdict, then each query's differences in a table, the
first differing batch first, and exits 0 when every batch matches, 1 when one
differs and 2 when an input cannot be read or holds no Spark progress (one
line naming the file and line). See docs/spark-round-trip.md.`,
		Example: `  simulate compare sim/spark/compare/testdata/expected metrics/progresslog/testdata/listener.jsonl metrics/progresslog/testdata/hdfs-pretty.json
  simulate compare sim/spark/compare/testdata/expected metrics/progresslog/testdata/driver.log metrics/progresslog/testdata/hdfs-pretty.json
  simulate compare sim/spark/compare/testdata/expected/dedup-events.jsonl metrics/progresslog/testdata/listener.jsonl metrics/progresslog/testdata/hdfs-pretty.json --ignore-extra-queries`,
		// A wrong call is bad input (exit 2), never "different" (exit 1).
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return &exitCodeError{code: compare.ExitBadInput, err: fmt.Errorf("want EXPECTED and at least one ACTUAL, got %d arguments (e.g. simulate compare sim/spark/compare/testdata/expected metrics/progresslog/testdata/listener.jsonl)", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var r compare.Result
			err := interruptible(cmd.Context(), func() (err error) {
				r, err = compare.CompareFiles(args[:1], args[1:], compare.Options{IgnoreExtraQueries: ignoreExtra})
				return err
			})
			if cmd.Context().Err() != nil {
				return cmd.Context().Err()
			}
			if err != nil {
				return &exitCodeError{code: compare.ExitBadInput, err: err}
			}
			var b bytes.Buffer
			b.WriteString(r.Verdict() + "\n\n")
			if err := compare.WriteTable(&b, &r, maxRows); err != nil {
				return err
			}
			if _, err := stdout.Write(b.Bytes()); err != nil {
				return err
			}
			if code := compare.ExitCode(&r, nil); code != compare.ExitEqual {
				return &exitCodeError{code: code, err: errDifferent}
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitCodeError{code: compare.ExitBadInput, err: fmt.Errorf("%v (see %s --help)", err, c.CommandPath())}
	})
	cmd.Flags().IntVar(&maxRows, "max-rows", compare.DefaultMaxRows, "differences shown in the tables, in all")
	cmd.Flags().BoolVar(&ignoreExtra, "ignore-extra-queries", false, "leave out the queries only ACTUAL holds (compare some queries of a log that holds more)")
	return cmd
}
