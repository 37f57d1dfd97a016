package registry

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/enginetrace/casetest"
)

// TestEnginesComplete checks that every engine has a unique name, a
// summary of one line, a replay and an explainer, and that Spark, the
// default, claims nothing by itself.
func TestEnginesComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Engines() {
		if e.Name == "" || seen[e.Name] {
			t.Errorf("engine name %q empty or twice", e.Name)
		}
		seen[e.Name] = true
		if e.Summary == "" || strings.Contains(e.Summary, "\n") || e.Replay == nil || e.Explainer == nil {
			t.Errorf("%s: want a one-line summary, a replay and an explainer", e.Name)
		}
	}
	if sp, err := Lookup(Spark); err != nil || sp.Claims != nil {
		t.Errorf("Spark: %v; it must take what no engine claims, not claim itself", err)
	}
}

// TestForDocument checks which engine a trace's "engine" key picks: none
// (or not a JSON object, or not a string) is Spark, an unknown one is an
// error listing the engines.
func TestForDocument(t *testing.T) {
	for doc, want := range map[string]string{
		`{"steps": []}`:                   Spark,
		`not JSON`:                        Spark,
		`[1, 2]`:                          Spark,
		`{"engine": 5}`:                   Spark,
		`{"engine": ""}`:                  Spark,
		`{"engine": "spark"}`:             Spark,
		`{"engine": "flink"}`:             "flink",
		`{"engine": "kafka-streams"}`:     "kafka-streams",
		`{"steps": [], "engine": "beam"}`: "beam",
		`{"engine": "beam", "steps": [}`:  Spark, // broken JSON: Spark's loader says where
	} {
		e, err := ForDocument([]byte(doc))
		if err != nil || e.Name != want {
			t.Errorf("%s: engine %q, err %v; want %q", doc, e.Name, err, want)
		}
	}
	_, err := ForDocument([]byte(`{"engine": "storm"}`))
	if err == nil || !strings.Contains(err.Error(), `engine: "storm"`) || !strings.Contains(err.Error(), `"flink", "kafka-streams", "beam"`) {
		t.Errorf("unknown engine: err %v, want one naming it and listing the engines", err)
	}
}

// TestForQuery checks explain's dispatch: a JSON object by its "engine"
// key, SQL text to Flink, anything else (a PySpark chain) to Spark.
func TestForQuery(t *testing.T) {
	for q, want := range map[string]string{
		`dropDuplicates(["id"])`:                                          Spark,
		`withWatermark("ts", "1 hour").dropDuplicates()`:                  Spark,
		`[{"op": "dropDuplicates"}]`:                                      Spark,
		`  select * from t`:                                               "flink",
		`SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY pt) AS rn)`: "flink",
		`{"engine": "kafka-streams", "window": "2 minutes"}`:              "kafka-streams",
		`{"engine": "beam"}`:                                              "beam",
		`{"engine": "flink"}`:                                             "flink",
		`{"engine": 5}`:                                                   Spark,
	} {
		e, err := ForQuery(q)
		if err != nil || e.Name != want {
			t.Errorf("%s: engine %q, err %v; want %q", q, e.Name, err, want)
		}
	}
	if _, err := ForQuery(`{"engine": "storm"}`); err == nil || !strings.Contains(err.Error(), `"storm"`) {
		t.Errorf("unknown engine: err %v", err)
	}
}

// TestReplay runs one case of every engine through Replay: the file's
// engine is found and its output is what the engine's own replay
// publishes.
func TestReplay(t *testing.T) {
	for name, path := range map[string]string{
		Spark:           "../spark/replay/testdata/conformance/own-seed-within-watermark-drops-second-copy.json",
		"flink":         "../flink/testdata/own-proctime-keep-first-ttl-from-first-copy.json",
		"kafka-streams": "../kstreams/testdata/cases/own-stream-time-horizon-is-half-the-window.json",
		"beam":          "../beam/testdata/cases/own-event-time-timer-from-the-watermark.json",
	} {
		e, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := casetest.Output(path, e.Replay)
		if err != nil || len(want) == 0 {
			t.Fatalf("%s: %d bytes, err %v", path, len(want), err)
		}
		var got bytes.Buffer
		if err := Replay(context.Background(), path, &got); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: Replay wrote\n%s\nwant (the %s replay)\n%s", path, got.Bytes(), name, want)
		}
	}
}

// TestReplayErrors checks that a bad trace, an unknown engine or a
// missing file is one line naming the file, and nothing is written.
func TestReplayErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ trace, want string }{
		"storm.json": {`{"engine": "storm", "steps": []}`, `engine: "storm" is not an engine`},
		"ks.json":    {`{"engine": "kafka-streams", "window": "2 minutes", "time": "wall", "steps": []}`, `time: "wall"`},
		"flink.json": {`{"engine": "flink", "steps": []}`, "query: missing"},
		"spark.json": {`{"steps": []}`, "query: missing"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.trace), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := Replay(context.Background(), path, &out)
		if err == nil || out.Len() != 0 || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, %d bytes written; want one line naming the file and %q", name, err, out.Len(), c.want)
		}
	}
	missing := filepath.Join(dir, "missing.json")
	if err := Replay(context.Background(), missing, &bytes.Buffer{}); err == nil || !strings.HasPrefix(err.Error(), missing+": ") {
		t.Errorf("missing file: err %v", err)
	}
}

// flagSet records the flags the engines bind; a name bound twice is a
// clash between two engines' explain flags.
type flagSet struct {
	t     *testing.T
	names map[string]bool
}

func (f *flagSet) add(name string) {
	if f.names[name] {
		f.t.Errorf("flag --%s bound twice", name)
	}
	f.names[name] = true
}
func (f *flagSet) StringVar(p *string, name, value, _ string) { *p = value; f.add(name) }
func (f *flagSet) BoolVar(p *bool, name string, value bool, _ string) {
	*p = value
	f.add(name)
}
func (f *flagSet) StringArrayVar(p *[]string, name string, value []string, _ string) {
	*p = value
	f.add(name)
}

// TestExplainer checks that the engines' explain flags do not clash and
// that a query reaches its own engine's explain: a Spark chain is not
// taken by Kafka Streams or Beam, and each object by its own engine.
func TestExplainer(t *testing.T) {
	fs := &flagSet{t: t, names: map[string]bool{}}
	x := NewExplainer(fs)
	for _, name := range []string{"columns", "generated", "option", "flink-version", "proctime", "rowtime", "update-before"} {
		if !fs.names[name] {
			t.Errorf("flag --%s not bound", name)
		}
	}
	for q, want := range map[string]string{
		`dropDuplicates(["id"])`: "== Physical Plan (sink first) ==",
		`{"engine": "kafka-streams", "window": "2 minutes", "time": "stream"}`:                                                      "kafka-streams keep-first",
		`{"engine": "beam", "timeDomain": "event", "duration": "1 minute"}`:                                                         "beam Deduplicate",
		`SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1`: "Flink 2.",
	} {
		var b strings.Builder
		if err := x.Explain(&b, q); err != nil || !strings.Contains(b.String(), want) {
			t.Errorf("%s: err %v, output\n%s\nwant %q", q, err, b.String(), want)
		}
	}
	var b strings.Builder
	if err := x.Explain(&b, `{"engine": "kafka-streams"}`); err == nil || !strings.Contains(err.Error(), "window: missing") || b.Len() != 0 {
		t.Errorf("a bad Kafka Streams query: err %v, output %q", err, b.String())
	}
}
