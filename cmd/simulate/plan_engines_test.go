package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flinkQueries are plan-spark.yaml's extra queries: a Flink rowtime
// keep-first query with a state TTL (Flink 2.0, which drops no row behind
// the watermark) and a Beam processing-time dedup.
const flinkQueries = `  - name: flink-rowtime
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ASC) AS rn FROM events) WHERE rn = 1
    options: {table.exec.state.ttl: 1 min, watermark: 10 s, version: "2.0"}
  - name: beam-processing
    engine: beam
    timeDomain: processing
    duration: 1 minute
`

// TestPlanFlinkText: simulate plan on a Flink query answers with its
// state TTL ("state TTL  NmNs recommended"), says there is no
// closed-form model for the engine, quotes no Spark state store, and
// its --json names the engine and the parameter.
func TestPlanFlinkText(t *testing.T) {
	sc := withBlock(t, flinkQueries)
	code, stdout, stderr := simulate(t, "plan", sc, "--query", "flink-rowtime", "--seeds", "1", "-q", "--max-missed-rate", "1%")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"plan for flink-rowtime in ", "  state TTL  ", " recommended (", "no closed-form model for this engine", "is the smallest state TTL meeting missed duplicates <= 1%"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, stdout)
		}
	}
	for _, bad := range []string{"HDFS", "  delay  ", "withWatermark"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("text has %q:\n%s", bad, stdout)
		}
	}
	t.Log(stdout)
	code, stdout, stderr = simulate(t, "plan", sc, "--query", "beam-processing", "--seeds", "1", "-q", "--max-missed-rate", "1%", "--json")
	if code != 0 {
		t.Fatalf("beam: exit %d: %s", code, stderr)
	}
	var j struct {
		Engine, Parameter string
		Rec               *float64 `json:"recommendedDelaySeconds"`
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatal(err)
	}
	if j.Engine != "beam" || j.Parameter != "duration" || j.Rec == nil {
		t.Errorf("beam --json: engine %q, parameter %q, recommended %v; want beam, duration, a value:\n%s", j.Engine, j.Parameter, j.Rec, stdout)
	}
}

// TestPlanRefusesSparkFlagsForOtherEngines: the flags that size a Spark
// cluster and the review document (--out, Spark-shaped) are refused in
// one line for a Flink query, and the memory budget for a Beam query
// (its state bytes are not modelled), before any simulation and writing
// nothing.
func TestPlanRefusesSparkFlagsForOtherEngines(t *testing.T) {
	sc := withBlock(t, flinkQueries)
	out := filepath.Join(t.TempDir(), "review")
	for _, c := range []struct {
		query string
		args  []string
		want  string
	}{
		{"flink-rowtime", []string{"--partitions", "4"}, "--partitions: sizes a Spark cluster"},
		{"flink-rowtime", []string{"--executors", "2"}, "--executors: sizes a Spark cluster"},
		{"flink-rowtime", []string{"--provider", "rocksdb"}, "--provider: sizes a Spark cluster"},
		{"beam-processing", []string{"--memory-budget", "1GiB"}, `--memory-budget: bounds modelled state bytes (Spark's state store, Flink's heap state); "beam-processing" is a beam query, whose state bytes are not modelled`},
		{"flink-rowtime", []string{"--out", out}, "--out: the review document is Spark's"},
	} {
		args := append([]string{"plan", sc, "--query", c.query, "--seeds", "1", "-q"}, c.args...)
		code, stdout, stderr := simulate(t, args...)
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 1 and one line with %q", c.args, code, stderr, stdout, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out %s written (%v)", out, err)
	}
}

// TestPlanFlinkMemoryBudget: --memory-budget applies to a Flink query's
// modelled heap state bytes: a budget of 1 KiB, below the bucket arrays
// alone (128 × 528 bytes), fails the plan (exit 2) naming the state TTL
// and saying the bytes are an estimate, not a JVM measurement.
func TestPlanFlinkMemoryBudget(t *testing.T) {
	sc := withBlock(t, flinkQueries)
	code, stdout, stderr := simulate(t, "plan", sc, "--query", "flink-rowtime", "--seeds", "1", "-q", "--max-missed-rate", "1%", "--memory-budget", "1KiB")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (over budget): %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"over budget: ", "is the smallest state TTL meeting", "modelled peak state (an estimate of Flink's heap or RocksDB backend, as the query sets it, not a measurement)",
		"No state TTL simulated fits it", "peak state <= 1.00 KiB", "  state TTL  none: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, stdout)
		}
	}
}
