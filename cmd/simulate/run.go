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

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
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
	shard      string // sweep --shard K/N, or run --shard K/N (byKey)
	byKey      bool   // run: --shard splits the run by key
	memory     string
	force      bool // --force: delete what dedupsim did not write in --out
	goAhead    bool // --go-ahead: run what the estimate says cannot finish
	curve      bool // sweep --curve: the exact one-pass curve too
	asJSON     bool // sweep --json: print the curves
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
A scenario with a sweep: block runs every query once per delay.

With --shard K/N it runs part K of the run split by key into a shard folder:
every part generates the whole stream (so batches and watermarks are the
unsplit run's) but keeps state and counts only for the events whose event_id
hashes to K; "simulate merge" of the N folders gives the unsplit run's results
(docs/sharding.md). A query that cannot split is refused in one line, saying why.`,
		Example: `  simulate run experiments/quickstart.yaml
  simulate run experiments/bad-future-timestamp.yaml --seed 7 --out /tmp/bad-clock
  simulate run experiments/stall.yaml --shard 0/2 --out /tmp/stall-0
  simulate run experiments/stall.yaml --shard 1/2 --out /tmp/stall-1
  simulate merge /tmp/stall-0 /tmp/stall-1 --out /tmp/stall`,
		Args: oneArg("one scenario file", "simulate run experiments/quickstart.yaml"),
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
	f.byKey = true
	cmd.Flags().StringVar(&f.shard, "shard", "", "run part K of N of the run split by key (K from 0 to N-1, as $JOB_COMPLETION_INDEX/N): every part reads the whole stream and keeps the events whose event_id hashes to K; combine the N shard folders with simulate merge (docs/sharding.md)")
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
combines the N shards into the folder the whole sweep writes (docs/sharding.md).

With --curve, each swept Spark query whose verdicts reduce to thresholds on
the delay (as plan reads them: one withWatermark, then one
dropDuplicatesWithinWatermark or dropDuplicates with the event time among its
keys, event_id among the keys, no restarts, no spark: block) also gets its
exact one-pass curve (sim/curve) from 0 to the largest swept delay, on the
run's seed: the horizon chart draws it as a line over every delay of plan's
resolution (every second up to 199 s, then steps of 1%), the swept runs
still marked, and curves.json holds it (--json prints it: delay, missed rate,
false-drop rate by cause, peak state rows and bytes where tracked). Any other
query is named in one line with the reason, and its chart shows the swept
delays only.`,
		Example: `  simulate sweep experiments/quickstart.yaml --delay 1m,5m,10m,20m,40m
  simulate sweep experiments/horizon-tradeoff.yaml
  simulate sweep experiments/horizon-tradeoff.yaml --curve --delay 30s,2m,5m --out /tmp/tradeoff-curve`,
		Args: oneArg("one scenario file", "simulate sweep experiments/quickstart.yaml --delay 1m,5m"),
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
	addCurveFlags(cmd, &f)
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
	publish, err := publisher(f.shard, &out, f.out == "", f.byKey)
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
	render, curveJSON, err := sweepCurves(ctx, sc, f, render, stderr)
	if err != nil {
		return err
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
	if curveJSON != nil {
		_, e := fmt.Fprintf(stdout, "%s\n", curveJSON)
		return errors.Join(e, err)
	}
	if e := reports.SummaryTableWidth(stdout, res.Summary, tableWidth(stdout)); e != nil {
		return errors.Join(e, err)
	}
	for _, w := range reports.SaturationWarnings(res.Summary) {
		fmt.Fprintln(stderr, w)
	}
	fmt.Fprintf(stdout, "results: %s\n", out)
	return err
}

// bar is the progress bar on stderr, in simulated seconds: a bar on a
// terminal, and when stderr is a file or a pipe (a CI log, nohup), a plain
// line every plainEvery, so that long work is never silent for minutes.
type bar struct {
	mu sync.Mutex
	pb *progressbar.ProgressBar
	w  io.Writer
	// The plain form (pb nil): what is done of total, since start; the
	// last line's time; now is the clock (time.Now).
	name        string
	done, total float64
	start, last time.Time
	every       time.Duration
	now         func() time.Time
}

// plainEvery is how often the plain progress line is printed.
const plainEvery = 30 * time.Second

// newBar returns a bar, or nil with --quiet or when stderr is not a file.
func newBar(stderr io.Writer, quiet bool, name string) *bar {
	f, ok := stderr.(*os.File)
	if quiet || !ok {
		return nil
	}
	if !term.IsTerminal(int(f.Fd())) {
		return newPlainBar(stderr, name, plainEvery, time.Now)
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

// newPlainBar returns the plain form of the bar: a line on w every
// every, read off the clock now.
func newPlainBar(w io.Writer, name string, every time.Duration, now func() time.Time) *bar {
	t := now()
	return &bar{w: w, name: name, every: every, now: now, start: t, last: t}
}

func (b *bar) Start(total float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pb == nil {
		b.total += total
		return
	}
	b.pb.ChangeMax64(int64(total) + 1)
}

func (b *bar) Add(seconds float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pb == nil {
		b.done += seconds
		if t := b.now(); t.Sub(b.last) >= b.every {
			b.last = t
			b.line(t)
		}
		return
	}
	b.pb.Add64(int64(seconds))
}

// line prints the plain progress line.
func (b *bar) line(t time.Time) {
	pct := ""
	if b.total > 0 {
		pct = fmt.Sprintf(" (%.0f%%)", 100*min(b.done/b.total, 1))
	}
	fmt.Fprintf(b.w, "progress: %s: %s of %s simulated%s, %s elapsed\n", fileio.Clean(b.name),
		interval.Format(time.Duration(b.done*float64(time.Second)).Truncate(time.Second)),
		interval.Format(time.Duration(b.total*float64(time.Second)).Truncate(time.Second)), pct,
		interval.Format(t.Sub(b.start).Truncate(time.Second)))
}

func (b *bar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pb == nil {
		return
	}
	b.pb.Finish()
	b.pb.Clear()
}
