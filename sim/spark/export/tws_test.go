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
		"MARGIN_MS = 5000",
		`"spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",`,
		`query = start(spark, name, chain, args, once=True)`,
		`class DedupProcessor(StatefulProcessor):`,
	} {
		if !strings.Contains(string(job), w) {
			t.Errorf("job.py lacks %q", w)
		}
	}
}

// TestTWSExportRefusesWhatTheWallClockCannotPlace: a TTL within the margin
// of a gap between batches (44 s against the 40 s of two triggers), and a
// restart, are refused in one line, and nothing is written; 45 s, exactly
// the margin away, is exported.
func TestTWSExportRefusesWhatTheWallClockCannotPlace(t *testing.T) {
	for _, c := range []struct{ ttl, faults, want string }{
		{"44 seconds", "", "batches 0 and 2 are 40 s apart, within 5 s of its transformWithState TTL 44 s"},
		{"36 seconds", "", "batches 0 and 2 are 40 s apart, within 5 s of its transformWithState TTL 36 s"},
		{"50 seconds", "faults:\n  - {at: 1m, kind: restart}\n", "a restart or lost checkpoint fault cannot be placed"},
		{"45 seconds", "", ""},
	} {
		out := filepath.Join(t.TempDir(), "export")
		_, err := Scenario(context.Background(), loadScenario(t, fmt.Sprintf(twsScenario, c.ttl, c.faults)), out, Options{})
		if c.want == "" {
			if err != nil {
				t.Fatalf("TTL %s: %v", c.ttl, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("TTL %s, faults %q: error %v, want one line with %q", c.ttl, c.faults, err, c.want)
		}
		if _, serr := os.Stat(out); !os.IsNotExist(serr) {
			t.Fatalf("TTL %s: %s exists after a refusal", c.ttl, out)
		}
	}
}
