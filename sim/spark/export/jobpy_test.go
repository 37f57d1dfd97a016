package export

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// pythonChain applies a query as written when it is PySpark's own form,
// the receiver replaced by df, and sim/spark/chain's rendering otherwise.
func TestPythonChain(t *testing.T) {
	for _, c := range []struct {
		text, apply string
		verbatim    bool
	}{
		{`withWatermark("t", "10 seconds").dropDuplicates(["id", "t"])`, `df.withWatermark("t", "10 seconds").dropDuplicates(["id", "t"])`, true},
		{`events.withWatermark("t", "1 minute").dropDuplicatesWithinWatermark(["id"])`, `df.withWatermark("t", "1 minute").dropDuplicatesWithinWatermark(["id"])`, true},
		{`.dropDuplicates()`, `df.dropDuplicates()`, true},
		{"df\n  .withWatermark(\"t\", \"1 second\")\n  .dropDuplicates([\"id\"])", "(df.withWatermark(\"t\", \"1 second\")\n        .dropDuplicates([\"id\"]))", true},
		{`dropDuplicates("_1")`, `df.dropDuplicates(["_1"])`, false},
		{`dropDuplicates(subset=["id"])`, `df.dropDuplicates(["id"])`, false},
		{`dropDuplicates(['id'])`, `df.dropDuplicates(["id"])`, false},
		{`distinct()`, `df.dropDuplicates()`, false},
		{`deduped = df.dropDuplicates(["id"])`, `df.dropDuplicates(["id"])`, false},
		{`self.events.dropDuplicates(["id"])`, `df.dropDuplicates(["id"])`, false},
		{`dropDuplicates(Seq("id"))`, `df.dropDuplicates(["id"])`, false},
		{"dropDuplicates([\"id\"])  # keys", `df.dropDuplicates(["id"])`, false},
		{`[{"op": "dropDuplicates", "keys": ["id"]}]`, `df.dropDuplicates(["id"])`, false},
		{`dropDuplicates(["a b"])`, `df.dropDuplicates(["a b"])`, true},
		{`dropDuplicates(["ab"])`, `df.dropDuplicates(["ab"])`, true},
	} {
		ch, err := chain.Parse(c.text)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		apply, verbatim := pythonChain(c.text, ch)
		if apply != c.apply || verbatim != c.verbatim {
			t.Errorf("%q: %q (verbatim %v), want %q (%v)", c.text, apply, verbatim, c.apply, c.verbatim)
		}
	}
	// White space inside a string is the string's: "a b" is not "ab".
	ch, _ := chain.Parse(`dropDuplicates(["ab"])`)
	if _, verbatim := pythonChain(`dropDuplicates(["a b"])`, ch); verbatim {
		t.Error(`dropDuplicates(["a b"]) taken for dropDuplicates(["ab"])`)
	}
}

// forms is a scenario whose queries take the forms pythonChain treats,
// with both faults, a sweep (NAME@DELAY) and the Pebble store.
const forms = `
name: forms
duration: 2m
trigger: 10s
store: pebble
noDataMicroBatches: false
workload:
  rate: 5/s
  ids: int
queries:
  - name: plain
    query: withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])
  - name: receiver
    query: |
      events
        .withWatermark("ingest_time", "30 seconds")
        .dropDuplicatesWithinWatermark(["event_id"])
  - name: scala
    query: dropDuplicates("customer_id", "attempt")
  - name: structured
    query: '[{"op": "dropDuplicates", "keys": ["payload"]}]'
faults:
  - {at: 30s, kind: restart}
  - {at: 1m, kind: lose-checkpoint}
sweep:
  delay: [20s, 1m]
`

// job.py names every query and its chain (as written, or rendered with the
// text quoted), the exact schema, the batch count, the faults, the Spark
// settings, the per-batch feeding with processAllAvailable, the restarts,
// the noop sink and the listener.
func TestJobPyReadsBack(t *testing.T) {
	out, sum := exportScenario(t, loadScenario(t, forms), JSON)
	data, err := os.ReadFile(filepath.Join(out, jobFile))
	if err != nil {
		t.Fatal(err)
	}
	job := string(data)
	var want []string
	for _, q := range sum.Queries {
		want = append(want, fmt.Sprintf("(%q, lambda df: %s),", q.Name, q.Apply))
		for _, l := range strings.Split(strings.TrimSpace(q.Text), "\n") {
			want = append(want, "#   "+strings.TrimRight(l, " "))
		}
	}
	want = append(want,
		`StructField("event_id", LongType()),`,
		`StructField("customer_id", LongType()),`,
		`StructField("event_time", TimestampType()),`,
		`StructField("ingest_time", TimestampType()),`,
		`StructField("attempt", IntegerType()),`,
		`StructField("payload", LongType()),`,
		`FORMAT = "json"`,
		`READ_OPTIONS = {"maxFilesPerTrigger": "1", "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX", "mode": "FAILFAST"}`,
		fmt.Sprintf("BATCHES = %d ", sum.Batches),
		fmt.Sprintf(`FAULTS = {%d: "restart", %d: "lose-checkpoint"}`, sum.Faults[0].Before, sum.Faults[1].Before),
		`"spark.sql.streaming.noDataMicroBatches.enabled": "false",`,
		`"spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",`,
		`spark.readStream.schema(SCHEMA).format(FORMAT).options(**READ_OPTIONS).load(folder)`,
		`chain(df).writeStream.format("noop").queryName(name)`,
		`.option("checkpointLocation", args.checkpoint + "/" + name))`,
		`w = w.trigger(once=True)`,
		`feed(spark, local, current, args)`,
		`query.processAllAvailable()`,
		`fault = FAULTS.get(k)`,
		`stop(query, listener)`,
		`query = start(spark, current, chain, args)`,
		`current = "%s~%d" % (name, gen)`,
		`class ProgressWriter(StreamingQueryListener):`,
		`def onQueryProgress(self, event):`,
		`self.out.write(json.dumps(json.loads(event.progress.json)) + "\n")`,
		`spark.streams.addListener(listener)`,
		`ap.add_argument("--input"`, `ap.add_argument("--checkpoint"`, `ap.add_argument("--progress-out"`, `ap.add_argument("--spark-conf"`,
	)
	for _, w := range want {
		if !strings.Contains(job, w) {
			t.Errorf("job.py lacks %q", w)
		}
	}
	if len(sum.Queries) != 6 {
		t.Fatalf("%d queries, want 6 (plain and receiver twice with the sweep, scala, structured)", len(sum.Queries))
	}
	verbatim := map[string]bool{}
	for _, q := range sum.Queries {
		verbatim[q.Name] = q.Verbatim
	}
	wantVerbatim := map[string]bool{"plain@20s": true, "plain@1m": true, "receiver@20s": true, "receiver@1m": true, "scala": false, "structured": false}
	for n, v := range wantVerbatim {
		if verbatim[n] != v {
			t.Errorf("query %s: verbatim %v, want %v", n, verbatim[n], v)
		}
	}
	if !strings.Contains(job, "lambda df: df.dropDuplicates([\"customer_id\", \"attempt\"])") {
		t.Error("the Scala form is not rendered as PySpark's")
	}
}

// job.py is Python that compiles, and Python's own parser reads back the
// schema, the batch count, the faults and every query's chain from it:
// the lambdas apply exactly the exported expressions.
func TestJobPyCompiles(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: job.py's syntax is not checked here (TestJobPyReadsBack still reads it)")
	}
	for _, f := range []Format{Parquet, JSON} {
		out, sum := exportScenario(t, loadScenario(t, forms), f)
		path := filepath.Join(out, jobFile)
		if msg, err := exec.Command(py, "-m", "py_compile", path).CombinedOutput(); err != nil {
			t.Fatalf("py_compile: %v: %s", err, msg)
		}
		const script = `
import ast, json, sys
src = open(sys.argv[1]).read()
tree = ast.parse(src)
out = {}
for node in tree.body:
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        name = node.targets[0].id
        if name == "QUERIES":
            out[name] = [[e.elts[0].value, ast.get_source_segment(src, e.elts[1].body)] for e in node.value.elts]
        elif name == "SCHEMA":
            out[name] = [[f.args[0].value, f.args[1].func.id] for f in node.value.args[0].elts]
        elif name in ("BATCHES", "FAULTS", "FORMAT", "READ_OPTIONS", "SPARK_CONF"):
            out[name] = ast.literal_eval(node.value)
print(json.dumps(out))
`
		res, err := exec.Command(py, "-c", script, path).Output()
		if err != nil {
			t.Fatalf("reading job.py with Python: %v", err)
		}
		var got struct {
			QUERIES      [][2]string
			SCHEMA       [][2]string
			BATCHES      int64
			FAULTS       map[string]string
			FORMAT       string
			READ_OPTIONS map[string]string
			SPARK_CONF   map[string]string
		}
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatalf("%v: %s", err, res)
		}
		var queries [][2]string
		for _, q := range sum.Queries {
			queries = append(queries, [2]string{q.Name, q.Apply})
		}
		schema := [][2]string{{"event_id", "LongType"}, {"customer_id", "LongType"}, {"event_time", "TimestampType"},
			{"ingest_time", "TimestampType"}, {"attempt", "IntegerType"}, {"payload", "LongType"}}
		faults := map[string]string{fmt.Sprint(sum.Faults[0].Before): "restart", fmt.Sprint(sum.Faults[1].Before): "lose-checkpoint"}
		if !reflect.DeepEqual(got.QUERIES, queries) || !reflect.DeepEqual(got.SCHEMA, schema) || got.BATCHES != sum.Batches ||
			!reflect.DeepEqual(got.FAULTS, faults) || got.FORMAT != string(f) {
			t.Errorf("Python reads back\n%+v\nwant queries %v, schema %v, %d batches, faults %v, format %s", got, queries, schema, sum.Batches, faults, f)
		}
		for _, c := range sparkConf(&spec{kind: "scenario", store: "pebble", provider: rocksDBProvider, partitions: 200}, f) {
			if got.SPARK_CONF[c.Key] != c.Value {
				t.Errorf("SPARK_CONF[%s] = %q, want %q", c.Key, got.SPARK_CONF[c.Key], c.Value)
			}
		}
	}
}
