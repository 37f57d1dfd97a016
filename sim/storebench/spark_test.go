package storebench

import (
	"context"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// TestComparesSparkProviders: a scenario with a spark: block gets Spark's
// providers compared as modelled, hdfs beside rocksdb per query, at the
// block's partitions and executors: RocksDB keeps state in native memory
// and on local disk, HDFS on the heap and no local disk; the costs the
// scenario left at hdfs's defaults take rocksdb's for the rocksdb run
// (its per-key terms are dearer), so its batches take longer; the
// results folder holds the scenario's own provider's run.
func TestComparesSparkProviders(t *testing.T) {
	sc, err := scenario.Parse([]byte(`name: s
duration: 5m
trigger: 10s
workload: {rate: 200/s}
queries: [{name: a, query: 'withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])'}]
spark: {partitions: 4, executors: 2, provider: hdfs, cost: {}}
`), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	sp := res.Bench.Spark
	if len(sp) != 2 || len(res.Bench.Runs) != 0 || sp[0].Provider != "hdfs" || sp[1].Provider != "rocksdb" || sp[0].Query != "a" || sp[1].Query != "a" {
		t.Fatalf("spark runs %+v, runs %d; want a/hdfs then a/rocksdb and no store runs", sp, len(res.Bench.Runs))
	}
	h, r := sp[0], sp[1]
	if h.Partitions != 4 || h.Executors != 2 || r.Partitions != 4 || r.Executors != 2 {
		t.Errorf("cluster %d×%d and %d×%d, want the block's 4 partitions on 2 executors", h.Partitions, h.Executors, r.Partitions, r.Executors)
	}
	if h.ExecutorPeakMemoryBytes <= 0 || h.ExecutorPeakDiskBytes != 0 || r.ExecutorPeakMemoryBytes <= 0 || r.ExecutorPeakDiskBytes <= 0 {
		t.Errorf("hdfs memory %d disk %d, rocksdb memory %d disk %d: want memory for both, disk for rocksdb only",
			h.ExecutorPeakMemoryBytes, h.ExecutorPeakDiskBytes, r.ExecutorPeakMemoryBytes, r.ExecutorPeakDiskBytes)
	}
	want := sparkmodel.DefaultCosts(sparkmodel.RocksDB)
	if r.Costs == nil || r.Costs.NewKeyNs != want.NewKeyNs || r.Costs.ScanKeyNs != want.ScanKeyNs || h.Costs == nil || h.Costs.NewKeyNs != sparkmodel.DefaultCosts(sparkmodel.HDFS).NewKeyNs {
		t.Errorf("costs hdfs %+v, rocksdb %+v: want each provider's defaults", h.Costs, r.Costs)
	}
	if h.BatchDurationMs == nil || r.BatchDurationMs == nil || r.BatchDurationMs.Max <= h.BatchDurationMs.Max {
		t.Errorf("batch durations hdfs %+v, rocksdb %+v: want rocksdb's dearer keys to take longer", h.BatchDurationMs, r.BatchDurationMs)
	}
	if res.Memory == nil || res.Memory.Summary.Queries[0].SparkSummary == nil {
		t.Error("the results hold no run with the scenario's spark fields")
	}
}

// TestWithProviderKeepsCalibratedTerms: a term the scenario set apart from
// its provider's default is kept for the other provider.
func TestWithProviderKeepsCalibratedTerms(t *testing.T) {
	sc, err := scenario.Parse([]byte(`name: s
duration: 1m
workload: {rate: 10/s}
queries: [{name: a, query: 'dropDuplicates(["event_id"])'}]
spark: {partitions: 4, provider: rocksdb, cost: {newKeyNs: 1234}}
`), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := withProvider(sc, sparkmodel.HDFS)
	c, _ := h.Spark.Costs()
	def := sparkmodel.DefaultCosts(sparkmodel.HDFS)
	if h.Spark.Provider != "hdfs" || c.NewKeyNs != 1234 || c.ScanKeyNs != def.ScanKeyNs || c.RemoveKeyNs != def.RemoveKeyNs {
		t.Errorf("hdfs costs %+v, want newKeyNs 1234 kept and hdfs's other defaults", c)
	}
	if sc.Spark.Provider != "rocksdb" || *sc.Spark.Cost.ScanKeyNs != sparkmodel.DefaultCosts(sparkmodel.RocksDB).ScanKeyNs {
		t.Error("withProvider changed the scenario it copied")
	}
}
