package chain

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func wm(col, delay string, ms int64) Op {
	return Op{Kind: WithWatermark, Column: col, Delay: delay, DelayMs: ms}
}

func dd(keys ...string) Op { return dedup(DropDuplicates, keys) }

func ddw(keys ...string) Op { return dedup(DropDuplicatesWithinWatermark, keys) }

func dedup(kind OpKind, keys []string) Op {
	if len(keys) == 0 {
		return Op{Kind: kind, AllColumns: true}
	}
	return Op{Kind: kind, Keys: keys}
}

// parseCases are the query forms users paste, with the chain each means.
var parseCases = []struct {
	name string
	in   string
	want []Op
}{
	// The conformance cases' queries (conformance/cases/*.json "query").
	{"conf/reversed", `df.dropDuplicates(["id", "eventTime"]).withWatermark("eventTime", "5 minutes")`,
		[]Op{dd("id", "eventTime"), wm("eventTime", "5 minutes", 300000)}},
	{"conf/multiple", `dropDuplicates().dropDuplicates("_1")`, []Op{dd(), dd("_1")}},
	{"conf/single-string", `dropDuplicates("_1")`, []Op{dd("_1")}},
	{"conf/within-all", `dropDuplicatesWithinWatermark()`, []Op{ddw()}},
	{"conf/events-dd", `events.withWatermark("event_time", "20 minutes").dropDuplicates(["id", "event_time"])`,
		[]Op{wm("event_time", "20 minutes", 1200000), dd("id", "event_time")}},
	{"conf/events-ddw", `events.withWatermark("event_time", "20 minutes").dropDuplicatesWithinWatermark(["id"])`,
		[]Op{wm("event_time", "20 minutes", 1200000), ddw("id")}},
	{"conf/10min", `withWatermark("eventTime", "10 minutes").dropDuplicates(["id", "eventTime"])`,
		[]Op{wm("eventTime", "10 minutes", 600000), dd("id", "eventTime")}},
	{"conf/all", `withWatermark("eventTime", "10 seconds").dropDuplicates()`,
		[]Op{wm("eventTime", "10 seconds", 10000), dd()}},
	{"conf/10s", `withWatermark("eventTime", "10 seconds").dropDuplicates(["id", "eventTime"])`,
		[]Op{wm("eventTime", "10 seconds", 10000), dd("id", "eventTime")}},
	{"conf/user", `withWatermark("eventTime", "10 seconds").dropDuplicates(["user"])`,
		[]Op{wm("eventTime", "10 seconds", 10000), dd("user")}},
	{"conf/within-id", `withWatermark("eventTime", "10 seconds").dropDuplicatesWithinWatermark(["id"])`,
		[]Op{wm("eventTime", "10 seconds", 10000), ddw("id")}},
	{"conf/within-_1", `withWatermark("eventTime", "2 seconds").dropDuplicatesWithinWatermark("_1")`,
		[]Op{wm("eventTime", "2 seconds", 2000), ddw("_1")}},
	{"conf/5s", `withWatermark("eventTime", "5 seconds").dropDuplicates(["id", "eventTime"])`,
		[]Op{wm("eventTime", "5 seconds", 5000), dd("id", "eventTime")}},
	{"conf/1s", `withWatermark("time", "1 second").dropDuplicates("id")`,
		[]Op{wm("time", "1 second", 1000), dd("id")}},

	// Receivers.
	{"receiver/spark_df", `spark_df.dropDuplicates(["a"])`, []Op{dd("a")}},
	{"receiver/dotted", `self.events.dropDuplicates(["a"])`, []Op{dd("a")}},
	{"receiver/unicode", `données.dropDuplicates(["a"])`, []Op{dd("a")}},
	{"receiver/leading-dot", `.withWatermark("t", "1 second").dropDuplicates()`, []Op{wm("t", "1 second", 1000), dd()}},
	{"receiver/assignment", `deduped = events.dropDuplicates(["a"])`, []Op{dd("a")}},
	{"receiver/parenthesised", `(events).dropDuplicates(["a"])`, []Op{dd("a")}},

	// Layout.
	{"layout/parens-newlines", "(events\n  .withWatermark(\"event_time\", \"20 minutes\")\n  .dropDuplicatesWithinWatermark([\"event_id\"]))",
		[]Op{wm("event_time", "20 minutes", 1200000), ddw("event_id")}},
	{"layout/double-parens", "((events\n.dropDuplicates()))", []Op{dd()}},
	{"layout/continuation", "df \\\n  .withWatermark(\"t\", \"1 second\") \\\n  .dropDuplicates()", []Op{wm("t", "1 second", 1000), dd()}},
	{"layout/continuation-crlf", "df \\\r\n  .dropDuplicates()", []Op{dd()}},
	{"layout/spaces", " df . withWatermark ( \"t\" , \"1 second\" ) . dropDuplicates ( [ \"a\" , \"t\" ] ) ", []Op{wm("t", "1 second", 1000), dd("a", "t")}},
	{"layout/newlines-no-parens", "df\n.dropDuplicates()\n.dropDuplicates([\"a\"])\n", []Op{dd(), dd("a")}},
	{"layout/comments", "(df  # the stream\n  .dropDuplicates([\"a\"])  # dedup\n)", []Op{dd("a")}},
	{"layout/nbsp-tabs", "df.\tdropDuplicates(\u00a0[\"a\"])", []Op{dd("a")}},
	{"layout/bom", "\ufeffdf.dropDuplicates()", []Op{dd()}},
	{"layout/semicolon", `df.dropDuplicates();`, []Op{dd()}},
	{"layout/trailing-commas", `withWatermark("t", "1 second",).dropDuplicates(["a", "b",],)`, []Op{wm("t", "1 second", 1000), dd("a", "b")}},
	{"layout/arg-on-lines", "df.dropDuplicates(\n    [\n        \"a\",\n        \"b\",\n    ]\n)", []Op{dd("a", "b")}},

	// Strings.
	{"string/single-quotes", `withWatermark('t', '1 second').dropDuplicates(['a'])`, []Op{wm("t", "1 second", 1000), dd("a")}},
	{"string/escaped-quote", `dropDuplicates(['it\'s', "say \"hi\""])`, []Op{dd("it's", `say "hi"`)}},
	{"string/escapes", `dropDuplicates(["a\\b", "\x41\u00e9\U0001F600", "\101", "tab\there", "\d"])`, []Op{dd(`a\b`, "Aé😀", "A", "tab\there", `\d`)}},
	{"string/raw", `dropDuplicates([r"a\b", R'c\'d'])`, []Op{dd(`a\b`, `c\'d`)}},
	{"string/unicode-prefix", `dropDuplicates([u"a"])`, []Op{dd("a")}},
	{"string/triple", `dropDuplicates(["""a"b""", '''c'''])`, []Op{dd(`a"b`, "c")}},
	{"string/concatenated", `withWatermark("event" "_time", "20 " 'minutes').dropDuplicates()`, []Op{wm("event_time", "20 minutes", 1200000), dd()}},
	{"string/continuation-inside", "dropDuplicates([\"ab\\\ncd\"])", []Op{dd("abcd")}},
	{"string/unicode-names", `dropDuplicates(["événement", "ид"])`, []Op{dd("événement", "ид")}},

	// withWatermark arguments.
	{"wm/keywords", `withWatermark(eventTime="t", delayThreshold="1 minute").dropDuplicates()`, []Op{wm("t", "1 minute", 60000), dd()}},
	{"wm/keywords-reversed", `withWatermark(delayThreshold="1 minute", eventTime="t").dropDuplicates()`, []Op{wm("t", "1 minute", 60000), dd()}},
	{"wm/positional-then-keyword", `withWatermark("t", delayThreshold="1 minute").dropDuplicates()`, []Op{wm("t", "1 minute", 60000), dd()}},
	{"wm/delay-forms", `withWatermark("t", "interval 1 minute 30 seconds").dropDuplicates()`, []Op{wm("t", "interval 1 minute 30 seconds", 90000), dd()}},
	{"wm/milliseconds", `withWatermark("t", "4610 milliseconds").dropDuplicates()`, []Op{wm("t", "4610 milliseconds", 4610), dd()}},
	{"wm/zero", `withWatermark("t", "0 seconds").dropDuplicates()`, []Op{wm("t", "0 seconds", 0), dd()}},
	{"wm/hour-weeks", `withWatermark("t", "1 hour").withWatermark("t", "2 weeks").dropDuplicates()`, []Op{wm("t", "1 hour", 3600000), wm("t", "2 weeks", 1209600000), dd()}},

	// Dedup arguments.
	{"dd/tuple", `dropDuplicates(("a", "b"))`, []Op{dd("a", "b")}},
	{"dd/tuple-one", `dropDuplicates(("a",))`, []Op{dd("a")}},
	{"dd/parenthesised-string", `dropDuplicates(("a"))`, []Op{dd("a")}},
	{"dd/varargs", `dropDuplicates("a", "b")`, []Op{dd("a", "b")}},
	{"dd/subset", `dropDuplicates(subset=["a"])`, []Op{dd("a")}},
	{"dd/subset-tuple", `dropDuplicates(subset=("a", "b"))`, []Op{dd("a", "b")}},
	{"dd/subset-none", `dropDuplicates(subset=None)`, []Op{dd()}},
	{"dd/none", `dropDuplicates(None)`, []Op{dd()}},
	{"dd/alias", `drop_duplicates(["a"])`, []Op{dd("a")}},
	{"dd/alias-all", `df.drop_duplicates()`, []Op{dd()}},
	{"dd/distinct", `df.distinct()`, []Op{dd()}},
	{"dd/duplicate-keys-kept-as-written", `dropDuplicates(["a", "a"])`, []Op{dd("a", "a")}},
	{"dd/scala-seq", `df.dropDuplicates(Seq("a", "b"))`, []Op{dd("a", "b")}},
	{"dd/scala-list-array", `dropDuplicates(List("a")).dropDuplicates(Array("b"))`, []Op{dd("a"), dd("b")}},
	{"dd/scala-chain", "df\n  .withWatermark(\"t\", \"10 seconds\")\n  .dropDuplicatesWithinWatermark(Seq(\"id\"))", []Op{wm("t", "10 seconds", 10000), ddw("id")}},
	{"ddw/list", `dropDuplicatesWithinWatermark(["a", "b"])`, []Op{ddw("a", "b")}},
	{"ddw/tuple", `dropDuplicatesWithinWatermark(("a", "b"))`, []Op{ddw("a", "b")}},
	{"ddw/varargs", `dropDuplicatesWithinWatermark("a", "b")`, []Op{ddw("a", "b")}},
	{"ddw/subset", `dropDuplicatesWithinWatermark(subset=["a"])`, []Op{ddw("a")}},
	{"ddw/subset-none", `dropDuplicatesWithinWatermark(subset=None)`, []Op{ddw()}},

	// Chains.
	{"chain/several", `df.withWatermark("t", "1 minute").dropDuplicates(["a", "t"]).dropDuplicatesWithinWatermark(["b"]).dropDuplicates()`,
		[]Op{wm("t", "1 minute", 60000), dd("a", "t"), ddw("b"), dd()}},

	// The structured form.
	{"json/basic", `[{"op": "withWatermark", "column": "eventTime", "delay": "10 seconds"}, {"op": "dropDuplicates", "keys": ["id"]}]`,
		[]Op{wm("eventTime", "10 seconds", 10000), dd("id")}},
	{"json/keys-omitted-null", ` [{"op":"dropDuplicates"},{"op":"dropDuplicatesWithinWatermark","keys":null}]`, []Op{dd(), ddw()}},
	{"json/within", `[{"op":"dropDuplicatesWithinWatermark","keys":["a","b"]}]`, []Op{ddw("a", "b")}},
}

func TestParseForms(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if want := (Chain{Ops: tc.want}); !c.Equal(want) {
				t.Fatalf("Parse(%q)\n got %s %#v\nwant %s %#v", tc.in, c, c.Ops, want, want.Ops)
			}
			if c.Text != tc.in {
				t.Errorf("Text = %q, want the input %q", c.Text, tc.in)
			}
			again, err := Parse(c.String())
			if err != nil || !again.Equal(c) {
				t.Errorf("canonical %s does not re-parse to the same chain: %v", c, err)
			}
		})
	}
}

// parseErrorCases are inputs Parse must reject; their messages are pinned
// in testdata/parse_errors.golden.
var parseErrorCases = []string{
	"",
	"   \n\t ",
	"df",
	"df.",
	"df.withWatermark",
	`df.withWatermark("a", "1 second").dropDuplicates())`,
	`df.withWatermark("a", "1 second").groupBy("x")`,
	`df.groupBy("x").count()`,
	`df.dropduplicates()`,
	`df.DropDuplicates()`,
	`df.dropDuplicates(`,
	`df.dropDuplicates(["a"]`,
	`df.dropDuplicates(["a")`,
	`(df.dropDuplicates()`,
	`df.dropDuplicates() df`,
	`df.dropDuplicates().foo`,
	`df.dropDuplicates().foo.dropDuplicates()`,
	`df.dropDuplicates()()`,
	`(df)(1)`,
	`df.dropDuplicates([])`,
	`df.dropDuplicates(())`,
	`df.dropDuplicates(subset=[])`,
	`df.dropDuplicates(Seq())`,
	`df.dropDuplicatesWithinWatermark([])`,
	`df.dropDuplicates([""])`,
	`df.dropDuplicates(["a", 1])`,
	`df.dropDuplicates(["a", None])`,
	`df.dropDuplicates(keys)`,
	`df.dropDuplicates(col("a"))`,
	`df.dropDuplicates(["a"], ["b"])`,
	`df.dropDuplicates(cols=["a"])`,
	`df.dropDuplicates("a", subset=["b"])`,
	`df.dropDuplicates(subset=["a"], "b")`,
	`df.distinct("a")`,
	`df.withWatermark("t")`,
	`df.withWatermark()`,
	`df.withWatermark("t", "1 second", "x")`,
	`df.withWatermark("t", 10)`,
	`df.withWatermark(t, "10 seconds")`,
	`df.withWatermark("", "10 seconds")`,
	`df.withWatermark(eventTime="t", delay="10 seconds")`,
	`df.withWatermark("t", eventTime="u")`,
	`df.withWatermark("t", "20 minuts")`,
	`df.withWatermark("t", "")`,
	`df.withWatermark("t", "-5 seconds")`,
	`df.withWatermark("t", "ten seconds")`,
	`df.withWatermark("t", "10")`,
	`df.dropDuplicates(["a)`,
	"df.dropDuplicates([\"a\n\"])",
	`df.dropDuplicates(["\x4"])`,
	`df.dropDuplicates(["\ud800"])`,
	`df.dropDuplicates(["\N{DASH}"])`,
	`df.dropDuplicates([“a”])`,
	`df.dropDuplicates(["a"]) @`,
	"df.dropDuplicates() \\ x",
	"df.dropDuplicates([\"\xff\"])",
	`df.dropDuplicates([f"a"])`,
	`df = `,
	`[`,
	`[]`,
	`[1]`,
	`[{"op": "groupBy"}]`,
	`[{"keys": ["a"]}]`,
	`[{"op": 1}]`,
	`[{"op": "withWatermark", "column": "t"}]`,
	`[{"op": "withWatermark", "delay": "1 second"}]`,
	`[{"op": "withWatermark", "column": 5, "delay": "1 second"}]`,
	`[{"op": "withWatermark", "column": "t", "delay": "1 fortnight"}]`,
	`[{"op": "withWatermark", "column": "t", "delay": "1 second", "keys": ["a"]}]`,
	`[{"op": "dropDuplicates", "colums": ["a"]}]`,
	`[{"op": "dropDuplicates", "keys": []}]`,
	`[{"op": "dropDuplicates", "keys": "a"}]`,
	`[{"op": "dropDuplicates", "keys": ["a", 2]}]`,
	`[{"op": "dropDuplicates", "op": "dropDuplicates"}]`,
	`[{"op": "dropDuplicates"}] x`,
	`[{"op": "dropDuplicates"},]`,
	`[{"op": "dropDuplicates"}`,
	strings.Repeat("(", 200) + "df" + strings.Repeat(")", 200),
	"df.dropDuplicates(" + strings.Repeat("[", 200) + `"a"` + strings.Repeat("]", 200) + ")",
}

func TestParseErrors(t *testing.T) {
	var b strings.Builder
	for _, in := range parseErrorCases {
		c, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want an error", in, c)
			continue
		}
		checkOneLine(t, in, err)
		fmt.Fprintf(&b, "%q\n\t%s\n", in, err)
	}
	golden(t, "parse_errors.golden", b.String())
}

// checkOneLine asserts the error contract: one line, starting "query: ".
func checkOneLine(t *testing.T, in string, err error) {
	t.Helper()
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "query: ") {
		t.Errorf("error for %q is not one line starting with \"query: \": %q", in, msg)
	}
}

func TestParseJSON(t *testing.T) {
	text := `withWatermark("t", "1 second").dropDuplicates(["a", "t"])`
	want := Chain{Ops: []Op{wm("t", "1 second", 1000), dd("a", "t")}}
	quoted, _ := json.Marshal(text)
	array := `[{"op": "withWatermark", "column": "t", "delay": "1 second"}, {"op": "dropDuplicates", "keys": ["a", "t"]}]`
	arrayInString, _ := json.Marshal(array)
	for _, tc := range []struct {
		raw, text string
	}{
		{string(quoted), text},
		{" \n" + array + "\n", " \n" + array + "\n"},
		{string(arrayInString), array},
	} {
		c, err := ParseJSON([]byte(tc.raw))
		if err != nil {
			t.Fatalf("ParseJSON(%s): %v", tc.raw, err)
		}
		if !c.Equal(want) || c.Text != tc.text {
			t.Errorf("ParseJSON(%s) = %s (Text %q), want %s (Text %q)", tc.raw, c, c.Text, want, tc.text)
		}
	}

	var b strings.Builder
	for _, raw := range []string{``, `null`, `{"op": "dropDuplicates"}`, `42`, `true`, `"unterminated`, `"df.groupBy()"`, `[{"op": "dropDuplicates", "keys": []}]`} {
		_, err := ParseJSON([]byte(raw))
		if err == nil {
			t.Errorf("ParseJSON(%s): want an error", raw)
			continue
		}
		checkOneLine(t, raw, err)
		fmt.Fprintf(&b, "%s\n\t%s\n", raw, err)
	}
	golden(t, "parse_json_errors.golden", b.String())
}

func TestStringCanonical(t *testing.T) {
	for _, tc := range []struct {
		c    Chain
		want string
	}{
		{Chain{Ops: []Op{wm("event_time", "20 minutes", 1200000), dd("event_id", "event_time")}},
			`withWatermark("event_time", "20 minutes").dropDuplicates(["event_id", "event_time"])`},
		{Chain{Ops: []Op{ddw()}}, `dropDuplicatesWithinWatermark()`},
		{Chain{Ops: []Op{{Kind: WithWatermark, Column: "t", DelayMs: 1500}, dd(`a"b\c`, "é\u00a0\x00\n")}},
			`withWatermark("t", "1500 milliseconds").dropDuplicates(["a\"b\\c", "é\u00a0\x00\n"])`},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
}

// conformanceDir is the project's copy of the shared conformance cases.
const conformanceDir = "../replay/testdata/conformance"

// TestConformanceQueries parses and plans every conformance case's query
// against a schema built from its rows, the way the replay command will,
// and checks the operators against the expected output: the number and
// names of the state operators (sink first), or the expected rejection.
func TestConformanceQueries(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(conformanceDir, "*.json"))
	if len(files) == 0 {
		t.Fatalf("no conformance cases under %s", conformanceDir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var tr struct {
				Query     json.RawMessage `json:"query"`
				EventTime string          `json:"eventTime"`
				Steps     []struct {
					AddData []map[string]json.RawMessage `json:"addData"`
				} `json:"steps"`
			}
			if err := json.Unmarshal(raw, &tr); err != nil {
				t.Fatal(err)
			}
			exp, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".expected.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			wantErr := strings.TrimSpace(string(exp)) == `{"error": true}`

			c, err := ParseJSON(tr.Query)
			if err != nil {
				t.Fatalf("ParseJSON(%s): %v", tr.Query, err)
			}
			// The schema: every column of every row, in order of first
			// appearance; the event-time column a timestamp.
			et := tr.EventTime
			for _, op := range c.Ops {
				if op.Kind == WithWatermark && et == "" {
					et = op.Column
				}
			}
			var schema Schema
			seen := map[string]bool{}
			for _, s := range tr.Steps {
				for _, row := range s.AddData {
					keys := make([]string, 0, len(row))
					for k := range row {
						keys = append(keys, k)
					}
					// Map order is random; the raw object order is not
					// needed for planning, only a stable order.
					slices.Sort(keys)
					for _, k := range keys {
						if !seen[k] {
							seen[k] = true
							typ := Other
							if k == et {
								typ = Timestamp
							}
							schema = append(schema, Column{Name: k, Type: typ})
						}
					}
				}
			}
			p, err := PlanFor(c, schema)
			if wantErr {
				if err == nil {
					t.Fatalf("PlanFor(%s) succeeded, the case expects a rejection", c)
				}
				checkOneLine(t, string(tr.Query), err)
				return
			}
			if err != nil {
				t.Fatalf("PlanFor(%s): %v", c, err)
			}
			var first struct {
				StateOperators []struct {
					OperatorName string `json:"operatorName"`
				} `json:"stateOperators"`
			}
			line, _, _ := strings.Cut(string(exp), "\n")
			if err := json.Unmarshal([]byte(line), &first); err != nil {
				t.Fatal(err)
			}
			dedups := p.Dedups()
			if len(dedups) != len(first.StateOperators) {
				t.Fatalf("%d dedup nodes, the case expects %d state operators", len(dedups), len(first.StateOperators))
			}
			for i, so := range first.StateOperators {
				n := p.Nodes[dedups[len(dedups)-1-i]] // sink first
				if n.Operator != so.OperatorName {
					t.Errorf("stateOperators[%d] = %s, plan has %s", i, so.OperatorName, n.Operator)
				}
			}
		})
	}
}
