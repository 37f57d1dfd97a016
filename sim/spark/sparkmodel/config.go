// Package sparkmodel puts a query's micro-batches in a Spark cluster's
// terms: how long each batch takes on the cluster (the cost model and the
// task scheduling), how much heap or native memory and local disk each
// executor needs for its state stores (the provider models), and the
// summary a sizing review reads (batch durations, processing lag, when
// the query falls behind, partition skew, executor peaks). Its input is
// what the executor (sim) reports per batch and per shuffle partition
// (microbatch.PartitionStats); it never changes what a batch decides.
//
// Config is the scenario's spark: block (docs/scenario.md); Tracker
// follows one job's batches; the formulas and their sources are in
// docs/spark-model.md. Every cost default is an estimate until a real
// job's progress log calibrates it (sim/spark/calibrate).
package sparkmodel

import (
	"fmt"
	"math"

	"github.com/dedupsim/dedupsim/engines/interval"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// The state store providers, as the spark: block names them.
const (
	// HDFS is Spark's default HDFSBackedStateStoreProvider: state in JVM
	// hash maps, delta files on the checkpoint location.
	HDFS = "hdfs"
	// RocksDB is RocksDBStateStoreProvider: state in a native RocksDB
	// instance per store, on the executor's local disk.
	RocksDB = "rocksdb"
)

// Defaults of the spark: block, Spark's own where Spark has one.
const (
	// DefaultPartitions is spark.sql.shuffle.partitions' default.
	DefaultPartitions = 200
	// DefaultExecutors and DefaultCoresPerExecutor describe the smallest
	// cluster: one executor with one core.
	DefaultExecutors        = 1
	DefaultCoresPerExecutor = 1
	// MaxExecutors and MaxCoresPerExecutor bound the cluster a scenario
	// may describe.
	MaxExecutors        = 10_000
	MaxCoresPerExecutor = 1024
)

// MaxPartitions bounds spark.partitions: each partition is a state store
// of its own per dedup operator, open for the whole run.
const MaxPartitions = microbatch.MaxPartitions

// Config is a scenario's spark: block: the cluster a query runs on and
// what its batches cost. Its yaml, want and json tags drive the scenario
// loader (sim/scenario), like the workload's.
type Config struct {
	// Partitions is spark.sql.shuffle.partitions at the query's first
	// run: each dedup operator's state is split over that many stores.
	// A checkpoint keeps the count it was created with.
	Partitions int64 `json:"partitions" yaml:"partitions" want:"a whole number of shuffle partitions from 1 to 10000"`
	// Provider is the state store provider: HDFS or RocksDB.
	Provider string `json:"provider" yaml:"provider" want:"hdfs or rocksdb"`
	// Executors and CoresPerExecutor are the cluster: Executors ×
	// CoresPerExecutor task slots.
	Executors        int64 `json:"executors" yaml:"executors" want:"a whole number of executors from 1 to 10000"`
	CoresPerExecutor int64 `json:"coresPerExecutor" yaml:"coresPerExecutor" want:"a whole number of cores from 1 to 1024"`
	// MaxRowsPerBatch caps the rows a batch takes, oldest first, like a
	// source's maxOffsetsPerTrigger; 0 takes every row that arrived.
	MaxRowsPerBatch int64 `json:"maxRowsPerBatch" yaml:"maxRowsPerBatch" want:"a whole number of rows, 0 for no limit"`
	// Cost is the batch duration model; nil keeps batches instantaneous.
	Cost *Cost `json:"cost,omitempty" yaml:"cost" want:"a mapping of batchOverheadMs, rowNs, newKeyNs, scanKeyNs, removeKeyNs, partitionCommitMs"`
	// Downtime lists spans in which the query does not run (Downtime);
	// absent, the query runs throughout.
	Downtime []Downtime `json:"downtime,omitempty" yaml:"downtime" item:"a mapping of at and for"`
	// ExecutorMemory is the memory each executor's state stores may
	// use, as a size ("4GiB"): spark.executor.memory's heap for the
	// HDFS-backed provider, the native memory beside it for RocksDB. Only
	// a plan reads it (its largest sustainable rate is the largest whose
	// state fits); "" leaves it to the plan's flags and defaults.
	ExecutorMemory string `json:"executorMemory,omitempty" yaml:"executorMemory" want:"a size such as 4GiB or 512MiB"`
	// CountScale, when above 0, multiplies the key counts the memory
	// model reads (each store's updated, evicted and total keys per
	// batch), so that memory and disk are those of a rate CountScale
	// times as high. A plan's rate search sets it; a scenario cannot.
	CountScale float64 `json:"-" yaml:"-"`
}

// DefaultExecutorMemory is spark.executor.memory's default, 1g: the
// executor memory a plan assumes when nothing states one.
const DefaultExecutorMemory = 1 << 30

// ExecutorMemoryBytes returns ExecutorMemory in bytes, 0 when it is "".
func (c *Config) ExecutorMemoryBytes() (int64, error) {
	if c.ExecutorMemory == "" {
		return 0, nil
	}
	return interval.ParseBytes(c.ExecutorMemory)
}

// Cost is the spark.cost block: the coefficients of a batch's duration
// (see Costs). A term left out takes the provider's default
// (DefaultCosts); FillDefaults writes them in.
type Cost struct {
	BatchOverheadMs   *float64 `json:"batchOverheadMs" yaml:"batchOverheadMs" want:"a cost in milliseconds per batch, 0 or more"`
	RowNs             *float64 `json:"rowNs" yaml:"rowNs" want:"a cost in nanoseconds per row, 0 or more"`
	NewKeyNs          *float64 `json:"newKeyNs" yaml:"newKeyNs" want:"a cost in nanoseconds per key, 0 or more"`
	ScanKeyNs         *float64 `json:"scanKeyNs" yaml:"scanKeyNs" want:"a cost in nanoseconds per key, 0 or more"`
	RemoveKeyNs       *float64 `json:"removeKeyNs" yaml:"removeKeyNs" want:"a cost in nanoseconds per key, 0 or more"`
	PartitionCommitMs *float64 `json:"partitionCommitMs" yaml:"partitionCommitMs" want:"a cost in milliseconds per partition task, 0 or more"`
}

// SetDefaults fills c with the block's defaults; the scenario loader
// calls it on a new spark: block before decoding the keys given.
func (c *Config) SetDefaults() {
	*c = Config{Partitions: DefaultPartitions, Provider: HDFS, Executors: DefaultExecutors, CoresPerExecutor: DefaultCoresPerExecutor}
}

// FillDefaults writes the provider's default (DefaultCosts) into every
// cost term left out, so that the resolved scenario shows the costs used.
// An unknown provider takes HDFS's (Check reports the provider).
func (c *Config) FillDefaults() {
	if c.Cost == nil {
		return
	}
	def := DefaultCosts(c.Provider)
	for t, p := range c.Cost.terms() {
		if *p == nil {
			v := def.Get(Term(t))
			*p = &v
		}
	}
}

// terms returns the cost block's fields in Term order.
func (c *Cost) terms() [NumTerms]**float64 {
	return [NumTerms]**float64{&c.BatchOverheadMs, &c.RowNs, &c.NewKeyNs, &c.ScanKeyNs, &c.RemoveKeyNs, &c.PartitionCommitMs}
}

// Only returns the terms of c whose keys (Term.String) are in keys; nil
// when none is (the provider's defaults).
func (c *Cost) Only(keys map[string]bool) *Cost {
	out := &Cost{}
	to := out.terms()
	n := 0
	for t, p := range c.terms() {
		if keys[Term(t).String()] && *p != nil {
			v := **p
			*to[t] = &v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return out
}

// Costs returns the resolved coefficients and true, or false when the
// block has no cost (batches are instantaneous).
func (c *Config) Costs() (Costs, bool) {
	if c == nil || c.Cost == nil {
		return Costs{}, false
	}
	out := DefaultCosts(c.Provider)
	for t, p := range c.Cost.terms() {
		if *p != nil {
			out.Set(Term(t), **p)
		}
	}
	return out, true
}

// Slots returns the cluster's task slots, executors × cores.
func (c *Config) Slots() int64 { return c.Executors * c.CoresPerExecutor }

// Problem is one invalid value of the block, at a key path relative to
// spark (such as "cost.rowNs").
type Problem struct {
	Path string
	Msg  string
}

// Check returns every invalid value of c, one Problem each.
func (c *Config) Check() []Problem {
	var out []Problem
	add := func(path, format string, args ...any) {
		out = append(out, Problem{path, fmt.Sprintf(format, args...)})
	}
	if c.Partitions < 1 || c.Partitions > MaxPartitions {
		add("partitions", "must be from 1 to %d (spark.sql.shuffle.partitions; each partition is a state store per dedup operator), got %d", MaxPartitions, c.Partitions)
	}
	if c.Provider != HDFS && c.Provider != RocksDB {
		add("provider", "must be one of hdfs, rocksdb, got %s", fileio.Show(c.Provider))
	}
	if c.Executors < 1 || c.Executors > MaxExecutors {
		add("executors", "must be from 1 to %d, got %d", MaxExecutors, c.Executors)
	}
	if c.CoresPerExecutor < 1 || c.CoresPerExecutor > MaxCoresPerExecutor {
		add("coresPerExecutor", "must be from 1 to %d, got %d", MaxCoresPerExecutor, c.CoresPerExecutor)
	}
	if _, err := c.ExecutorMemoryBytes(); err != nil {
		add("executorMemory", "must be a size above 0 such as 4GiB or 512MiB, got %s", fileio.Show(c.ExecutorMemory))
	}
	if !(c.CountScale >= 0) || math.IsInf(c.CountScale, 0) {
		add("countScale", "must be 0 or more, got %g", c.CountScale)
	}
	if c.MaxRowsPerBatch < 0 {
		add("maxRowsPerBatch", "must be 0 (no limit) or more, got %d", c.MaxRowsPerBatch)
	}
	out = append(out, c.checkDowntime()...)
	if c.Cost != nil {
		for t, p := range c.Cost.terms() {
			term := Term(t)
			switch v := *p; {
			case v == nil:
			case !(*v >= 0):
				add("cost."+term.String(), "must be a cost of 0 or more, got %g", *v)
			case *v > MaxCost(term):
				add("cost."+term.String(), "must be a cost of at most %g (a larger cost overflows the model's durations), got %g", MaxCost(term), *v)
			}
		}
	}
	return out
}

// MaxCost bounds a cost term: 1e7 ms (2.8 hours) for the terms in
// milliseconds (batchOverheadMs, partitionCommitMs), 1e9 ns (1 s) for the
// per-row and per-key terms. Real costs are orders of magnitude below;
// far above, a batch's duration in microseconds overflows (1e16 ms is
// 1e19 µs) and the model would report nonsense such as a p50 of 0 ms.
func MaxCost(t Term) float64 {
	if t == BatchOverhead || t == PartitionCommit {
		return 1e7
	}
	return 1e9
}
