package export

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// withFaults is small (uuid ids) with a faults block.
func withFaults(faults string) string {
	return fmt.Sprintf(small, "uuid") + "faults:\n" + faults
}

// firstBatchAtOrAfter returns the index of the first batch file whose
// trigger (the timestamp of its predicted data record) is at or after at.
func firstBatchAtOrAfter(t *testing.T, records []map[string]any, at time.Time) int64 {
	t.Helper()
	k := int64(0)
	for _, r := range records {
		if n, _ := r["numInputRows"].(json.Number).Int64(); n == 0 {
			continue // a no-data batch: no file
		}
		ts, err := time.Parse(time.RFC3339Nano, r["timestamp"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if !ts.Before(at) {
			return k
		}
		k++
	}
	t.Fatalf("no batch at or after %s", at)
	return 0
}

// readManifest reads an export's export.json.
func readManifest(t *testing.T, dir string) Summary {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// withoutRunID returns the records with their runId left out.
func withoutRunID(recs []map[string]any) []map[string]any {
	out := make([]map[string]any, len(recs))
	for i, r := range recs {
		c := map[string]any{}
		for k, v := range r {
			if k != "runId" {
				c[k] = v
			}
		}
		out[i] = c
	}
	return out
}

// A restart fault stops the query before the first batch whose trigger is
// at or after it and starts it again from its checkpoint: under job.py's
// driving (a no-data batch, when asked for, runs before the restart, and
// data comes right after it), Spark runs the same batches with the same
// counters, as one query (the same id) in a new run (a new runId from the
// restart on).
func TestRestartIsANewRunOfTheSameBatches(t *testing.T) {
	plain, _ := exportScenario(t, loadScenario(t, fmt.Sprintf(small, "uuid")), Parquet)
	sc := loadScenario(t, withFaults("  - {at: 1m, kind: restart}\n"))
	out, _ := exportScenario(t, sc, Parquet)
	for _, q := range []string{"within", "pair"} {
		want := readRecords(t, filepath.Join(plain, expectedDir, q+".jsonl"))
		got := readRecords(t, filepath.Join(out, expectedDir, q+".jsonl"))
		if !reflect.DeepEqual(withoutRunID(got), withoutRunID(want)) {
			t.Fatalf("%s: the records with a restart differ from those without, beyond runId", q)
		}
		before := firstBatchAtOrAfter(t, want, sc.Start.Add(time.Minute))
		if before == 0 {
			t.Fatal("the fault comes before the first batch; the test needs it later")
		}
		k := int64(-1)
		for i, r := range got {
			if n, _ := r["numInputRows"].(json.Number).Int64(); n > 0 {
				k++
			}
			newRun := r["runId"] != got[0]["runId"]
			if newRun != (k >= before) || r["id"] != got[0]["id"] {
				t.Fatalf("%s: record %d (batch file %d): id %v runId %v; want a new runId from batch file %d on, the same id", q, i, k, r["id"], r["runId"], before)
			}
		}
		if m := readManifest(t, out); !reflect.DeepEqual(m.Faults, []Fault{{Before: before}}) {
			t.Errorf("faults %+v, want a restart before batch file %d", m.Faults, before)
		}
	}
	job, err := os.ReadFile(filepath.Join(out, jobFile))
	if err != nil {
		t.Fatal(err)
	}
	if m := readManifest(t, out); !strings.Contains(string(job), fmt.Sprintf("FAULTS = {%d: \"restart\"}", m.Faults[0].Before)) {
		t.Errorf("job.py does not list the restart before batch file %d", m.Faults[0].Before)
	}
}

// A lost checkpoint starts each query again on a new, empty checkpoint:
// Spark knows it as a new query, NAME~2, with its own id, batch ids from
// 0, an empty state and the watermark back at the epoch. Before the loss
// the records are those of the export without it.
func TestLostCheckpointStartsANewQuery(t *testing.T) {
	plain, _ := exportScenario(t, loadScenario(t, fmt.Sprintf(small, "uuid")), Parquet)
	sc := loadScenario(t, withFaults("  - {at: 1m, kind: lose-checkpoint}\n"))
	out, sum := exportScenario(t, sc, Parquet)
	want := readRecords(t, filepath.Join(plain, expectedDir, "within.jsonl"))
	before := firstBatchAtOrAfter(t, want, sc.Start.Add(time.Minute))
	first := readRecords(t, filepath.Join(out, expectedDir, "within.jsonl"))
	second := readRecords(t, filepath.Join(out, expectedDir, "within~2.jsonl"))
	data := 0
	for _, r := range first {
		if n, _ := r["numInputRows"].(json.Number).Int64(); n > 0 {
			data++
		}
	}
	if int64(data) != before || !reflect.DeepEqual(first, want[:len(first)]) {
		t.Fatalf("before the loss: %d data batches, want %d, and the records of the export without it", data, before)
	}
	r0 := second[0]
	op := r0["stateOperators"].([]any)[0].(map[string]any)
	if r0["name"] != "within~2" || r0["batchId"] != json.Number("0") || r0["id"] == first[0]["id"] ||
		r0["eventTime"].(map[string]any)["watermark"] != "1970-01-01T00:00:00.000Z" || op["numRowsTotal"] != op["numRowsUpdated"] {
		t.Errorf("first record after the loss %v: want query within~2 (a new id), batch 0, watermark at the epoch, an empty state before it", r0)
	}
	for i, r := range second {
		if r["batchId"] != json.Number(fmt.Sprint(i)) || r["name"] != "within~2" {
			t.Fatalf("record %d after the loss: batch %v of %v", i, r["batchId"], r["name"])
		}
	}
	if q := sum.Queries[0]; !reflect.DeepEqual(q.Names, []string{"within", "within~2"}) {
		t.Errorf("query names %v, want within and within~2", q.Names)
	}
	if !reflect.DeepEqual(sum.Faults, []Fault{{Before: before, Lose: true}}) {
		t.Errorf("faults %+v, want a lost checkpoint before batch file %d", sum.Faults, before)
	}
}

// Faults that fire at the first batch's trigger or before change nothing
// Spark would report: they are left out.
func TestFaultsBeforeTheFirstBatchAreLeftOut(t *testing.T) {
	plain, _ := exportScenario(t, loadScenario(t, fmt.Sprintf(small, "uuid")), Parquet)
	out, sum := exportScenario(t, loadScenario(t, withFaults("  - {at: 1s, kind: lose-checkpoint}\n  - {at: 5s, kind: restart}\n")), Parquet)
	if len(sum.Faults) != 0 || len(sum.Queries[0].Names) != 1 {
		t.Fatalf("faults %+v, names %v; want none, one name", sum.Faults, sum.Queries[0].Names)
	}
	want := readRecords(t, filepath.Join(plain, expectedDir, "within.jsonl"))
	got := readRecords(t, filepath.Join(out, expectedDir, "within.jsonl"))
	if !reflect.DeepEqual(got, want) {
		t.Error("the records differ from the export without the faults")
	}
}
