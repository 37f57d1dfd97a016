package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// twsScenario is a transformWithState scenario: triggers every 20 s, rows
// at every trigger, copies that come back after the TTL. %s is the TTL,
// %s the faults block.
const twsScenario = `
name: tws
seed: 3
duration: 3m
trigger: 20s
workload:
  rate: 2/s
  ids: uuid
  arrivalDelay: {dist: exponential, mean: 1s}
  retries:
    probability: 0.5
    copies: {dist: constant, value: 1}
    delay: {dist: uniform, min: 10s, max: 100s}
    timestamp: restamp
queries:
  - name: tws
    query: groupBy("event_id").transformWithState(DedupProcessor(ttl="%s"))
%s`

// TestTWSExportRunsEachBatchAtItsTrigger: a transformWithState scenario
// exports with one predicted batch per batch file (job.py starts each with
// Trigger.Once: no no-data batch, although Spark asks for one at every
// processing-time trigger), the batch times are the triggers' (20 s apart,
// from the scenario), the TTL expires keys, and job.py drives the query
// with DedupProcessor on RocksDB.
func TestTWSExportRunsEachBatchAtItsTrigger(t *testing.T) {
	out, sum := exportScenario(t, loadScenario(t, fmt.Sprintf(twsScenario, "50 seconds", "")), Parquet)
	if sum.Batches < 9 {
		t.Fatalf("%d batches, want 9 or more (3 minutes of triggers every 20 s, and retries up to 100 s after)", sum.Batches)
	}
	// Each batch time is a trigger's, relative to the first.
	want := make([]string, sum.Batches)
	for k := range want {
		want[k] = fmt.Sprint(sum.BatchTimesMs[k])
		if k == 0 && sum.BatchTimesMs[k] != 0 || k > 0 && (sum.BatchTimesMs[k]%20_000 != 0 || sum.BatchTimesMs[k] <= sum.BatchTimesMs[k-1]) {
			t.Fatalf("batch times %v: not 0, then increasing multiples of the 20 s trigger", sum.BatchTimesMs)
		}
	}
	recs := readRecords(t, filepath.Join(out, "expected", "tws.jsonl"))
	if int64(len(recs)) != sum.Batches {
		t.Fatalf("%d predicted batches for %d batch files: a Trigger.Once start runs one batch", len(recs), sum.Batches)
	}
	removed := 0
	for k, r := range recs {
		if fmt.Sprint(r["batchId"]) != fmt.Sprint(k) || fmt.Sprint(r["numInputRows"]) == "0" {
			t.Fatalf("record %d: batch %v with %v rows", k, r["batchId"], r["numInputRows"])
		}
		op := r["stateOperators"].([]any)[0].(map[string]any)
		if fmt.Sprint(op["numRowsRemoved"]) != "0" {
			removed++
		}
	}
	if removed == 0 {
		t.Fatalf("no value expired over 3 minutes with a 50 s TTL")
	}
	job, err := os.ReadFile(filepath.Join(out, "job.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`lambda df: tws_dedup(df, ["event_id"], 50000)`,
		`TWS_QUERIES = {"tws"}`,
		"BATCH_TIMES_MS = [" + strings.Join(want, ", ") + "]",
		`plan_batch(spark, args, name, k, t0 + BATCH_TIMES_MS[k], local)`,
		`"spark.sql.streaming.fileSource.log.compactInterval": "1000000000",`,
		`"spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",`,
		`query = start(spark, name, chain, args, once=True)`,
		`class DedupProcessor(StatefulProcessor):`,
	} {
		if !strings.Contains(string(job), w) {
			t.Errorf("job.py lacks %q", w)
		}
	}
}

// TestTWSExportRefusesARestart: a restart among the batches of a
// transformWithState query, each already a start of its own, is refused in
// one line, and nothing is written.
func TestTWSExportRefusesARestart(t *testing.T) {
	out := filepath.Join(t.TempDir(), "export")
	_, err := Scenario(context.Background(), loadScenario(t, fmt.Sprintf(twsScenario, "50 seconds", "faults:\n  - {at: 1m, kind: restart}\n")), out, Options{})
	if want := "a restart or lost checkpoint fault cannot be placed"; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line with %q", err, want)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Fatalf("%s exists after a refusal", out)
	}
}
