package main

import (
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
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// exitNoPlan is plan's exit code when no delay is recommended: the
// targets are unreachable, the budget is exceeded, or no delay applies.
const exitNoPlan = 2

func newPlanCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		query, missed, falseDrop, budget, prodRate, out string
		asJSON, quiet, simulateEach                     bool
		seed                                            uint64
		workers, seeds                                  int
		quantile                                        float64
		sf                                              sparkFlags
	)
	cmd := &cobra.Command{
		Use:   "plan FILE --query NAME",
		Short: "Find the smallest watermark delay that meets missed-duplicate and false-drop targets",
		Long: `plan finds, by simulation, the smallest watermark delay at which one query of a
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
same numbers.

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
modelled heap state bytes (an estimate of the heap state backend from its
classes' fields, docs/flink.md, not a JVM measurement); Kafka Streams' and
Beam's state bytes are not modelled, so it is refused for them. The Spark
cluster flags and --out are Spark's and refused for the other engines.

Exit status: 0 with a recommended delay, 2 without one (unreachable, over
budget, no watermark to plan, or a state that never shrinks), 1 on errors.`,
		Example: `  simulate plan experiments/capacity-plan.yaml --query within-watermark --max-missed-rate 0.001
  simulate plan experiments/capacity-plan.yaml --query within-watermark --seeds 1 --production-rate 600/s --memory-budget 1GiB
  simulate plan experiments/capacity-plan.yaml --query pair-keyed --json
  simulate plan experiments/capacity-plan.yaml --query within-watermark --seeds 10 --quantile 0.9
  simulate plan experiments/capacity-plan.yaml --query within-watermark --seeds 1 --production-rate 600/s --partitions 16 --executors 2 --out /tmp/review
  simulate calibrate experiments/spark-sample/driver.log --executors 4 --cores-per-executor 4 && simulate plan experiments/capacity-plan.yaml --query within-watermark --seeds 1 --production-rate 600/s --partitions 200 --executors 4 --cores-per-executor 4 --cost experiments/spark-sample/cost.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("want one scenario file, got %d arguments (e.g. simulate plan experiments/capacity-plan.yaml --query within-watermark)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			if err := checkPlanOut(cmd, out); err != nil {
				return err
			}
			t := plan.DefaultTargets
			var err error
			if t.MaxMissedRate, err = plan.ParseShare(missed); err != nil {
				return fmt.Errorf("--max-missed-rate %w", err)
			}
			if t.MaxFalseDropRate, err = plan.ParseShare(falseDrop); err != nil {
				return fmt.Errorf("--max-false-drop-rate %w", err)
			}
			warnBareShare(stderr, "max-missed-rate", missed, t.MaxMissedRate)
			warnBareShare(stderr, "max-false-drop-rate", falseDrop, t.MaxFalseDropRate)
			if cmd.Flags().Changed("memory-budget") {
				if t.MemoryBudget, err = plan.ParseSize(budget); err != nil {
					return fmt.Errorf("--memory-budget %w", err)
				}
			}
			if cmd.Flags().Changed("production-rate") {
				r, err := scenario.ParseRate(prodRate)
				if err != nil || !(r > 0) || math.IsInf(float64(r), 0) {
					return fmt.Errorf("--production-rate %q: want a rate of originals above 0, such as 20000/s or 1.2e6/m", prodRate)
				}
				t.ProductionRate = float64(r)
			}
			if workers < 0 {
				return fmt.Errorf("--workers %d: want 0 (all cores) or more", workers)
			}
			if seeds < 1 || seeds > plan.MaxSeeds {
				return fmt.Errorf("--seeds %d: want 1 to %d", seeds, plan.MaxSeeds)
			}
			if !(quantile > 0 && quantile <= 1) {
				return fmt.Errorf("--quantile %v: want a share of the seeds above 0 and at most 1, such as 0.8", quantile)
			}
			sc, err := scenario.Load(file)
			if err != nil {
				return err
			}
			if sc.Workload.Events != nil && t.ProductionRate > 0 {
				// A log's rows cannot be scaled: plan on the scenario
				// fitted to the log (simulate fit), its traffic scaled.
				tmp, err := os.MkdirTemp("", "dedupsim-fit-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				if sc, _, err = fitlog.FitScenario(sc, tmp); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "plan: %s's workload is an event log: planning on the traffic fitted to it (as simulate fit does), scaled to --production-rate; the log's own rows are not scaled\n", file)
			}
			if err := refuseSparkOnly(cmd, sc, query, out); err != nil {
				return err
			}
			if err := checkCommandEstimate(cmd, sc, workers, quiet); err != nil {
				return err
			}
			cluster, err := sf.config(cmd, sc)
			if err != nil {
				return err
			}
			if cluster != nil && !planIsSpark(sc, query) {
				// A spark: block sizes Spark queries' clusters only.
				cluster = nil
			}
			execMem, execMemFrom, err := sf.memoryLimit(cmd, cluster, t.MemoryBudget)
			if err != nil {
				return err
			}
			var hooks runner.Options
			if err := applyTestHooks(&hooks); err != nil {
				return err
			}
			if cmd.Flags().Changed("seed") {
				sc.Seed = seed
			}
			var names []string
			for _, q := range sc.Queries {
				names = append(names, q.Name)
			}
			if query == "" {
				return fmt.Errorf("--query: required: name the query to plan; %s's queries are: %s", file, strings.Join(names, ", "))
			}

			// The first Ctrl-C stops the search, the second ends plan at once.
			ctx, stop := secondSignalEnds(cmd.Context(), stderr)
			defer stop()
			var res *plan.Result
			search := func() error {
				opts := plan.Options{Workers: workers, Seeds: seeds, Quantile: quantile, SimulateEach: simulateEach, CurveState: asJSON || out != ""}
				b := newBar(stderr, quiet, "plan "+query)
				if b != nil {
					opts.Progress = b
				}
				var err error
				res, err = plan.Search(ctx, sc, query, t, opts)
				if b != nil {
					b.finish()
				}
				var nf *plan.QueryNotFoundError
				if errors.As(err, &nf) {
					return fmt.Errorf("--query %q: %s has no such query; its queries are: %s", query, file, strings.Join(nf.Names, ", "))
				}
				if err != nil {
					return err
				}
				if cluster != nil {
					so := plan.SparkOptions{Config: *cluster, Rate: t.ProductionRate, Workers: workers, ExecutorMemory: execMem, ExecutorMemorySource: execMemFrom, MaxBatchRows: hooks.MaxBatchRows}
					if res.Spark, err = plan.Spark(ctx, sc, res, so); err != nil {
						return err
					}
				}
				return nil
			}
			if out == "" {
				if err := search(); err != nil {
					return err
				}
			} else {
				// Staging checks out, refusing a folder that is not
				// dedupsim's, before the search.
				phase := "check"
				err := runner.Publish(out, func(st *fileio.Staging) error {
					phase = "search"
					if err := search(); err != nil {
						return err
					}
					phase = "review"
					in := reviewInput{file: file, sc: sc, cluster: cluster, targets: t, workers: workers, command: commandLine(cmd, file), execMem: execMem, execMemFrom: execMemFrom, maxBatchRows: hooks.MaxBatchRows}
					if cmd.Flags().Changed("cost") {
						in.costFrom = sf.cost
					}
					return writeReview(ctx, st, in, res)
				})
				switch {
				case err == nil:
				case phase == "check":
					return fmt.Errorf("--out %w", err)
				case phase == "search":
					return err
				default:
					return fmt.Errorf("--out %s: %w", out, err)
				}
				fmt.Fprintf(stderr, "review: %s\n", out)
			}
			if asJSON {
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
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&query, "query", "", "name of the scenario's query to plan (required)")
	fl.StringVar(&missed, "max-missed-rate", "0.001", "largest share of duplicates emitted again: a fraction (0.001) or a percentage (0.1%)")
	fl.StringVar(&falseDrop, "max-false-drop-rate", "0.0001", "largest share of events lost: a fraction (0.0001) or a percentage (0.01%)")
	fl.StringVar(&budget, "memory-budget", "", "largest peak state, such as 512MiB or 4GiB (at --production-rate if given)")
	fl.StringVar(&prodRate, "production-rate", "", "your rate of originals, such as 20000/s: the scenario's traffic is multiplied up to it and simulated there (nothing is scaled after the fact)")
	fl.StringVar(&out, "out", "", "write the plan as a results folder for a design review: report.md, report.html, plan.json, charts and the run at the recommended delay")
	fl.BoolVar(&asJSON, "json", false, "print the plan as JSON: query, recommendedDelaySeconds, predicted, simulated, reason, seeds, spread, bindingTarget, spark on a cluster, and each seed's curve when plan reads one")
	fl.IntVar(&seeds, "seeds", 5, "seeds to plan over: the scenario's seed and the next ones (seed, seed+1, ...)")
	fl.Float64Var(&quantile, "quantile", 1, "share of the seeds the recommended delay must meet the targets on (1: every seed)")
	fl.Uint64Var(&seed, "seed", 0, "seed for every random stream (default: the scenario's seed)")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	fl.BoolVar(&simulateEach, "simulate-each", false, "simulate every delay the search tries instead of reading the one-pass curve (slower, the same answer)")
	fl.IntVar(&workers, "workers", 0, "simulations run at once (default: all cores); the answer does not depend on it")
	sf.register(fl)
	addForceFlag(cmd, new(bool))
	addGoAheadFlag(cmd, new(bool))
	return cmd
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

// planIsSpark reports whether the scenario's query named query runs on
// Spark; true for a name it lacks (Search reports it).
func planIsSpark(sc *scenario.Scenario, query string) bool {
	for _, q := range sc.Queries {
		if q.Name == query {
			return q.IsSpark()
		}
	}
	return true
}

// refuseSparkOnly refuses, for a query of another engine than Spark, the
// flags that size a Spark cluster and the review document (--out), which
// is Spark-shaped: plan searches that engine's horizon by simulation only.
func refuseSparkOnly(cmd *cobra.Command, sc *scenario.Scenario, query, out string) error {
	if planIsSpark(sc, query) {
		return nil
	}
	var engine string
	for _, q := range sc.Queries {
		if q.Name == query {
			engine = q.Engine
		}
	}
	if cmd.Flags().Changed("memory-budget") && !plan.BudgetModelled(engine) {
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
