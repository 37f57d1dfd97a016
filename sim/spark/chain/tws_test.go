package chain

import (
	"strings"
	"testing"
)

// TestParseTransformWithState: the forms of the transformWithState dedup
// a PySpark user writes parse to one operator with the keys and TTL
// written, the canonical form reads back equal, and planning gives Spark
// 4's operator name and the TTL in milliseconds.
func TestParseTransformWithState(t *testing.T) {
	for _, tc := range []struct {
		text  string
		keys  []string
		ttlMs int64
	}{
		{`groupBy("id").transformWithState(DedupProcessor(ttl="10 minutes"))`, []string{"id"}, 600_000},
		{`df.groupBy("id", "src").transformWithState(DedupProcessor(), timeMode="ProcessingTime")`, []string{"id", "src"}, 0},
		{`events.groupBy(["id"]).transformWithStateInPandas(DedupProcessor(ttl="1 minute 30 seconds"), schema, "Append", "ProcessingTime")`, []string{"id"}, 90_000},
		{`groupBy("id").transformWithState(statefulProcessor=DedupProcessor(ttl="1500 milliseconds"), outputMode="Update")`, []string{"id"}, 1500},
	} {
		c, err := Parse(tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if len(c.Ops) != 1 || c.Ops[0].Kind != TransformWithStateDedup || strings.Join(c.Ops[0].Keys, ",") != strings.Join(tc.keys, ",") || c.Ops[0].TTLMs != tc.ttlMs {
			t.Fatalf("%s: got %+v", tc.text, c.Ops)
		}
		back, err := Parse(c.String())
		if err != nil || !back.Equal(c) {
			t.Fatalf("%s: canonical %q reads back as %+v, %v", tc.text, c.String(), back.Ops, err)
		}
		schema := Schema{{Name: "id"}, {Name: "src"}, {Name: "v"}}
		p, err := PlanFor(c, schema)
		if err != nil {
			t.Fatalf("%s: plan: %v", tc.text, err)
		}
		n := p.Nodes[0]
		if n.Operator != TWSOperatorName || n.Op.TTLMs != tc.ttlMs || n.WatermarkReaches || n.Evicts() != (tc.ttlMs > 0) {
			t.Fatalf("%s: node %+v", tc.text, n)
		}
	}
}

// TestTransformWithStateErrors: each form dedupsim does not model, or
// Spark refuses, is one line naming what is wrong.
func TestTransformWithStateErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`transformWithState(DedupProcessor())`, "needs groupBy(keys) before it"},
		{`groupBy("id")`, `unknown operator "groupBy"`},
		{`groupBy().transformWithState(DedupProcessor())`, "at least one key column"},
		{`groupBy("id").transformWithState(MyProcessor())`, "want DedupProcessor(...)"},
		{`groupBy("id").transformWithState(DedupProcessor(ttl="10 min"))`, "INVALID_UNIT"},
		{`groupBy("id").transformWithState(DedupProcessor(ttl="0 seconds"))`, "positive TTL"},
		{`groupBy("id").transformWithState(DedupProcessor(ttl="1 minute"), timeMode="EventTime")`, "the event-time processor with a timer"},
		{`groupBy("id").transformWithState(DedupProcessor(timer="1 minute"))`, "want timeMode=\"EventTime\""},
		{`groupBy("id").transformWithState(DedupProcessor(timer="1 minute", ttl="1 minute"), timeMode="EventTime")`, "one at a time"},
		{`groupBy("id").transformWithState(DedupProcessor(timer="0 seconds"), timeMode="EventTime")`, "positive horizon"},
		{`groupBy("id").transformWithState(DedupProcessor(), timeMode="Wall")`, "timeMode \"Wall\""},
		{`groupBy("id").transformWithState(DedupProcessor(), outputMode="Complete")`, "outputMode"},
		{`groupBy("id").transformWithState()`, "missing processor"},
		// Attack A98: a keyword given twice was taken (Python refuses it).
		{`groupBy("id").transformWithState(DedupProcessor(ttl="10 minutes", ttl="1 minute"))`, "keyword argument ttl repeated"},
		{`dropDuplicates(subset=["a"], subset=["b"])`, "keyword argument subset repeated"},
	} {
		_, err := Parse(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.text, err, tc.want)
		}
	}
	c, err := Parse(`withWatermark("t", "1 minute").groupBy("id").transformWithState(DedupProcessor())`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanFor(c, Schema{{Name: "t", Type: Timestamp}, {Name: "id"}}); err == nil || !strings.Contains(err.Error(), "only operator") {
		t.Errorf("withWatermark before a transformWithState dedup: got %v, want the only-operator error", err)
	}
}

// TestTransformWithStateEventTimeTimer: the event-time flavour parses with
// its horizon, reads back from its canonical form, plans behind its one
// withWatermark (the watermark reaches it: late rows dropped, keys
// evicted), and is refused without the watermark or with anything else.
func TestTransformWithStateEventTimeTimer(t *testing.T) {
	text := `withWatermark("t", "10 seconds").groupBy("id").transformWithState(DedupProcessor(timer="1 minute"), timeMode="EventTime")`
	c, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Ops) != 2 || c.Ops[1].TimerMs != 60_000 || c.Ops[1].TTLMs != 0 {
		t.Fatalf("got %+v", c.Ops)
	}
	if back, err := Parse(c.String()); err != nil || !back.Equal(c) {
		t.Fatalf("canonical %q reads back as %+v, %v", c.String(), back.Ops, err)
	}
	schema := Schema{{Name: "t", Type: Timestamp}, {Name: "id"}}
	p, err := PlanFor(c, schema)
	if err != nil {
		t.Fatal(err)
	}
	n := p.Nodes[1]
	if n.Operator != TWSOperatorName || !n.WatermarkReaches || n.Op.TimerMs != 60_000 || n.DelayMs != 10_000 || len(p.Warnings) != 0 {
		t.Fatalf("node %+v, warnings %v", n, p.Warnings)
	}
	for _, bad := range []string{
		`groupBy("id").transformWithState(DedupProcessor(timer="1 minute"), timeMode="EventTime")`,
		`withWatermark("t", "10 seconds").dropDuplicates(["id"]).groupBy("id").transformWithState(DedupProcessor(timer="1 minute"), timeMode="EventTime")`,
	} {
		c, err := Parse(bad)
		if err != nil {
			t.Fatalf("%s: %v", bad, err)
		}
		if _, err := PlanFor(c, schema); err == nil || !strings.Contains(err.Error(), "must follow one withWatermark and nothing else") {
			t.Errorf("%s: got %v", bad, err)
		}
	}
}
