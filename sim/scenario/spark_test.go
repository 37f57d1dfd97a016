package scenario

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const sparkBase = `name: s
duration: 1m
workload: {rate: 10/s}
queries: [{name: a, query: 'dropDuplicates(["event_id"])'}]
`

// TestSparkBadInputOneLineEach: each bad value of the spark: block is one
// line naming the file, the key path and what was expected.
func TestSparkBadInputOneLineEach(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{"spark: {provider: cassandra}", "scenario s.yaml: spark.provider: must be one of hdfs, rocksdb, got cassandra"},
		{"spark: {partitions: 0}", "scenario s.yaml: spark.partitions: must be from 1 to 10000 (spark.sql.shuffle.partitions; each partition is a state store per dedup operator), got 0"},
		{"spark: {partitions: 10001}", "scenario s.yaml: spark.partitions: must be from 1 to 10000 (spark.sql.shuffle.partitions; each partition is a state store per dedup operator), got 10001"},
		{"spark: {executors: 0}", "scenario s.yaml: spark.executors: must be from 1 to 10000, got 0"},
		{"spark: {coresPerExecutor: 0}", "scenario s.yaml: spark.coresPerExecutor: must be from 1 to 1024, got 0"},
		{"spark: {executorMemory: lots}", "scenario s.yaml: spark.executorMemory: must be a size above 0 such as 4GiB or 512MiB, got lots"},
		{"spark: {executorMemory: 0GiB}", "scenario s.yaml: spark.executorMemory: must be a size above 0 such as 4GiB or 512MiB, got 0GiB"},
		{"spark: {maxRowsPerBatch: -1}", "scenario s.yaml: spark.maxRowsPerBatch: must be 0 (no limit) or more, got -1"},
		{"spark: {cost: {rowNs: -1}}", "scenario s.yaml: spark.cost.rowNs: must be a cost of 0 or more, got -1"},
		{"spark: {cost: {batchOverheadMs: -0.5}}", "scenario s.yaml: spark.cost.batchOverheadMs: must be a cost of 0 or more, got -0.5"},
		{"spark: {cost: {partitionCommitMs: -2}}", "scenario s.yaml: spark.cost.partitionCommitMs: must be a cost of 0 or more, got -2"},
		{"spark: {cost: {scanKeyNs: lots}}", "scenario s.yaml: spark.cost.scanKeyNs: must be a cost in nanoseconds per key, 0 or more, got lots"},
		{"spark: {partitions: 2.5}", "scenario s.yaml: spark.partitions: must be a whole number of shuffle partitions from 1 to 10000, got 2.5"},
		{"spark: {provder: rocksdb}", "scenario s.yaml: spark.provder: unknown key (line 5), must be one of partitions, provider, executors, coresPerExecutor, maxRowsPerBatch, cost, downtime, executorMemory"},
		{"spark: 200", "scenario s.yaml: spark: must be a mapping of partitions, provider, executors, coresPerExecutor, maxRowsPerBatch, cost, downtime, executorMemory, got 200"},
	} {
		_, err := Parse([]byte(sparkBase+c.block+"\n"), "s.yaml")
		if err == nil {
			t.Errorf("%s: accepted", c.block)
			continue
		}
		var errs []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		} else {
			errs = []error{err}
		}
		if len(errs) != 1 || errs[0].Error() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.block, err, c.want)
		}
		var se *Error
		if !errors.As(errs[0], &se) || strings.Contains(se.Error(), "\n") {
			t.Errorf("%s: not one *Error line: %v", c.block, err)
		}
	}
}

// TestSparkDefaults: an empty spark: block takes Spark's defaults (200
// partitions, hdfs, one executor with one core, no row limit, no cost);
// a cost block's missing terms take the provider's defaults, shown in the
// resolved scenario; no block, no spark key in the JSON form.
func TestSparkDefaults(t *testing.T) {
	s, err := Parse([]byte(sparkBase+"spark: {}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.Spark)
	if want := `{"partitions":200,"provider":"hdfs","executors":1,"coresPerExecutor":1,"maxRowsPerBatch":0}`; string(got) != want {
		t.Errorf("defaults %s, want %s", got, want)
	}
	s, err = Parse([]byte(sparkBase+"spark: {provider: rocksdb, executors: 4, cost: {rowNs: 900}}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(s.Spark.Cost)
	if want := `{"batchOverheadMs":150,"rowNs":900,"newKeyNs":3590,"scanKeyNs":337,"removeKeyNs":4243,"partitionCommitMs":2}`; string(got) != want {
		t.Errorf("rocksdb cost %s, want %s", got, want)
	}
	s, err = Parse([]byte(sparkBase), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(s); strings.Contains(string(got), "spark") {
		t.Errorf("a scenario without a spark: block has one in its JSON form: %s", got)
	}
}
