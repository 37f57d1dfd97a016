package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const enginesScenario = smallScenario + `  - name: kstreams
    engine: kafka-streams
    window: 20 seconds
    time: stream
  - name: beam
    engine: beam
    timeDomain: processing
    duration: 5 seconds
`

// TestRunWithKafkaStreamsAndBeamQueries runs a scenario with Spark, Kafka
// Streams and Beam queries: the results folder has each query's progress
// file and summary entry (its engine, the same rows and ground truth as
// Spark's, copies past the short horizons missed, the engine's own
// counters), two runs with different workers write the same bytes, a
// sweep runs the Kafka Streams and Beam queries once per delay, as the
// swept Spark query (TestSweepEveryEnginesHorizon), report redraws the folder, and plan, export, bench-stores
// and --checkpoint refuse them in one line, writing nothing.
func TestRunWithKafkaStreamsAndBeamQueries(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "engines.yaml")
	if err := os.WriteFile(sc, []byte(enginesScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	var files [2][]byte
	for i, out := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")} {
		code, stdout, errs := simulate(t, "run", sc, "--out", out, "--quiet", "--workers", []string{"1", "2"}[i])
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(stdout, "kstreams") || !strings.Contains(stdout, "beam") {
			t.Fatalf("table lacks the kafka-streams or beam query:\n%s", stdout)
		}
		for _, f := range []string{"timeseries.csv", "progress/kstreams.jsonl", "progress/beam.jsonl"} {
			data, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			files[i] = append(files[i], data...)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("timeseries.csv or a progress file differs between two runs of the same file and seed")
	}
	var sum struct {
		Queries []struct {
			Name, Engine, Store, Query                              string
			InputRows, TrueDuplicates, MissedDuplicates, FalseDrops int64
			DroppedDuplicates, PeakStateRows                        int64
			EngineCounters                                          map[string]int64
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "a", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	spark := sum.Queries[1]
	for _, c := range []struct{ name, engine, store, counter string }{
		{"kstreams", "kafka-streams", "rocksdb-window-store", "droppedRecordsTotal"},
		{"beam", "beam", "direct-runner", "timersFired"},
	} {
		i := map[string]int{"kstreams": 2, "beam": 3}[c.name]
		q := sum.Queries[i]
		if q.Name != c.name || q.Engine != c.engine || q.Store != c.store || !strings.HasPrefix(q.Query, `{"engine":"`+c.engine) {
			t.Errorf("queries[%d]: %s, engine %q, store %q, query %s; want %s on %s", i, q.Name, q.Engine, q.Store, q.Query, c.engine, c.store)
		}
		if q.InputRows != spark.InputRows || q.TrueDuplicates != spark.TrueDuplicates || q.MissedDuplicates == 0 || q.FalseDrops != 0 || q.DroppedDuplicates == 0 || q.PeakStateRows == 0 {
			t.Errorf("%s: %d rows, %d true duplicates (Spark's %d, %d), %d missed, %d false drops, %d dropped, peak %d; want the same rows, some copies past the horizon missed, none lost",
				q.Name, q.InputRows, q.TrueDuplicates, spark.InputRows, spark.TrueDuplicates, q.MissedDuplicates, q.FalseDrops, q.DroppedDuplicates, q.PeakStateRows)
		}
		if _, ok := q.EngineCounters[c.counter]; !ok || q.EngineCounters["peakPhysicalStateRows"] < q.PeakStateRows {
			t.Errorf("%s: engineCounters %v, want %s and the physical peak at least the logical %d", q.Name, q.EngineCounters, c.counter, q.PeakStateRows)
		}
	}
	if code, _, errs := simulate(t, "report", filepath.Join(dir, "a")); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}

	sweep := filepath.Join(dir, "sweep")
	if code, _, errs := simulate(t, "sweep", sc, "--delay", "30s,1m", "--quiet", "--out", sweep); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	for _, f := range []string{"progress/within@30s.jsonl", "progress/within@1m.jsonl", "progress/kstreams@30s.jsonl", "progress/beam@1m.jsonl"} {
		if _, err := os.Stat(filepath.Join(sweep, f)); err != nil {
			t.Errorf("sweep: missing %s", f)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", sc, "--query", "kstreams", "--seeds", "1", "-q", "--partitions", "4"}, `--partitions: sizes a Spark cluster; "kstreams" is a kafka-streams query`},
		{[]string{"plan", sc, "--query", "beam", "--seeds", "1", "-q", "--out", filepath.Join(dir, "refused")}, `--out: the review document is Spark's (state store, cluster, watermark); "beam" is a beam query`},
		{[]string{"export", sc, "--out", filepath.Join(dir, "refused")}, "query kstreams: a kafka-streams query cannot be exported as a PySpark job"},
		{[]string{"bench-stores", sc, "--out", filepath.Join(dir, "refused"), "--quiet"}, "queries[2]: bench-stores compares the simulator's state stores; a kafka-streams query keeps its state in its engine's model"},
		{[]string{"run", sc, "--out", filepath.Join(dir, "refused"), "--quiet", "--checkpoint", filepath.Join(dir, "ck")}, "queries kstreams: a kafka-streams query cannot yet run in a resumable run (--checkpoint)"},
	} {
		code, _, errs := simulate(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d, %q; want one line containing %q", c.args[0], code, errs, c.want)
		}
	}
	for _, p := range []string{"refused", "ck"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s was written", p)
		}
	}
}
