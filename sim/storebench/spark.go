package storebench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// Providers are Spark's state store providers a scenario with a spark:
// block is compared on, in the order they run and appear.
func Providers() []string { return []string{sparkmodel.HDFS, sparkmodel.RocksDB} }

// runProviders compares Spark's state store providers, as modelled, on a
// scenario with a spark: block: it runs the scenario once per provider at
// the block's partitions, executors and cores, and records per query and
// provider the busiest executor's state memory and local disk and the
// batch durations (sim/spark/sparkmodel). These are modelled numbers, the same
// on every machine; the simulator's own stores are not compared (their
// wall clock says nothing of Spark's). The run of the scenario's own
// provider is the one the results folder holds.
func runProviders(ctx context.Context, sc *scenario.Scenario, opts Options) (_ *Result, err error) {
	tmp, err := os.MkdirTemp(opts.TempDir, "dedupsim-bench-stores-")
	if err != nil {
		return nil, fmt.Errorf("bench-stores: %w", err)
	}
	var own *runner.Results
	defer func() {
		if err != nil {
			if own != nil {
				own.Close()
			}
			os.RemoveAll(tmp)
		}
	}()
	var prog runner.Progress
	if opts.Progress != nil {
		prog = &allRuns{p: opts.Progress, runs: len(Providers())}
	}
	sb := &metrics.StoreBench{Format: metrics.StoresFormat, Scenario: sc.Name, Seed: sc.Seed, Identical: true}
	var rows [][]metrics.SparkProviderRun
	for _, p := range Providers() {
		psc := withProvider(sc, p)
		res, err := runner.Run(ctx, psc, runner.Options{Progress: prog, ScratchDir: filepath.Join(tmp, p)})
		if err != nil {
			return nil, fmt.Errorf("spark provider %s: %w", p, err)
		}
		var prow []metrics.SparkProviderRun
		for _, q := range res.Summary.Queries {
			prow = append(prow, providerRun(psc, p, q))
		}
		rows = append(rows, prow)
		if p == sc.Spark.Provider {
			own = res
			continue
		}
		if err := res.Close(); err != nil {
			return nil, err
		}
	}
	for i := range rows[0] {
		for _, prow := range rows {
			sb.Spark = append(sb.Spark, prow[i])
		}
	}
	return &Result{Bench: sb, Memory: own, tmp: tmp}, nil
}

// withProvider returns a copy of sc whose spark: block names provider p.
// A cost term equal to the scenario's own provider's default is taken as
// left out and gets p's default: the loader has written the defaults in,
// and a calibrated term is kept as it is for both.
func withProvider(sc *scenario.Scenario, p string) *scenario.Scenario {
	out := *sc
	cfg := *sc.Spark
	cfg.Provider = p
	if sc.Spark.Cost != nil {
		own := sparkmodel.DefaultCosts(sc.Spark.Provider)
		other := sparkmodel.DefaultCosts(p)
		c := *sc.Spark.Cost
		for _, t := range []struct {
			p         **float64
			own, next float64
		}{
			{&c.BatchOverheadMs, own.BatchOverheadMs, other.BatchOverheadMs},
			{&c.RowNs, own.RowNs, other.RowNs},
			{&c.NewKeyNs, own.NewKeyNs, other.NewKeyNs},
			{&c.ScanKeyNs, own.ScanKeyNs, other.ScanKeyNs},
			{&c.RemoveKeyNs, own.RemoveKeyNs, other.RemoveKeyNs},
			{&c.PartitionCommitMs, own.PartitionCommitMs, other.PartitionCommitMs},
		} {
			if *t.p == nil || **t.p == t.own {
				v := t.next
				*t.p = &v
			}
		}
		cfg.Cost = &c
	}
	out.Spark = &cfg
	return &out
}

// providerRun is one query's modelled cluster numbers with provider p.
func providerRun(sc *scenario.Scenario, p string, q metrics.QuerySummary) metrics.SparkProviderRun {
	r := metrics.SparkProviderRun{
		Query: q.Name, Provider: p, Partitions: sc.Spark.Partitions, Executors: sc.Spark.Executors,
		CoresPerExecutor: sc.Spark.CoresPerExecutor, PeakStateRows: q.PeakStateRows,
	}
	if c, ok := sc.Spark.Costs(); ok {
		r.Costs = &metrics.SparkCosts{BatchOverheadMs: c.BatchOverheadMs, RowNs: c.RowNs, NewKeyNs: c.NewKeyNs,
			ScanKeyNs: c.ScanKeyNs, RemoveKeyNs: c.RemoveKeyNs, PartitionCommitMs: c.PartitionCommitMs}
	}
	if sp := q.SparkSummary; sp != nil {
		r.ExecutorPeakMemoryBytes, r.ExecutorPeakDiskBytes = sp.ExecutorPeakMemoryBytes, sp.ExecutorPeakDiskBytes
		r.BatchDurationMs = sp.BatchDurationMs
		r.FallingBehindSinceSeconds = sp.FallingBehindSinceSeconds
		r.MaxProcessingLagSeconds = sp.MaxProcessingLagSeconds
	}
	return r
}
