package statereader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

const partitionedScenario = `name: parts
seed: 5
duration: 1m
trigger: 10s
workload:
  rate: 50/s
  retries: {probability: 0.2, delay: {dist: constant, value: 5s}}
queries:
  - name: within
    query: withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])
  - name: pair
    query: withWatermark("event_time", "10 minutes").dropDuplicates(["event_id", "event_time"])
`

// runCheckpoint runs doc with a run checkpoint and returns its folder and
// the summary's final state rows by query.
func runCheckpoint(t *testing.T, doc, store string) (string, map[string]int64) {
	t.Helper()
	sc, err := scenario.Parse([]byte(doc), "parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ck")
	res, err := runner.Run(context.Background(), sc, runner.Options{Workers: 1, CheckpointDir: dir, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]int64{}
	for _, q := range res.Summary.Queries {
		final[q.Name] = q.FinalStateRows
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, final
}

// sparkPartition folds a listed key's columns as Spark hashes them (a
// UUID event id is a string, an event time a timestamp in microseconds)
// and places it among n partitions. It reads the key as printed, not
// through the package's own hashing.
func sparkPartition(t *testing.T, k Key, n int) int {
	t.Helper()
	h := partition.Seed
	for _, c := range k {
		switch v := c.Value.(type) {
		case int64:
			h = partition.Long(h, v)
		case string:
			if ts, err := time.Parse(TimeLayout, v); err == nil && c.Name == "event_time" {
				h = partition.Timestamp(h, ts.UnixMicro())
			} else {
				h = partition.String(h, v)
			}
		}
	}
	return partition.Of(h, n)
}

// TestReadPartitionedState reads the state of a run with a spark: block
// (5 partitions) on both backends: every key of every operator is listed
// once, with the partition it was read from, which is where Spark's hash
// places it; the counts are the run's. A checkpoint without a spark:
// block gives each key its partition among Spark's default 200.
func TestReadPartitionedState(t *testing.T) {
	for _, store := range []string{"memory", "pebble"} {
		t.Run(store, func(t *testing.T) {
			dir, final := runCheckpoint(t, partitionedScenario+"spark: {partitions: 5}\n", store)
			st, err := Read(dir, Options{Limit: -1})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range st.Queries {
				if q.Partitions != 5 {
					t.Errorf("query %s: %d partitions, want 5", q.Name, q.Partitions)
				}
				o := q.Operators[0]
				rows := allRows(t, &o)
				if o.NumRows != final[q.Name] || int64(len(rows)) != o.NumRows || o.NumRows == 0 {
					t.Errorf("query %s: %d rows listed of %d, the run ended with %d", q.Name, len(rows), o.NumRows, final[q.Name])
				}
				per := map[int]int{}
				for _, r := range rows {
					if want := sparkPartition(t, r.Key, 5); r.Partition != want {
						t.Fatalf("query %s: key %v in partition %d, Spark's hash gives %d", q.Name, r.Key, r.Partition, want)
					}
					per[r.Partition]++
				}
				if len(per) != 5 {
					t.Errorf("query %s: keys in %d partitions, want all 5: %v", q.Name, len(per), per)
				}
			}
		})
	}
	t.Run("one store per operator", func(t *testing.T) {
		dir, _ := runCheckpoint(t, partitionedScenario, "memory")
		st, err := Read(dir, Options{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range st.Queries {
			if q.Partitions != 0 {
				t.Errorf("query %s: %d partitions, want none", q.Name, q.Partitions)
			}
			for _, r := range q.Operators[0].Rows {
				if want := sparkPartition(t, r.Key, DefaultPartitions); r.Partition != want {
					t.Fatalf("query %s: key %v in partition %d, Spark's hash among 200 gives %d", q.Name, r.Key, r.Partition, want)
				}
			}
		}
	})
}

// TestReadRefusesAPartitionHoldingAnothersKeys: a partition folder whose
// store holds keys of another partition (here partition 0's files copied
// over partition 1's) is not this query's state, and reading it fails
// with one line naming the folder; so does a folder that is no
// partition.
func TestReadRefusesAPartitionHoldingAnothersKeys(t *testing.T) {
	dir, _ := runCheckpoint(t, partitionedScenario+"spark: {partitions: 5}\n", "memory")
	state := filepath.Join(dir, "within", "query.0", "state", "0")
	if err := os.RemoveAll(filepath.Join(state, "1")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(state, "1"), os.DirFS(filepath.Join(state, "0"))); err != nil {
		t.Fatal(err)
	}
	_, err := Read(dir, Options{Limit: -1})
	want := fmt.Sprintf("%s: holds a key that Spark's hash places in partition 0 of 5", filepath.Join(state, "1"))
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line with %q", err, want)
	}
	os.Mkdir(filepath.Join(state, "7"), 0o777)
	_, err = Read(dir, Options{Limit: 1})
	if want := filepath.Join(state, "7") + ": not the state of one of the operator's 5 partitions"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// allRows collects the rows o lists.
func allRows(t *testing.T, o *Operator) []Row {
	t.Helper()
	var rows []Row
	if err := o.EachRow(func(r Row) error {
		rows = append(rows, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}
