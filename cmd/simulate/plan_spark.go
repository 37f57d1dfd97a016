package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dedupsim/dedupsim/sim/plan"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// sparkFlags are plan's flags that size a Spark cluster.
type sparkFlags struct {
	partitions, executors, cores int64
	provider, cost               string
	executorMemory               string
}

// Their zero values stand for "not given" (only a flag given on the
// command line is read), so that the help prints each default once, in
// words, not again as cobra's "(default N)".
func (f *sparkFlags) register(fl *pflag.FlagSet) {
	fl.Int64Var(&f.partitions, "partitions", 0, "spark.sql.shuffle.partitions of the cluster to size (default: the scenario's spark: block, else 200)")
	fl.Int64Var(&f.executors, "executors", 0, "executors of the cluster to size (default: the scenario's spark: block, else 1)")
	fl.Int64Var(&f.cores, "cores-per-executor", 0, "cores (task slots) per executor (default: the scenario's spark: block, else 1)")
	fl.StringVar(&f.provider, "provider", "", "state store provider, hdfs or rocksdb (default: the scenario's spark: block, else hdfs)")
	fl.StringVar(&f.executorMemory, "executor-memory", "", "memory each executor's state may use, such as 4GiB: bounds the largest sustainable rate (default: the scenario's spark.executorMemory, else --memory-budget, else Spark's spark.executor.memory default, 1g)")
	fl.StringVar(&f.cost, "cost", "", "YAML file with a cost: block, such as simulate calibrate prints (default: the scenario's spark: cost, else the provider's defaults)")
}

// config returns the cluster to size: the scenario's spark: block with
// the flags given over it; nil when there is neither (the plan is then
// what it always was).
func (f *sparkFlags) config(cmd *cobra.Command, sc *scenario.Scenario) (*sparkmodel.Config, error) {
	fl := cmd.Flags()
	any := sc.Spark != nil
	for _, n := range []string{"partitions", "executors", "cores-per-executor", "provider", "cost", "executor-memory"} {
		any = any || fl.Changed(n)
	}
	if !any {
		return nil, nil
	}
	var c sparkmodel.Config
	if sc.Spark != nil {
		c = *sc.Spark
		if c.Cost != nil {
			cost := *c.Cost
			c.Cost = &cost
		}
	} else {
		c.SetDefaults()
	}
	if fl.Changed("partitions") {
		if f.partitions < 1 || f.partitions > sparkmodel.MaxPartitions {
			return nil, fmt.Errorf("--partitions %d: want a whole number of shuffle partitions from 1 to %d", f.partitions, sparkmodel.MaxPartitions)
		}
		c.Partitions = f.partitions
	}
	if fl.Changed("executors") {
		if f.executors < 1 || f.executors > 10000 {
			return nil, fmt.Errorf("--executors %d: want a whole number of executors from 1 to 10000", f.executors)
		}
		c.Executors = f.executors
	}
	if fl.Changed("cores-per-executor") {
		if f.cores < 1 || f.cores > 1024 {
			return nil, fmt.Errorf("--cores-per-executor %d: want a whole number of cores from 1 to 1024", f.cores)
		}
		c.CoresPerExecutor = f.cores
	}
	if fl.Changed("provider") {
		if f.provider != sparkmodel.HDFS && f.provider != sparkmodel.RocksDB {
			return nil, fmt.Errorf("--provider %s: want hdfs or rocksdb", plan.ShowValue(f.provider))
		}
		c.Provider = f.provider
	}
	if fl.Changed("executor-memory") {
		if _, err := plan.ParseSize(f.executorMemory); err != nil {
			return nil, fmt.Errorf("--executor-memory %w", err)
		}
		c.ExecutorMemory = f.executorMemory
	}
	if fl.Changed("cost") {
		cost, err := plan.ReadCostFile(f.cost)
		if err != nil {
			return nil, fmt.Errorf("--cost %w", err)
		}
		c.Cost = cost
	} else if c.Cost != nil {
		// The loader filled the terms the block leaves out with its
		// provider's defaults; keep only those written, so that the
		// provider planned for (--provider may change it) fills the
		// rest, and a cost: {} counts as the defaults it is.
		given, err := plan.WrittenCostTerms(sc.File)
		if err != nil {
			return nil, err
		}
		c.Cost = c.Cost.Only(given)
	}
	return &c, nil
}

// memoryLimit returns the memory each executor's state may use and
// where it comes from, in words: --executor-memory, else the scenario's
// spark.executorMemory, else the memory budget (budget, 0 for none), else
// 0 (plan.Spark then takes Spark's default, and says so).
func (f *sparkFlags) memoryLimit(cmd *cobra.Command, c *sparkmodel.Config, budget int64) (int64, string, error) {
	if c != nil && c.ExecutorMemory != "" {
		n, err := c.ExecutorMemoryBytes()
		if err != nil {
			return 0, "", fmt.Errorf("spark.executorMemory %w", err)
		}
		if cmd.Flags().Changed("executor-memory") {
			return n, "--executor-memory", nil
		}
		return n, "the scenario's spark.executorMemory", nil
	}
	if budget > 0 {
		return budget, "--memory-budget", nil
	}
	return 0, "", nil
}
