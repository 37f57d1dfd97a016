package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/reports"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/storebench"
)

// benchStoresFlags are the flags of bench-stores.
type benchStoresFlags struct {
	out     string
	seed    uint64
	quiet   bool
	repeats int
	force   bool
}

// benchStoresLong is bench-stores' help.
const benchStoresLong = `bench-stores runs every query of a scenario on both of the simulator's own
state store backends (Go code, not Spark's): memory, checkpointed every batch
like Spark's HDFS-backed state store (a delta per batch, appended to a log;
full snapshots written in the background, at least 10 versions apart), and
Pebble, which stands in for RocksDB (its WAL off; a changelog per batch;
sstables flushed in the background once the keys held in memory fill a
memtable). It checks that
both produce identical results (it fails, naming the query and the field, if
not) and reports per query and backend:

  sim speed           the simulator's input rows per second of engine
                      wall-clock time: machine-dependent, compare the
                      backends with each other; the median of --repeat runs
                      with their range
  peak state          the per-entry model; the memory backend's measured Go
                      heap growth; Pebble's memtable and, apart, its bytes
                      on disk
  checkpoint/batch    every byte written to the checkpoint, per batch: the
                      log (deltas, changelogs) and the compacted state
                      (snapshots, flushed sstables), counted alike
  recovery            time to reopen the stores from their last checkpoint

Queries run one at a time, the backends taking turns, so that each
measurement holds one query's state alone.

A scenario with a spark: block compares Spark's state store providers
instead, as modelled (sim/spark/sparkmodel): it runs the scenario with hdfs and
with rocksdb at the block's partitions and executors and reports per query
the busiest executor's state memory (heap for hdfs, native for rocksdb) and
local disk, and the batch durations against the trigger (p50, p99, max,
whether the query keeps up). A cost term left at the scenario's provider's
default takes the other provider's default; a calibrated term is kept. These
numbers are the same on every machine; --repeat does not apply. Each run puts every query on its backend: the scenario's
store and the queries' own stores (queries[].store) are ignored. The results folder gets the memory run's results
(summary.json, timeseries.csv, progress/), stores.json with every number,
stores.md with how each was measured, the chart stores.png and .svg, and
report.md and report.html with a section on the backends.`

func newBenchStoresCmd(stdout, stderr io.Writer) *cobra.Command {
	var f benchStoresFlags
	cmd := &cobra.Command{
		Use:   "bench-stores FILE",
		Short: "Compare the simulator's memory and Pebble state store backends on a scenario",
		Long:  benchStoresLong,
		Example: `  simulate bench-stores experiments/store-comparison.yaml --repeat 1
  simulate bench-stores experiments/store-comparison.yaml --quiet --out results/store-comparison`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("want one scenario file, got %d arguments (e.g. simulate bench-stores experiments/store-comparison.yaml)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("out") && f.out == "" {
				return fmt.Errorf("--out \"\": want a results folder (leave --out out for results/<scenario name>)")
			}
			sc, err := scenario.Load(args[0])
			if err != nil {
				return err
			}
			for i, q := range sc.Queries {
				if !q.IsSpark() {
					return fmt.Errorf("scenario %s: queries[%d]: bench-stores compares the simulator's state stores; a %s query keeps its state in its engine's model, not in them", sc.File, i, q.Engine)
				}
			}
			if cmd.Flags().Changed("seed") {
				sc.Seed = f.seed
			}
			out := f.out
			if out == "" {
				out = filepath.Join("results", sc.Name)
			}
			if f.repeats < 1 || f.repeats > 99 {
				return fmt.Errorf("--repeat: want a number of runs from 1 to 99, got %d", f.repeats)
			}
			if err := checkCommandEstimate(cmd, sc, 0, f.quiet); err != nil {
				return err
			}
			if err := defaultOutChecks(cmd, f.force, out, false); err != nil {
				return err
			}
			opts := storebench.Options{Repeats: f.repeats}
			label := " (memory, then pebble)"
			if sc.Spark != nil {
				label = " (hdfs, then rocksdb)"
			}
			bar := newBar(stderr, f.quiet, sc.Name+label)
			if bar != nil {
				opts.Progress = bar
			}
			res, err := storebench.RunTo(cmd.Context(), sc, opts, out, reports.Render)
			if bar != nil {
				bar.finish()
			}
			if err != nil {
				return err
			}
			if err := reports.StoreTable(stdout, res.Bench, false); err != nil {
				return err
			}
			if sc.Spark != nil {
				_, err = fmt.Fprintf(stdout, "Spark's providers as modelled (sim/spark/sparkmodel), not measured; the cost terms are estimates until calibrated.\nresults: %s\n", out)
				return err
			}
			for _, line := range []string{reports.StoresVerdict(res.Bench), reports.StoresTimes(res.Bench)} {
				if line != "" {
					fmt.Fprintln(stdout, line)
				}
			}
			_, err = fmt.Fprintf(stdout, "Both backends produced identical results. sim speed is the simulator's own, wall clock, machine-dependent; how each number was measured: %s\nresults: %s\n",
				filepath.Join(out, "stores.md"), out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "results folder (default results/<scenario name>)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed for every random stream (default: the scenario's seed)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	fl.IntVar(&f.repeats, "repeat", 3, "runs of each backend; wall-clock numbers are their median, with the range")
	addForceFlag(cmd, &f.force)
	addGoAheadFlag(cmd, new(bool))
	return cmd
}
