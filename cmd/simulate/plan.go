package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/fitlog"
	"github.com/dedupsim/dedupsim/sim/plan"
	"github.com/dedupsim/dedupsim/sim/registry"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// exitNoPlan is plan's exit code when no delay is recommended: the
// targets are unreachable, the budget is exceeded, or no delay applies.
const exitNoPlan = 2

// planLong is plan's help.
const planLong = `plan finds, by simulation, the smallest watermark delay at which one query of a
scenario meets the targets: at most --max-missed-rate of duplicates emitted again
and at most --max-false-drop-rate of events lost. It simulates a grid of delays
(1s, 2s, 5s ... up to the scenario's duration), then bisects between the last
failing and the first passing delay to 1s or 1%. The candidates run in parallel;
the answer does not depend on the number of workers.

For a Spark query whose verdicts reduce to thresholds on the delay (one
withWatermark, then one dropDuplicatesWithinWatermark or dropDuplicates with
the event time among its keys, event_id among the keys, no restarts and no
spark: block) plan reads every delay off the exact one-pass curve instead
(sim/curve: one pass over each seed's stream gives the counters of every
whole-second delay), and confirms the answer by a direct run on every seed,
and the delay below it by one on the seed it decides: the same answer, in
about the CPU time of four runs for two seeds. --simulate-each simulates
every delay as before.

One seed's answer sits on a knife's edge (a missed rate of 0.099% against
0.1%), so plan searches --seeds seeds (default 5: the scenario's seed and the
next ones, seed+1, seed+2, ...), each on its own, in parallel, and recommends
the smallest delay meeting the targets on every seed (or, with --quantile q,
on that share of the seeds: the per-seed delays' q quantile). It prints each
seed's delay, the missed and false-drop rates at the recommendation as
min / median / max over the seeds, the target that decides the delay (and
what the other one alone would need), and the margin to each target on the
worst seed.

It prints the delay with its peak state, from a closed-form model (an estimate:
a key lives about delay + trigger in a pair-keyed dropDuplicates, about 2 x delay
+ trigger in dropDuplicatesWithinWatermark; state = unique-key rate x that
horizon x bytes per entry) beside the simulated values.

--production-rate plans for your real traffic by simulating at it: the
scenario's rate (or its profile) is multiplied up to it, so every copy, late
row and bad clock comes at that rate, and the delay, the rates, the state and
the cluster are measured there, never scaled from the scenario's rate (a bad
clock's lead over the watermark and a store's memory do not scale linearly).
A simulation takes about as long as the rows it makes: 20,000/s for 30
minutes is 36 million originals a seed and delay. --memory-budget fails the
plan when the state of the smallest delay meeting the targets exceeds it.

--out DIR writes the plan as a results folder for a design review:
report.md and report.html with the answer first, the state and the cluster
at the production rate (HDFS and RocksDB side by side), the chart of the
delays tried against the targets and the assumptions; plan.json holds the
same numbers. Where plan read the one-pass curve, report.html also draws the
first seed's curve as an interactive chart: a delay slider, hover, or
report.html#delay=5m30s, show at any delay the rates, the peak state and
each provider's executor memory (estimated from the sizing at the pick).
It needs no server and no network.

When no delay can meet the targets it says so and why: a pair-keyed
dropDuplicates(["event_id", "event_time"]) sees every re-stamped copy as a new
key at any delay, and a dedup that never evicts grows without bound.

With a spark: block in the scenario, or any of --partitions, --executors,
--cores-per-executor, --provider, --executor-memory and --cost (which override
the block), plan also sizes the Spark cluster at the recommended delay and
--production-rate: the peak state memory and disk of one executor, the batch
durations' p50 and p99 against the trigger, whether the batches keep up, and
the largest rate that still keeps up with its state fitting in the executor
memory (--executor-memory, else spark.executorMemory, else --memory-budget,
else Spark's 1g; the state stores' memory only, no JVM headroom), found by
bisection over simulations, with what bounded it: the cluster, the memory, or
one of dedupsim's own limits (docs/spark-model.md).
--cost FILE reads a cost: block, such as simulate calibrate prints; without one
the provider's default costs, estimates, time the batches.

A Flink, Kafka Streams or Beam query is planned the same way over its own
horizon, set in each simulation as a sweep sets it: Flink's
table.exec.state.ttl ("state TTL"), Kafka Streams' window, Beam's duration;
the answer names it and shows only simulated values (no closed-form model
for these engines). It reads the one-pass curve of the horizon there too
where the rule reduces to thresholds on it (Flink's proctime TTL without
mini-batch, Kafka Streams' window at stream time, Beam's global window),
and simulates value by value elsewhere, saying why. For a Flink query --memory-budget bounds the peak of its
modelled state bytes (an estimate of the heap backend from its classes'
fields, or of RocksDB's serialized entries, docs/flink.md, not a measurement); Kafka Streams' and
Beam's state bytes are not modelled, so it is refused for them. The Spark
cluster flags and --out are Spark's and refused for the other engines.

Exit status: 0 with a recommended delay, 2 without one (unreachable, over
budget, no watermark to plan, or a state that never shrinks), 1 on errors.`

// planExample are plan's examples (cmd/simulate's tests run them).
const planExample = `  simulate plan experiments/capacity-plan.yaml --query within-watermark --max-missed-rate 0.001
  simulate plan experiments/capacity-plan.yaml --query within-watermark --seeds 1 --production-rate 600/s --memory-budget 1GiB
  simulate plan experiments/capacity-plan.yaml --query pair-keyed --json
  simulate plan experiments/capacity-plan.yaml --query within-watermark --seeds 10 --quantile 0.9
  simulate plan experiments/capacity-plan.yaml --query within-watermark --seeds 1 --production-rate 600/s --partitions 16 --executors 2 --out /tmp/review
  simulate calibrate experiments/spark-sample/driver.log --executors 4 --cores-per-executor 4 && simulate plan experiments/capacity-plan.yaml --query within-watermark --seeds 1 --production-rate 600/s --partitions 200 --executors 4 --cores-per-executor 4 --cost experiments/spark-sample/cost.yaml`

// planFlags are plan's flags.
type planFlags struct {
	query, missed, falseDrop, budget, prodRate, out string
	asJSON, quiet, simulateEach                     bool
	seed                                            uint64
	workers, seeds                                  int
	quantile                                        float64
	sf                                              sparkFlags
}

func newPlanCmd(stdout, stderr io.Writer) *cobra.Command {
	f := &planFlags{}
	cmd := &cobra.Command{
		Use:     "plan FILE --query NAME",
		Short:   "Find the smallest watermark delay that meets missed-duplicate and false-drop targets",
		Long:    planLong,
		Example: planExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("want one scenario file, got %d arguments (e.g. simulate plan experiments/capacity-plan.yaml --query within-watermark)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, args[0], stdout, stderr) },
	}
	f.register(cmd)
	return withPlanLog(cmd)
}

// register binds plan's flags to cmd.
func (f *planFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.query, "query", "", "name of the scenario's query to plan (required)")
	fl.StringVar(&f.missed, "max-missed-rate", "0.001", "largest share of duplicates emitted again: a fraction (0.001) or a percentage (0.1%)")
	fl.StringVar(&f.falseDrop, "max-false-drop-rate", "0.0001", "largest share of events lost: a fraction (0.0001) or a percentage (0.01%)")
	fl.StringVar(&f.budget, "memory-budget", "", "largest peak state, such as 512MiB or 4GiB (at --production-rate if given)")
	fl.StringVar(&f.prodRate, "production-rate", "", "your rate of originals, such as 20000/s: the scenario's traffic is multiplied up to it and simulated there (nothing is scaled after the fact)")
	fl.StringVar(&f.out, "out", "", "write the plan as a results folder for a design review: report.md, report.html, plan.json, charts and the run at the recommended delay")
	fl.BoolVar(&f.asJSON, "json", false, "print the plan as JSON: query, recommendedDelaySeconds, predicted, simulated, reason, seeds, spread, bindingTarget, spark on a cluster, and each seed's curve when plan reads one")
	fl.IntVar(&f.seeds, "seeds", 5, "seeds to plan over: the scenario's seed and the next ones (seed, seed+1, ...)")
	fl.Float64Var(&f.quantile, "quantile", 1, "share of the seeds the recommended delay must meet the targets on (1: every seed)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed for every random stream (default: the scenario's seed)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	fl.BoolVar(&f.simulateEach, "simulate-each", false, "simulate every delay the search tries instead of reading the one-pass curve (slower, the same answer)")
	fl.IntVar(&f.workers, "workers", 0, "simulations run at once (default: all cores); the answer does not depend on it")
	f.sf.register(fl)
	addForceFlag(cmd, new(bool))
	addGoAheadFlag(cmd, new(bool))
}

// targets reads and checks the flags that set the targets and the search:
// the rates, the budget, the production rate, workers, seeds and quantile.
func (f *planFlags) targets(cmd *cobra.Command, stderr io.Writer) (plan.Targets, error) {
	t := plan.DefaultTargets
	var err error
	if t.MaxMissedRate, err = plan.ParseShare(f.missed); err != nil {
		return t, fmt.Errorf("--max-missed-rate %w", err)
	}
	if t.MaxFalseDropRate, err = plan.ParseShare(f.falseDrop); err != nil {
		return t, fmt.Errorf("--max-false-drop-rate %w", err)
	}
	warnBareShare(stderr, "max-missed-rate", f.missed, t.MaxMissedRate)
	warnBareShare(stderr, "max-false-drop-rate", f.falseDrop, t.MaxFalseDropRate)
	if cmd.Flags().Changed("memory-budget") {
		if t.MemoryBudget, err = plan.ParseSize(f.budget); err != nil {
			return t, fmt.Errorf("--memory-budget %w", err)
		}
	}
	if cmd.Flags().Changed("production-rate") {
		r, err := scenario.ParseRate(f.prodRate)
		if err != nil || !(r > 0) || math.IsInf(float64(r), 0) {
			return t, fmt.Errorf("--production-rate %q: want a rate of originals above 0, such as 20000/s or 1.2e6/m", f.prodRate)
		}
		t.ProductionRate = float64(r)
	}
	if f.workers < 0 {
		return t, fmt.Errorf("--workers %d: want 0 (all cores) or more", f.workers)
	}
	if f.seeds < 1 || f.seeds > plan.MaxSeeds {
		return t, fmt.Errorf("--seeds %d: want 1 to %d", f.seeds, plan.MaxSeeds)
	}
	if !(f.quantile > 0 && f.quantile <= 1) {
		return t, fmt.Errorf("--quantile %v: want a share of the seeds above 0 and at most 1, such as 0.8", f.quantile)
	}
	return t, nil
}

// load reads the scenario in file; one whose workload is an event log,
// planned at a production rate, is replaced by the scenario fitted to the
// log (its rows cannot be scaled). done removes what the fit wrote.
func (f *planFlags) load(file string, t plan.Targets, stderr io.Writer) (sc *scenario.Scenario, done func(), err error) {
	done = func() {}
	if sc, err = scenario.Load(file); err != nil {
		return nil, done, err
	}
	if sc.Workload.Events == nil || t.ProductionRate <= 0 {
		return sc, done, nil
	}
	tmp, err := os.MkdirTemp("", "dedupsim-fit-")
	if err != nil {
		return nil, done, err
	}
	done = func() { os.RemoveAll(tmp) }
	if sc, _, err = fitlog.FitScenario(sc, tmp); err != nil {
		return nil, done, err
	}
	fmt.Fprintf(stderr, "plan: %s's workload is an event log: planning on the traffic fitted to it (as simulate fit does), scaled to --production-rate; the log's own rows are not scaled\n", file)
	return sc, done, nil
}

// planCluster is the Spark cluster plan sizes (nil: none) and the
// executor memory its state must fit in, with where that came from.
type planCluster struct {
	config      *sparkmodel.Config
	execMem     int64
	execMemFrom string
}

// cluster reads the cluster flags and the scenario's spark: block, for a
// query whose cluster plan sizes.
func (f *planFlags) cluster(cmd *cobra.Command, sc *scenario.Scenario, t plan.Targets) (planCluster, error) {
	var c planCluster
	var err error
	if c.config, err = f.sf.config(cmd, sc); err != nil {
		return c, err
	}
	if c.config != nil && !planIsSpark(sc, f.query) {
		// A spark: block sizes Spark queries' clusters only.
		c.config = nil
	}
	c.execMem, c.execMemFrom, err = f.sf.memoryLimit(cmd, c.config, t.MemoryBudget)
	return c, err
}

// run is plan's work: the flags, the scenario, the checks, then the search
// and its output.
func (f *planFlags) run(cmd *cobra.Command, file string, stdout, stderr io.Writer) error {
	if err := checkPlanOut(cmd, f.out); err != nil {
		return err
	}
	t, err := f.targets(cmd, stderr)
	if err != nil {
		return err
	}
	sc, done, err := f.load(file, t, stderr)
	defer done()
	if err != nil {
		return err
	}
	if err := refuseSparkOnly(cmd, sc, f.query, f.out); err != nil {
		return err
	}
	if err := checkCommandEstimate(cmd, sc, f.workers, f.quiet); err != nil {
		return err
	}
	cluster, err := f.cluster(cmd, sc, t)
	if err != nil {
		return err
	}
	var hooks runner.Options
	if err := applyTestHooks(&hooks); err != nil {
		return err
	}
	if cmd.Flags().Changed("seed") {
		sc.Seed = f.seed
	}
	if f.query == "" {
		var names []string
		for _, q := range sc.Queries {
			names = append(names, q.Name)
		}
		return fmt.Errorf("--query: required: name the query to plan; %s's queries are: %s", file, strings.Join(names, ", "))
	}
	// The first Ctrl-C stops the search, the second ends plan at once.
	ctx, stop := secondSignalEnds(cmd.Context(), stderr)
	defer stop()
	search := func() (*plan.Result, error) { return f.search(ctx, file, sc, t, cluster, hooks, stderr) }
	var res *plan.Result
	if f.out == "" {
		if res, err = search(); err != nil {
			return err
		}
	} else {
		in := reviewInput{file: file, sc: sc, cluster: cluster.config, targets: t, workers: f.workers, command: commandLine(cmd, file), execMem: cluster.execMem, execMemFrom: cluster.execMemFrom, runnerOpts: hooks}
		if cmd.Flags().Changed("cost") {
			in.costFrom = f.sf.cost
		}
		if res, err = f.review(ctx, in, search, stderr); err != nil {
			return err
		}
	}
	return f.print(res, file, sc, stdout)
}

// search runs plan's search on sc, then sizes the cluster if there is one.
func (f *planFlags) search(ctx context.Context, file string, sc *scenario.Scenario, t plan.Targets, cluster planCluster, hooks runner.Options, stderr io.Writer) (*plan.Result, error) {
	opts := plan.Options{Workers: f.workers, Seeds: f.seeds, Quantile: f.quantile, SimulateEach: f.simulateEach, CurveState: f.asJSON || f.out != ""}
	b := newBar(stderr, f.quiet, "plan "+f.query)
	if b != nil {
		opts.Progress = b
	}
	res, err := plan.Search(ctx, sc, f.query, t, opts)
	if b != nil {
		b.finish()
	}
	var nf *plan.QueryNotFoundError
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("--query %q: %s has no such query; its queries are: %s", f.query, file, strings.Join(nf.Names, ", "))
	}
	if err != nil {
		return nil, err
	}
	if cluster.config != nil {
		so := plan.SparkOptions{Config: *cluster.config, Rate: t.ProductionRate, Workers: f.workers, ExecutorMemory: cluster.execMem, ExecutorMemorySource: cluster.execMemFrom, Base: hooks}
		if res.Spark, err = plan.Spark(ctx, sc, res, so); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// review runs the search inside the staging of --out and writes the review
// document there. Staging checks --out, refusing a folder that is not
// dedupsim's, before the search.
func (f *planFlags) review(ctx context.Context, in reviewInput, search func() (*plan.Result, error), stderr io.Writer) (*plan.Result, error) {
	var res *plan.Result
	phase := "check"
	err := runner.Publish(f.out, func(st *fileio.Staging) error {
		phase = "search"
		var err error
		if res, err = search(); err != nil {
			return err
		}
		phase = "review"
		return writeReview(ctx, st, in, res)
	})
	switch {
	case err == nil:
	case phase == "check":
		return nil, fmt.Errorf("--out %w", err)
	case phase == "search":
		return nil, err
	default:
		return nil, fmt.Errorf("--out %s: %w", f.out, err)
	}
	fmt.Fprintf(stderr, "review: %s\n", f.out)
	return res, nil
}

// print writes the plan, as text or JSON; no recommended delay is exit
// status exitNoPlan.
func (f *planFlags) print(res *plan.Result, file string, sc *scenario.Scenario, stdout io.Writer) error {
	var err error
	if f.asJSON {
		err = res.WriteJSON(stdout)
	} else {
		err = res.WriteText(stdout, file, sc.Seed)
	}
	if err != nil {
		return err
	}
	if res.Recommended == nil {
		return &exitCodeError{code: exitNoPlan, err: errors.New("no recommended delay: see the reason")}
	}
	return nil
}

// checkPlanOut refuses an empty --out, which wrote nothing silently, and
// does --force on the review folder.
func checkPlanOut(cmd *cobra.Command, out string) error {
	if !cmd.Flags().Changed("out") {
		return nil
	}
	if out == "" {
		return errors.New(`--out "": want a folder for the review document (leave --out out to print the plan only)`)
	}
	force, _ := cmd.Flags().GetBool("force")
	return forceOut(cmd.ErrOrStderr(), force, out, false)
}

// planHarness returns the harness facts (sim/registry) of the engine of
// the scenario's query named query; Spark's for a name it lacks (Search
// reports it) or an engine the registry does not know (the loader
// refuses it first).
func planHarness(sc *scenario.Scenario, query string) registry.Harness {
	engine := ""
	for _, q := range sc.Queries {
		if q.Name == query {
			engine = q.Engine
		}
	}
	h, err := registry.HarnessOf(engine)
	if err != nil {
		h, _ = registry.HarnessOf(registry.Spark)
	}
	return h
}

// planIsSpark reports whether plan sizes the cluster of the scenario's
// query named query (sim/registry's Harness.SizesCluster: Spark's).
func planIsSpark(sc *scenario.Scenario, query string) bool {
	return planHarness(sc, query).SizesCluster
}

// refuseSparkOnly refuses, for a query of an engine whose cluster plan
// does not size (sim/registry's Harness), the flags that size a Spark
// cluster and the review document (--out), which is Spark-shaped: plan
// searches that engine's horizon by simulation only; and --memory-budget
// for an engine whose state bytes are not modelled.
func refuseSparkOnly(cmd *cobra.Command, sc *scenario.Scenario, query, out string) error {
	h := planHarness(sc, query)
	if h.SizesCluster {
		return nil
	}
	engine := h.Name
	if cmd.Flags().Changed("memory-budget") && !h.StateBytes {
		return fmt.Errorf("--memory-budget: bounds modelled state bytes (Spark's state store, Flink's heap state); %q is a %s query, whose state bytes are not modelled: plan shows its simulated peak state rows (drop --memory-budget)", query, engine)
	}
	for _, n := range []string{"partitions", "executors", "cores-per-executor", "provider", "cost"} {
		if cmd.Flags().Changed(n) {
			return fmt.Errorf("--%s: sizes a Spark cluster; %q is a %s query, whose horizon plan searches by simulation only (drop --%s)", n, query, engine, n)
		}
	}
	if out != "" {
		return fmt.Errorf("--out: the review document is Spark's (state store, cluster, watermark); %q is a %s query: print the plan, or --json, instead", query, engine)
	}
	return nil
}

// warnBareShare warns on stderr when a rate target given as a bare
// fraction (no % sign) is above 1%: "--max-missed-rate 0.1" means 10% of
// duplicates, which someone who meant a tenth of a percent would not see.
func warnBareShare(stderr io.Writer, flag, given string, v float64) {
	if strings.HasSuffix(strings.TrimSpace(given), "%") || v <= 0.01 {
		return
	}
	fmt.Fprintf(stderr, "warning: --%s %s is a fraction: %s; write %s%% for %s percent\n",
		flag, fileio.Clean(given), interval.Percent(v), fileio.Clean(strings.TrimSpace(given)), fileio.Clean(strings.TrimSpace(given)))
}
