package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The spark: block's provider and partitions are what job.py runs Spark
// with (export.json's stateStoreProvider and shufflePartitions): the
// block's provider wins over the scenario's store, and without a block the
// store decides and Spark keeps its default partitions.
func TestSparkBlockSetsProviderAndPartitions(t *testing.T) {
	base := fmt.Sprintf(small, "uuid")
	for _, c := range []struct {
		name, yaml, provider string
		partitions           int64
	}{
		{"rocksdb-over-memory", base + "spark:\n  provider: rocksdb\n  partitions: 7\n", rocksDBProvider, 7},
		{"hdfs-over-pebble", base + "store: pebble\nspark:\n  provider: hdfs\n  partitions: 3\n", hdfsProvider, 3},
		{"pebble-no-block", base + "store: pebble\n", rocksDBProvider, 200},
		{"memory-no-block", base, hdfsProvider, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _ := exportScenario(t, loadScenario(t, c.yaml), JSON)
			m := readManifest(t, out)
			if m.StateStoreProvider != c.provider || m.ShufflePartitions != c.partitions {
				t.Errorf("export.json: provider %q, partitions %d; want %q, %d", m.StateStoreProvider, m.ShufflePartitions, c.provider, c.partitions)
			}
		})
	}
}

// An export whose prediction passes the batches simulate compare reads
// from one progress file is refused in one line that says how to fit
// (shorter, or a longer trigger), and nothing is written.
func TestTooManyBatchesForCompareIsRefused(t *testing.T) {
	sc := loadScenario(t, fmt.Sprintf(small, "uuid"))
	out := filepath.Join(t.TempDir(), "export")
	_, err := Scenario(context.Background(), sc, out, Options{Format: JSON, maxBatches: 10})
	if err == nil {
		t.Fatal("an export of more batches than compare reads was written")
	}
	msg := err.Error()
	for _, want := range []string{"not exportable: query ", "passes 10 batches", "longer trigger"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || strings.Count(msg, "not exportable") != 1 {
		t.Errorf("error is not one plain line: %q", msg)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused export left %s: %v", out, err)
	}
}

// A scenario's chain exports with its spark.partitions: the prediction
// orders the rows between the chain's operators by Spark's partitions of
// generated rows (the export's batches hash like the run's), where it
// failed with "cannot be placed in its 4 shuffle partitions".
func TestChainScenarioExportsWithPartitions(t *testing.T) {
	yaml := strings.Replace(fmt.Sprintf(small, "uuid"), `  - name: pair
    query: events.withWatermark("event_time", "20 seconds").dropDuplicates(["event_id", "event_time"])`,
		`  - name: chain
    query: withWatermark("event_time", "20 seconds").dropDuplicates(["event_id", "event_time"]).dropDuplicatesWithinWatermark(["event_id"])`, 1) +
		"spark:\n  partitions: 4\n"
	out, _ := exportScenario(t, loadScenario(t, yaml), JSON)
	if m := readManifest(t, out); m.ShufflePartitions != 4 {
		t.Errorf("export.json: partitions %d, want 4", m.ShufflePartitions)
	}
	if _, err := os.Stat(filepath.Join(out, "expected", "chain.jsonl")); err != nil {
		t.Fatal(err)
	}
}

// Queries whose batches last differently on the modelled cluster, so that
// one overruns its trigger where the other does not, form different
// batches in the run; an export has one set of batch files, so it is
// refused in one line naming both queries.
func TestQueriesFormingDifferentBatchesAreRefused(t *testing.T) {
	// pair keys every restamped copy anew, within does not: pair's
	// batches hold more new keys, and a new key costs 60 ms.
	yaml := fmt.Sprintf(small, "uuid") + "spark:\n  partitions: 1\n  cost: {batchOverheadMs: 0, rowNs: 0, newKeyNs: 6e7, scanKeyNs: 0, removeKeyNs: 0, partitionCommitMs: 0}\n"
	out := filepath.Join(t.TempDir(), "export")
	_, err := Scenario(context.Background(), loadScenario(t, yaml), out, Options{Format: JSON})
	if err == nil {
		t.Fatal("an export of queries that form different batches was written")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "not exportable: queries within and pair form different batches") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line saying within and pair form different batches", msg)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused export left %s: %v", out, err)
	}
}

// TestFlinkQueryIsRefused checks that a scenario with a Flink query is
// not exported as a PySpark job (its SQL is no chain), in one line,
// writing nothing.
func TestFlinkQueryIsRefused(t *testing.T) {
	yaml := `name: flink
duration: 1m
workload: {rate: 5/s}
queries:
  - name: flink-first
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time) AS rn FROM events) WHERE rn = 1
`
	out := filepath.Join(t.TempDir(), "export")
	_, err := Scenario(context.Background(), loadScenario(t, yaml), out, Options{Format: JSON})
	if err == nil || err.Error() != "query flink-first: a flink query cannot be exported as a PySpark job: export a scenario of Spark queries" {
		t.Fatalf("got %v, want the flink query refused in one line", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused export left %s: %v", out, err)
	}
}
