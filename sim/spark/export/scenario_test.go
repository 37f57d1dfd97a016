package export

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/runner"
)

// small is a scenario of some thousand rows with everything a batch can
// hold: retries with their own attempt and ingest_time, bad clocks,
// heartbeats, and a stall that leaves triggers without rows.
const small = `
name: small
seed: 7
duration: 4m
trigger: 5s
workload:
  profile:
    - {for: 1m, rate: 20/s}
    - {for: 1m, rate: 0}
  ids: %s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.2
    copies: {dist: constant, value: 2}
    delay: {dist: uniform, min: 1s, max: 20s}
    timestamp: restamp
  futureTimestamps:
    probability: 0.01
    skew: {dist: uniform, min: 1m, max: 2m}
  heartbeat: 30s
queries:
  - name: within
    query: withWatermark("event_time", "20 seconds").dropDuplicatesWithinWatermark(["event_id"])
  - name: pair
    query: events.withWatermark("event_time", "20 seconds").dropDuplicates(["event_id", "event_time"])
`

// schemaLines describes the leaves of a Parquet file's schema as its
// footer holds them: repetition, physical type, name, logical type.
func schemaLines(f *parquet.File) []string {
	var out []string
	for _, e := range f.Metadata().Schema[1:] {
		typ, _ := e.Type.Get()
		rep, _ := e.RepetitionType.Get()
		lt := e.LogicalType.String()
		out = append(out, fmt.Sprintf("%s %s %s %s", rep, typ, e.Name, lt))
	}
	return out
}

// generated returns the scenario's rows, in the generator's order.
func generated(t *testing.T, yaml string) []generators.Row {
	t.Helper()
	g, err := generators.New(loadScenario(t, yaml).Generator())
	if err != nil {
		t.Fatal(err)
	}
	var rows []generators.Row
	var r generators.Row
	for g.Next(&r) {
		rows = append(rows, r)
	}
	return rows
}

// Parquet batch files hold the generated rows, all of them, in order, with
// the columns, physical and logical types Spark needs (timestamps INT64
// TIMESTAMP(MICROS) adjusted to UTC), one row group each; their names
// sort in batch order.
func TestParquetBatchesHoldTheGeneratedRows(t *testing.T) {
	for _, ids := range []string{"uuid", "int"} {
		t.Run(ids, func(t *testing.T) {
			yaml := fmt.Sprintf(small, ids)
			out, sum := exportScenario(t, loadScenario(t, yaml), Parquet)
			idType := "REQUIRED BYTE_ARRAY event_id STRING"
			if ids == "int" {
				idType = "REQUIRED INT64 event_id INT(64,true)"
			}
			wantSchema := []string{
				idType,
				"REQUIRED INT64 customer_id INT(64,true)",
				"REQUIRED INT64 event_time TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)",
				"REQUIRED INT64 ingest_time TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)",
				"REQUIRED INT32 attempt INT(32,true)",
				"REQUIRED INT64 payload INT(64,true)",
			}
			gen := generated(t, yaml)
			entries, err := os.ReadDir(filepath.Join(out, batchesDir))
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(entries)) != sum.Batches || sum.Batches < 20 {
				t.Fatalf("%d batch files, summary says %d; want some 20 or more", len(entries), sum.Batches)
			}
			k := 0
			for i, e := range entries {
				if e.Name() != fmt.Sprintf("batch-%09d.parquet", i) {
					t.Fatalf("batch file %d is named %s", i, e.Name())
				}
				f, rows := readParquet(t, filepath.Join(out, batchesDir, e.Name()))
				if got := schemaLines(f); !slices.Equal(got, wantSchema) {
					t.Fatalf("%s: schema\n%s\nwant\n%s", e.Name(), strings.Join(got, "\n"), strings.Join(wantSchema, "\n"))
				}
				if n := len(f.RowGroups()); n != 1 {
					t.Errorf("%s: %d row groups, want 1", e.Name(), n)
				}
				for c, ch := range f.Metadata().RowGroups[0].Columns {
					for _, st := range ch.MetaData.EncodingStats {
						if st.PageType != format.DataPage || st.Encoding != format.Plain {
							t.Errorf("%s: column %d has %s pages in %s, want DATA_PAGE (v1) in PLAIN, which every Spark reads", e.Name(), c, st.PageType, st.Encoding)
						}
					}
				}
				if len(rows) == 0 {
					t.Errorf("%s: no rows: a trigger without rows gets no file", e.Name())
				}
				for _, row := range rows {
					if k >= len(gen) {
						t.Fatalf("the batch files hold more rows than the generator's %d", len(gen))
					}
					checkRow(t, e.Name(), row, &gen[k], ids == "int")
					k++
				}
			}
			if k != len(gen) || int64(k) != sum.Rows {
				t.Errorf("batch files hold %d rows (summary %d), the generator %d", k, sum.Rows, len(gen))
			}
		})
	}
}

// checkRow compares a row read back with the generated one.
func checkRow(t *testing.T, file string, row parquet.Row, g *generators.Row, intIDs bool) {
	t.Helper()
	var id any = string(g.EventID[:])
	got := []any{row[0].String(), row[1].Int64(), row[2].Int64(), row[3].Int64(), row[4].Int32(), row[5].Int64()}
	if intIDs {
		id, got[0] = g.EventNum, row[0].Int64()
	}
	want := []any{id, g.CustomerID, g.EventTime, g.IngestTime, int32(g.Attempt), g.Payload}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: row %v, want %v", file, got, want)
	}
}

// JSON batch files hold the same rows: every column, timestamps as
// ISO-8601 in UTC with microseconds that parse back to the exact instant.
func TestJSONBatchesHoldTheGeneratedRows(t *testing.T) {
	yaml := fmt.Sprintf(small, "uuid")
	out, _ := exportScenario(t, loadScenario(t, yaml), JSON)
	gen := generated(t, yaml)
	entries, err := os.ReadDir(filepath.Join(out, batchesDir))
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for i, e := range entries {
		if e.Name() != fmt.Sprintf("batch-%09d.json", i) {
			t.Fatalf("batch file %d is named %s", i, e.Name())
		}
		for _, m := range readJSONLines(t, filepath.Join(out, batchesDir, e.Name())) {
			g := &gen[k]
			k++
			if len(m) != 6 {
				t.Fatalf("%s: row %v has %d columns, want 6", e.Name(), m, len(m))
			}
			for col, want := range map[string]int64{"event_time": g.EventTime, "ingest_time": g.IngestTime} {
				s, _ := m[col].(string)
				ts, err := time.Parse(time.RFC3339Nano, s)
				if err != nil || ts.UnixMicro() != want || !strings.HasSuffix(s, "Z") || len(s) != len("2026-01-01T00:00:00.000000Z") {
					t.Fatalf("%s: %s %q (%v), want %s", e.Name(), col, s, err, time.UnixMicro(want).UTC().Format(jsonTimeLayout))
				}
			}
			got := fmt.Sprintf("%v %v %v %v", m["event_id"], m["customer_id"], m["attempt"], m["payload"])
			if want := fmt.Sprintf("%s %d %d %d", g.EventID[:], g.CustomerID, g.Attempt, g.Payload); got != want {
				t.Fatalf("%s: row %s, want %s", e.Name(), got, want)
			}
		}
	}
	if k != len(gen) {
		t.Errorf("batch files hold %d rows, the generator %d", k, len(gen))
	}
}

// The batches are those `simulate run` forms: the runner's data batches,
// at the same trigger times with the same numbers of rows, are the batch
// files in order (the prediction's data records carry the trigger times):
// for a bad-clock fault (a row, never a restart), and for a spark: block's
// maxRowsPerBatch (a backlog taken in capped batches) and downtime (an
// off-lattice trigger at its end).
func TestBatchesAreTheRunnersBatches(t *testing.T) {
	base := fmt.Sprintf(small, "uuid")
	// One query, on a cluster whose batches last 60 ms a row: about 6 s
	// for a trigger's 100 rows, more than the 5 s trigger, so batches
	// overrun and the next trigger fires when the batch ends.
	one := base[:strings.Index(base, "  - name: pair")]
	slow := "spark:\n  partitions: 1\n  cost: {batchOverheadMs: 100, rowNs: 6e7, newKeyNs: 0, scanKeyNs: 0, removeKeyNs: 0, partitionCommitMs: 0}\n"
	for _, c := range []struct{ name, yaml string }{
		{"plain", base},
		{"bad-clock", base + "faults:\n  - {at: 50s, kind: bad-clock, skew: 1m}\n"},
		{"spark", base + "spark:\n  partitions: 4\n  maxRowsPerBatch: 30\n  downtime:\n    - {at: 32s, for: 41s}\n"},
		{"spark-cost-overrun", one + slow + "faults:\n  - {at: 70s, kind: restart}\n  - {at: 100s, kind: lose-checkpoint}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, c.yaml)
			out, sum := exportScenario(t, sc, Parquet)
			res := filepath.Join(t.TempDir(), "results")
			rs, err := runner.RunTo(context.Background(), sc, runner.Options{Workers: 1}, res, nil)
			if err != nil {
				t.Fatal(err)
			}
			if restarts := rs.Summary.Queries[0].Restarts; restarts != int64(len(sum.Faults)) {
				t.Errorf("the run restarted its queries %d times, the export has faults %v", restarts, sum.Faults)
			}
			type batchAt struct {
				ts   string
				rows float64
			}
			var ran []batchAt
			for _, l := range readRecords(t, filepath.Join(res, "progress", "within.jsonl")) {
				if l["noData"] == false {
					n, _ := l["numInputRows"].(json.Number).Float64()
					ran = append(ran, batchAt{l["timestamp"].(string), n})
				}
			}
			var exported []batchAt
			for _, name := range sum.Queries[0].Names { // within, then within~2, ... after lost checkpoints
				for _, r := range readRecords(t, filepath.Join(out, expectedDir, name+".jsonl")) {
					if n, _ := r["numInputRows"].(json.Number).Float64(); n > 0 {
						exported = append(exported, batchAt{r["timestamp"].(string), n})
					}
				}
			}
			entries, _ := os.ReadDir(filepath.Join(out, batchesDir))
			if len(ran) < 10 || len(exported) != len(entries) {
				t.Fatalf("the runner ran %d data batches, the prediction has %d, with %d batch files", len(ran), len(exported), len(entries))
			}
			for i, e := range entries {
				if n := countRows(t, filepath.Join(out, batchesDir, e.Name()), Parquet); float64(n) != exported[i].rows {
					t.Fatalf("%s holds %d rows, its predicted batch %v", e.Name(), n, exported[i])
				}
			}
			if !slices.Equal(ran, exported) {
				t.Errorf("the runner's data batches\n%v\nthe export's\n%v", ran, exported)
			}
		})
	}
}
