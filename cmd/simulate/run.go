package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/dedupsim/dedupsim/reports"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// runFlags are the flags shared by run and sweep.
type runFlags struct {
	out        string
	outSet     bool   // --out given, even as ""
	profile    string // the root's --cpuprofile
	seed       uint64
	seedSet    bool
	quiet      bool
	workers    int
	store      string
	checkpoint string
	snapshot   time.Duration
	noReport   bool
	shard      string // sweep --shard K/N
	memory     string
	force      bool // --force: delete what dedupsim did not write in --out
	goAhead    bool // --go-ahead: run what the estimate says cannot finish
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "results folder (default results/<scenario name>)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed for every random stream (default: the scenario's seed)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	fl.IntVar(&f.workers, "workers", 0, "queries (and sweep points) run at once (default: all cores)")
	fl.StringVar(&f.store, "store", "", "state store backend of every query: memory or pebble (default: each query's store, else the scenario's)")
	fl.StringVar(&f.checkpoint, "checkpoint", "", "make the run resumable: keep checkpoints and run snapshots in this folder; rerun the same command to resume a killed run")
	fl.DurationVar(&f.snapshot, "snapshot-interval", time.Second, "with --checkpoint: wall-clock time between run snapshots (at least; longer when a snapshot takes more than a twentieth of it)")
	fl.StringVar(&f.memory, "memory", "", "memory budget of each Pebble state store, block cache and write buffer, e.g. 256MiB (default 32MiB); results do not depend on it")
	fl.BoolVar(&f.noReport, "no-report", false, "write the results files only, not report.md, report.html and the charts")
	addForceFlag(cmd, &f.force)
	addGoAheadFlag(cmd, &f.goAhead)
}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a scenario: generate traffic, run every query, measure against ground truth",
		Long: `run loads a scenario (experiments/*.yaml, see docs/scenario.md), generates its
duplicate-laden traffic from the seed, runs the same stream through every query
on exact models of Spark's dedup operators in micro-batches, and measures against
ground truth what each query kept in state, which duplicates slipped through
(missed duplicates) and which real events it lost (false drops, by cause).

It prints one table row per query and writes the results folder: summary.json,
timeseries.csv, progress/<query>.jsonl, report.md, report.html and the charts.
The same file and seed give the same results, byte for byte, on any machine.
A scenario with a sweep: block runs every query once per delay.`,
		Example: `  simulate run experiments/quickstart.yaml
  simulate run experiments/bad-future-timestamp.yaml --seed 7 --out /tmp/bad-clock`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			f.outSet = cmd.Flags().Changed("out")
			if p := cmd.Flag("cpuprofile"); p != nil {
				f.profile = p.Value.String()
			}
			sc, err := scenario.Load(args[0])
			if err != nil {
				return err
			}
			return runScenario(cmd.Context(), sc, f, stdout, stderr)
		},
	}
	f.register(cmd)
	return cmd
}

func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	var f runFlags
	var delays string
	cmd := &cobra.Command{
		Use:   "sweep FILE --delay 1m,5m,20m",
		Short: "Rerun every query of a scenario with each horizon (watermark delay, TTL, window, duration)",
		Long: `sweep runs a scenario once per horizon: every query that has a withWatermark
is rerun with its delay replaced (Spark queries without a watermark run once),
and every Flink, Kafka Streams and Beam query with its table.exec.state.ttl,
window or duration set to the same value, as it is (docs/scenario.md, Sweeps).
The values come from --delay or, without it, the scenario's sweep: block.
Runs execute in parallel on all cores; the results are identical whatever the
number of workers. The report gains the horizon-tradeoff chart: delay against
missed duplicates, false drops and peak state. With --shard K/N it runs only
the K-th of N parts of the jobs (K from 0) into a shard folder; "simulate merge"
combines the N shards into the folder the whole sweep writes (docs/sharding.md).`,
		Example: `  simulate sweep experiments/quickstart.yaml --delay 1m,5m,10m,20m,40m
  simulate sweep experiments/horizon-tradeoff.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			f.outSet = cmd.Flags().Changed("out")
			if p := cmd.Flag("cpuprofile"); p != nil {
				f.profile = p.Value.String()
			}
			sc, err := scenario.Load(args[0])
			if err != nil {
				return err
			}
			if delays != "" {
				sw, err := scenario.ParseDelays(delays)
				if err != nil {
					return fmt.Errorf("--delay: %w", err)
				}
				sc.Sweep = sw
				// The delays join the scenario: its limits apply again.
				if err := sc.Validate(); err != nil {
					return err
				}
			}
			if sc.Sweep == nil || len(sc.Sweep.Delay) == 0 {
				return fmt.Errorf("%s: no delays to sweep: give --delay 1m,5m,20m or a sweep: block", args[0])
			}
			return runScenario(cmd.Context(), sc, f, stdout, stderr)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&delays, "delay", "", "comma-separated horizons: watermark delays, and the other engines' TTL, window or duration (default: the scenario's sweep.delay)")
	cmd.Flags().StringVar(&f.shard, "shard", "", "run only shard K of N of the sweep's jobs (K from 0 to N-1, as $JOB_COMPLETION_INDEX/N) into a shard folder; combine them with simulate merge")
	return cmd
}

// runScenario runs sc and writes its results and report.
func runScenario(ctx context.Context, sc *scenario.Scenario, f runFlags, stdout, stderr io.Writer) error {
	for _, w := range sc.WarningLines() {
		fmt.Fprintln(stderr, w)
	}
	if f.seedSet {
		sc.Seed = f.seed
	}
	if err := checkRunFlags(f); err != nil {
		return err
	}
	if f.store != "" && f.store != scenario.StoreMemory && f.store != scenario.StorePebble {
		return fmt.Errorf("--store %q: want memory or pebble", f.store)
	}
	memory, err := parseSize("--memory", f.memory)
	if err != nil {
		return err
	}
	if f.outSet && f.out == "" {
		return fmt.Errorf("--out \"\": want a results folder (leave --out out for results/%s)", sc.Name)
	}
	out := f.out
	if out == "" {
		out = filepath.Join("results", sc.Name)
	}
	publish, err := publisher(f.shard, &out, f.out == "")
	if err != nil {
		return err
	}
	// Publishing replaces out whole: nothing the run writes may be in it.
	if err := checkOutside("--out", out, "--checkpoint", f.checkpoint); err != nil {
		return err
	}
	if err := checkOutside("--out", out, "--cpuprofile", f.profile); err != nil {
		return err
	}
	if err := checkEstimate(stderr, sc, f.workers, f.store, f.goAhead, f.quiet); err != nil {
		return err
	}
	if err := forceOut(stderr, f.force, out, false); err != nil {
		return err
	}
	opts := runner.Options{Workers: f.workers, CheckpointDir: f.checkpoint, Store: f.store, SnapshotEvery: f.snapshot, PebbleMemory: memory}
	opts.Notify = noticePrinter(stderr)
	if err := applyTestHooks(&opts); err != nil {
		return err
	}
	bar := newBar(stderr, f.quiet, sc.Name)
	if bar != nil {
		opts.Progress = bar
	}
	var render runner.Renderer
	if !f.noReport {
		render = reports.Render
		if w := runner.ReportSizeWarning(sc); w != "" {
			fmt.Fprintln(stderr, w)
		}
	}
	res, err := publish(ctx, sc, opts, out, render)
	if bar != nil {
		bar.finish()
	}
	var reportErr *runner.ReportError
	if errors.As(err, &reportErr) && res != nil {
		// The results are published; only the report is missing.
		err = fmt.Errorf("%w; %s", reportErr, reportAdvice(reportErr, out))
	} else if err != nil {
		return err
	}
	if e := reports.SummaryTable(stdout, res.Summary, false); e != nil {
		return errors.Join(e, err)
	}
	for _, w := range reports.SaturationWarnings(res.Summary) {
		fmt.Fprintln(stderr, w)
	}
	fmt.Fprintf(stdout, "results: %s\n", out)
	return err
}

// bar is the progress bar on stderr, in simulated seconds.
type bar struct {
	mu sync.Mutex
	pb *progressbar.ProgressBar
	w  io.Writer
}

// newBar returns a bar, or nil when stderr is not a terminal or --quiet.
func newBar(stderr io.Writer, quiet bool, name string) *bar {
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &bar{w: stderr, pb: progressbar.NewOptions64(1,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription(name),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("sim-s"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)}
}

func (b *bar) Start(total float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pb.ChangeMax64(int64(total) + 1)
}

func (b *bar) Add(seconds float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pb.Add64(int64(seconds))
}

func (b *bar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pb.Finish()
	b.pb.Clear()
}
