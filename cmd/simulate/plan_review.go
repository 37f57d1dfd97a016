package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/reports"
	"github.com/dedupsim/dedupsim/sim/plan"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// reviewInput is what plan --out needs besides the plan.
type reviewInput struct {
	file    string
	sc      *scenario.Scenario
	cluster *sparkmodel.Config
	// costFrom says where the cluster's costs come from ("" for the
	// provider's defaults).
	costFrom string
	targets  plan.Targets
	workers  int
	command  string
	// execMem is the memory each executor's state may use (0: Spark's
	// default), execMemFrom where it comes from (see plan.SparkOptions).
	execMem     int64
	execMemFrom string
	// runnerOpts are the runner options the cluster's runs start from:
	// the test hooks (testhooks.go), none in a release build.
	runnerOpts runner.Options
}

// writeReview writes res into the results folder st stages (published
// like run's, runner.Publish): the review document
// (reports.RenderReview), the direct run at the recommended delay and
// the production rate under run/, and, with a cluster, both providers
// sized at that rate.
func writeReview(ctx context.Context, st *fileio.Staging, in reviewInput, res *plan.Result) error {
	scratch, err := st.ScratchDir()
	if err != nil {
		return err
	}
	sc := in.sc
	if in.targets.ProductionRate > 0 {
		if sc, err = plan.AtRate(sc, in.targets.ProductionRate); err != nil {
			return err
		}
	}
	rv := newReview(in, res, sc)

	var g errgroup.Group
	var pickRows int64 // the peak state of the run at the pick
	if res.Recommended != nil {
		// The direct run at the pick, the production rate and the first
		// seed: its timeseries draws the state's growth.
		g.Go(func() error {
			s := *sc
			for _, q := range sc.Queries {
				if q.Name == res.Query {
					s.Queries = []scenario.Query{q}
				}
			}
			s.Sweep = &scenario.Sweep{Delay: []interval.Duration{interval.Duration(*res.Recommended)}}
			s.Spark = nil
			r, err := runner.Run(ctx, &s, runner.Options{Workers: in.workers, ScratchDir: scratch})
			if err != nil {
				return fmt.Errorf("the run at the recommended delay: %w", err)
			}
			defer r.Close()
			dir := filepath.Join(st.Dir, "run")
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			if err := runner.WriteFiles(dir, r); err != nil {
				return err
			}
			if len(r.Summary.Queries) == 1 {
				pickRows = r.Summary.Queries[0].PeakStateRows
			}
			rv.RunDir = "run"
			return r.Close()
		})
	}
	var sized [2]*plan.SparkResult
	providers := [2]string{sparkmodel.HDFS, sparkmodel.RocksDB}
	if in.cluster != nil {
		for i, prov := range providers {
			if res.Spark != nil && res.Spark.Config.Provider == prov {
				sized[i] = res.Spark
				continue
			}
			g.Go(func() error {
				c := *in.cluster
				c.Provider = prov
				if prov != in.cluster.Provider {
					// Costs are a provider's: the other takes its defaults.
					c.Cost = nil
				}
				r, err := plan.Spark(ctx, in.sc, res, plan.SparkOptions{Config: c, Rate: in.targets.ProductionRate, Workers: in.workers, ExecutorMemory: in.execMem, ExecutorMemorySource: in.execMemFrom, Base: in.runnerOpts})
				sized[i] = r
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if in.cluster != nil {
		rv.Cluster = reviewCluster(in, sized, providers)
	}
	var provs []sizedProvider
	if rv.Cluster != nil {
		for _, p := range rv.Cluster.Providers {
			if p.BatchLimited {
				provs = nil // not measured: nothing to estimate from
				break
			}
			provs = append(provs, sizedProvider{provider: p.Provider, mem: p.ExecutorPeakMemoryBytes})
		}
	}
	if err := reviewCurve(rv, res, sc, in.cluster, provs, pickRows); err != nil {
		return err
	}
	rv.Assumptions = assumptions(in, res, sc, rv)
	return reports.RenderReview(st.Dir, rv)
}

// newReview is the review's text and numbers from the plan's result, before
// the run at the pick and the cluster's sizing.
func newReview(in reviewInput, res *plan.Result, sc *scenario.Scenario) *reports.Review {
	rv := &reports.Review{
		Scenario: in.file, Query: res.Query, QueryText: res.QueryText, Reason: res.Reason, Binding: res.Binding,
		BindingText: res.BindingText(), Margins: res.MarginsText(),
		MaxMissedRate: res.Targets.MaxMissedRate, MaxFalseDropRate: res.Targets.MaxFalseDropRate, MemoryBudgetBytes: res.Targets.MemoryBudget,
		ScenarioRate: res.ScenarioRate, PlannedRate: res.PlannedRate, Quantile: res.Quantile,
		TriggerSeconds: sc.Trigger.Std().Seconds(), Notes: res.Notes, Command: in.command,
	}
	if res.Recommended != nil {
		v := res.Recommended.Seconds()
		rv.RecommendedDelaySeconds = &v
	}
	for _, s := range res.Seeds {
		rs := reports.ReviewSeed{Seed: s.Seed}
		if s.Delay != nil {
			v := s.Delay.Seconds()
			rs.DelaySeconds = &v
		}
		rv.Seeds = append(rv.Seeds, rs)
	}
	sp := res.Spread
	rv.Spread = reports.ReviewSpread{
		MissedRate:     [3]float64{sp.MissedRate.Min, sp.MissedRate.Median, sp.MissedRate.Max},
		FalseDropRate:  [3]float64{sp.FalseDropRate.Min, sp.FalseDropRate.Median, sp.FalseDropRate.Max},
		PeakStateRows:  [3]float64{sp.PeakStateRows.Min, sp.PeakStateRows.Median, sp.PeakStateRows.Max},
		PeakStateBytes: [3]float64{sp.PeakStateBytes.Min, sp.PeakStateBytes.Median, sp.PeakStateBytes.Max},
	}
	for _, p := range res.Points {
		rv.Points = append(rv.Points, reports.ReviewPoint{DelaySeconds: p.Delay.Seconds(), MissedRate: p.Summary.MissedDuplicateRate,
			FalseDropRate: p.Summary.FalseDropRate, PeakStateBytes: float64(p.Summary.PeakStateBytes)})
	}
	return rv
}

// reviewCluster is the review's cluster section: each provider sized.
func reviewCluster(in reviewInput, sized [2]*plan.SparkResult, providers [2]string) *reports.ReviewCluster {
	rc := &reports.ReviewCluster{Partitions: in.cluster.Partitions, Executors: in.cluster.Executors, CoresPerExecutor: in.cluster.CoresPerExecutor}
	for i, s := range sized {
		kind := "JVM heap"
		if providers[i] == sparkmodel.RocksDB {
			kind = "native memory"
		}
		costs := providers[i] + "'s default costs (estimates until calibrated)"
		if !s.DefaultCosts {
			costs = "calibrated: " + orScenario(in.costFrom)
		}
		rc.Providers = append(rc.Providers, reports.ReviewProvider{Provider: providers[i], MemoryKind: kind,
			ExecutorPeakMemoryBytes: s.ExecutorPeakMemoryBytes, ExecutorPeakDiskBytes: s.ExecutorPeakDiskBytes,
			BatchP50Ms: s.BatchP50Ms, BatchP99Ms: s.BatchP99Ms, KeepsUp: s.KeepsUp, MaxSustainableRate: s.MaxSustainableRate,
			MaxSustainableRateBounded: s.MaxSustainableRateBounded, Costs: costs, Verdict: s.Verdict(),
			ExecutorMemoryBytes: s.ExecutorMemoryBytes, ExecutorMemorySource: s.ExecutorMemorySource, FitsMemory: s.FitsMemory,
			BatchLimited: s.BatchLimited, MemoryAtMaxRateBytes: s.MemoryAtMaxRateBytes, RateBound: s.RateBound, RateBoundText: s.BoundText(),
			MemoryHint: s.MemoryHint(), SimulationsAtBatchLimit: s.LimitedRuns})
	}
	return rc
}

func orScenario(from string) string {
	if from == "" {
		return "the scenario's spark.cost block"
	}
	return from
}

// assumptions lists what the review's numbers rest on.
func assumptions(in reviewInput, res *plan.Result, sc *scenario.Scenario, rv *reports.Review) []string {
	w := &sc.Workload
	out := []string{
		fmt.Sprintf("Traffic: %s's workload, simulated at %s/s of originals (the scenario's %s/s multiplied %.4g times), %s long, trigger %s; per-event draws (retries with probability %g, their gaps and copies, arrival delays, bad clocks) come with every event, so their counts grow with the rate.",
			in.file, fmtRateCLI(res.PlannedRate), fmtRateCLI(res.ScenarioRate), res.Scale, sc.Duration, sc.Trigger, w.Retries.Probability),
		fmt.Sprintf("Seeds: %d (%d to %d: the scenario's seed and the next ones), each searched on its own; the recommendation meets the targets on %s of them.",
			len(res.Seeds), res.Seeds[0].Seed, res.Seeds[len(res.Seeds)-1].Seed, quantileWords(res.Quantile)),
		fmt.Sprintf("Targets: missed duplicates <= %s of true duplicates, false drops <= %s of events%s.",
			interval.Percent(res.Targets.MaxMissedRate), interval.Percent(res.Targets.MaxFalseDropRate), budgetWords(res.Targets.MemoryBudget)),
		"Spark: the model follows Spark 3.5 and 4.x (StreamingDeduplicateExec and its state stores, docs/spark-model.md); state bytes are one version of the HDFS-backed store's rows, executor memory and disk are modelled, not measured on a cluster.",
	}
	if in.cluster != nil {
		c := "Costs: "
		var parts []string
		for _, p := range rv.Cluster.Providers {
			parts = append(parts, p.Provider+": "+p.Costs)
		}
		out = append(out, c+strings.Join(parts, "; ")+". The largest sustainable rate is searched with the per-row and per-key costs multiplied by each rate over the planned one, at the planned rate's rows (docs/spark-model.md).")
	}
	if rv.RunDir != "" {
		out = append(out, fmt.Sprintf("run/ holds a direct run of seed %d at the recommended delay and %s/s: its summary.json, timeseries.csv and progress, as simulate run writes them.",
			res.Seeds[0].Seed, fmtRateCLI(res.PlannedRate)))
	}
	return out
}

func quantileWords(q float64) string {
	if q >= 1 {
		return "every one"
	}
	return fmt.Sprintf("%g%%", 100*q)
}

func budgetWords(b int64) string {
	if b <= 0 {
		return ""
	}
	return ", peak state <= " + interval.Bytes(b)
}

// fmtRateCLI renders a rate per second with thousands separators.
func fmtRateCLI(r float64) string {
	s := fmt.Sprintf("%.0f", r)
	if r < 10 {
		s = fmt.Sprintf("%.3g", r)
	}
	for i := len(s) - 3; i > 0 && s[i-1] >= '0' && s[i-1] <= '9'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// commandLine renders the plan command as given: the file and the flags
// set.
func commandLine(cmd *cobra.Command, file string) string {
	parts := []string{"simulate plan", file}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			parts = append(parts, "--"+f.Name)
			return
		}
		parts = append(parts, "--"+f.Name, f.Value.String())
	})
	return strings.Join(parts, " ")
}
