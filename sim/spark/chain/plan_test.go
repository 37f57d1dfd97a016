package chain

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// events is the schema of the generators' rows, the usual planning input.
var events = Schema{
	{Name: "event_id", Type: Other},        // 0
	{Name: "customer_id", Type: Other},     // 1
	{Name: "event_time", Type: Timestamp},  // 2
	{Name: "ingest_time", Type: Timestamp}, // 3
	{Name: "payload", Type: Other},         // 4
}

const twentyMin = 20 * 60 * 1000

// wmNode is the planned node of withWatermark on column col.
func wmNode(col int, delay string, ms int64) Node {
	return Node{Op: wm(events[col].Name, delay, ms), EventTimeColumn: col, DelayMs: ms}
}

func TestPlanFor(t *testing.T) {
	wm20 := wmNode(2, "20 minutes", twentyMin)
	for _, tc := range []struct {
		name     string
		query    string
		schema   Schema
		nodes    []Node
		hasWM    bool
		warnings []WarningCode
		// deferred: only PlanDeferred plans it (a Redefinition).
		deferred bool
	}{
		{
			name:  "watermark before dropDuplicates, event time in keys: evicts",
			query: `withWatermark("event_time", "20 minutes").dropDuplicates(["event_id", "event_time"])`,
			nodes: []Node{wm20, {Op: dd("event_id", "event_time"), Operator: "dedupe", EventTimeColumn: 2, DelayMs: twentyMin,
				KeyColumns: []int{0, 2}, KeyNames: []string{"event_id", "event_time"}, WatermarkReaches: true, EventTimeInKeys: true}},
			hasWM: true, warnings: []WarningCode{EventTimeInKeys},
		},
		{
			name:  "watermark before dropDuplicates, event time not in keys: global dedup, late rows dropped",
			query: `withWatermark("event_time", "20 minutes").dropDuplicates(["event_id"])`,
			nodes: []Node{wm20, {Op: dd("event_id"), Operator: "dedupe", EventTimeColumn: 2, DelayMs: twentyMin,
				KeyColumns: []int{0}, KeyNames: []string{"event_id"}, WatermarkReaches: true}},
			hasWM: true, warnings: []WarningCode{EventTimeNotInKeys},
		},
		{
			name:  "watermark after dropDuplicates does not reach it",
			query: `dropDuplicates(["event_id", "event_time"]).withWatermark("event_time", "20 minutes")`,
			nodes: []Node{{Op: dd("event_id", "event_time"), Operator: "dedupe", EventTimeColumn: -1,
				KeyColumns: []int{0, 2}, KeyNames: []string{"event_id", "event_time"}}, wm20},
			hasWM: true, warnings: []WarningCode{WatermarkAfterDedup},
		},
		{
			name:  "no watermark",
			query: `dropDuplicates(["event_id"])`,
			nodes: []Node{{Op: dd("event_id"), Operator: "dedupe", EventTimeColumn: -1,
				KeyColumns: []int{0}, KeyNames: []string{"event_id"}}},
			warnings: []WarningCode{NoWatermark},
		},
		{
			name:  "within watermark: no warning",
			query: `withWatermark("event_time", "20 minutes").dropDuplicatesWithinWatermark(["event_id"])`,
			nodes: []Node{wm20, {Op: ddw("event_id"), Operator: "dedupeWithinWatermark", EventTimeColumn: 2, DelayMs: twentyMin,
				KeyColumns: []int{0}, KeyNames: []string{"event_id"}, WatermarkReaches: true}},
			hasWM: true,
		},
		{
			name:  "within watermark with the event time among its keys",
			query: `withWatermark("event_time", "20 minutes").dropDuplicatesWithinWatermark(["event_id", "event_time"])`,
			nodes: []Node{wm20, {Op: ddw("event_id", "event_time"), Operator: "dedupeWithinWatermark", EventTimeColumn: 2, DelayMs: twentyMin,
				KeyColumns: []int{0, 2}, KeyNames: []string{"event_id", "event_time"}, WatermarkReaches: true, EventTimeInKeys: true}},
			hasWM: true,
		},
		{
			name:  "all columns include the event time",
			query: `withWatermark("event_time", "20 minutes").dropDuplicates()`,
			nodes: []Node{wm20, {Op: dd(), Operator: "dedupe", EventTimeColumn: 2, DelayMs: twentyMin,
				KeyColumns: []int{0, 1, 2, 3, 4}, KeyNames: []string{"event_id", "customer_id", "event_time", "ingest_time", "payload"},
				WatermarkReaches: true, EventTimeInKeys: true}},
			hasWM: true, warnings: []WarningCode{EventTimeInKeys},
		},
		{
			name:  "case-insensitive resolution, names as in the schema",
			query: `withWatermark("EVENT_TIME", "20 minutes").dropDuplicates(["Event_Id", "event_TIME"])`,
			nodes: []Node{{Op: wm("EVENT_TIME", "20 minutes", twentyMin), EventTimeColumn: 2, DelayMs: twentyMin},
				{Op: dd("Event_Id", "event_TIME"), Operator: "dedupe", EventTimeColumn: 2, DelayMs: twentyMin,
					KeyColumns: []int{0, 2}, KeyNames: []string{"event_id", "event_time"}, WatermarkReaches: true, EventTimeInKeys: true}},
			hasWM: true, warnings: []WarningCode{EventTimeInKeys},
		},
		{
			// Dataset.groupColsFromDropDuplicates: colNames.toSet drops the
			// repeated "event_id", not "EVENT_TIME", which resolves to
			// event_time again: Spark's key row holds it twice.
			name:  "a name given twice counts once; two spellings of one column key on it twice",
			query: `dropDuplicates(["event_time", "event_id", "EVENT_TIME", "event_id"])`,
			nodes: []Node{{Op: dd("event_time", "event_id", "EVENT_TIME", "event_id"), Operator: "dedupe", EventTimeColumn: -1,
				KeyColumns: []int{2, 0, 2}, KeyNames: []string{"event_time", "event_id", "event_time"}}},
			warnings: []WarningCode{NoWatermark},
		},
		{
			name:   "a key matching case variants keys on every one of them, exact case or not",
			query:  `dropDuplicates(["Id"])`,
			schema: Schema{{Name: "id"}, {Name: "Id"}, {Name: "ID"}},
			nodes: []Node{{Op: dd("Id"), Operator: "dedupe", EventTimeColumn: -1,
				KeyColumns: []int{0, 1, 2}, KeyNames: []string{"id", "Id", "ID"}}},
			warnings: []WarningCode{NoWatermark, CaseVariantKeys},
		},
		{
			name:   "two columns of one name are both keys",
			query:  `withWatermark("t", "1 minute").dropDuplicates(["id"])`,
			schema: Schema{{Name: "id"}, {Name: "t", Type: Timestamp}, {Name: "id"}},
			nodes: []Node{{Op: wm("t", "1 minute", 60000), EventTimeColumn: 1, DelayMs: 60000},
				{Op: dd("id"), Operator: "dedupe", EventTimeColumn: 1, DelayMs: 60000,
					KeyColumns: []int{0, 2}, KeyNames: []string{"id", "id"}, WatermarkReaches: true}},
			hasWM: true, warnings: []WarningCode{EventTimeNotInKeys, CaseVariantKeys},
		},
		{
			// dropDuplicates() is dropDuplicates(df.columns): each distinct
			// name expands to every case variant, so id and ID come twice.
			name:   "all columns over case variants",
			query:  `dropDuplicates()`,
			schema: Schema{{Name: "id"}, {Name: "ID"}, {Name: "v"}},
			nodes: []Node{{Op: dd(), Operator: "dedupe", EventTimeColumn: -1,
				KeyColumns: []int{0, 1, 0, 1, 2}, KeyNames: []string{"id", "ID", "id", "ID", "v"}}},
			warnings: []WarningCode{NoWatermark},
		},
		{
			name:  "a dedup after two watermarks takes the nearest one's column and delay",
			query: `withWatermark("event_time", "20 minutes").withWatermark("ingest_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])`,
			nodes: []Node{wm20, wmNode(3, "1 minute", 60000),
				{Op: ddw("event_id"), Operator: "dedupeWithinWatermark", EventTimeColumn: 3, DelayMs: 60000,
					KeyColumns: []int{0}, KeyNames: []string{"event_id"}, WatermarkReaches: true}},
			hasWM: true, deferred: true,
		},
		{
			name:  "watermark on another timestamp column: event_time is then an ordinary key",
			query: `withWatermark("ingest_time", "20 minutes").dropDuplicates(["event_id", "event_time"])`,
			nodes: []Node{wmNode(3, "20 minutes", twentyMin), {Op: dd("event_id", "event_time"), Operator: "dedupe", EventTimeColumn: 3, DelayMs: twentyMin,
				KeyColumns: []int{0, 2}, KeyNames: []string{"event_id", "event_time"}, WatermarkReaches: true}},
			hasWM: true, warnings: []WarningCode{EventTimeNotInKeys},
		},
		{
			name:  "the watermark flows through one dedup into the next",
			query: `withWatermark("event_time", "20 minutes").dropDuplicates().dropDuplicatesWithinWatermark(["event_id"])`,
			nodes: []Node{wm20,
				{Op: dd(), Operator: "dedupe", EventTimeColumn: 2, DelayMs: twentyMin,
					KeyColumns: []int{0, 1, 2, 3, 4}, KeyNames: []string{"event_id", "customer_id", "event_time", "ingest_time", "payload"},
					WatermarkReaches: true, EventTimeInKeys: true},
				{Op: ddw("event_id"), Operator: "dedupeWithinWatermark", EventTimeColumn: 2, DelayMs: twentyMin,
					KeyColumns: []int{0}, KeyNames: []string{"event_id"}, WatermarkReaches: true}},
			hasWM: true, warnings: []WarningCode{EventTimeInKeys},
		},
		{
			name:  "a watermark between two dedups reaches only the second",
			query: `dropDuplicates(["event_id"]).withWatermark("event_time", "20 minutes").dropDuplicates(["event_id", "event_time"])`,
			nodes: []Node{{Op: dd("event_id"), Operator: "dedupe", EventTimeColumn: -1, KeyColumns: []int{0}, KeyNames: []string{"event_id"}},
				wm20,
				{Op: dd("event_id", "event_time"), Operator: "dedupe", EventTimeColumn: 2, DelayMs: twentyMin,
					KeyColumns: []int{0, 2}, KeyNames: []string{"event_id", "event_time"}, WatermarkReaches: true, EventTimeInKeys: true}},
			hasWM: true, warnings: []WarningCode{WatermarkAfterDedup, EventTimeInKeys},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			schema := tc.schema
			if schema == nil {
				schema = events
			}
			p, err := PlanFor(c, schema)
			if tc.deferred {
				if err == nil {
					t.Fatalf("PlanFor accepted a chain Spark fails while it runs")
				}
				if p, err = PlanDeferred(c, schema); err != nil || p.Redefinition == nil {
					t.Fatalf("PlanDeferred: %v, redefinition %v", err, p.Redefinition)
				}
			} else if err != nil {
				t.Fatalf("PlanFor: %v", err)
			}
			if len(p.Nodes) != len(tc.nodes) {
				t.Fatalf("%d nodes, want %d", len(p.Nodes), len(tc.nodes))
			}
			for i := range tc.nodes {
				if !reflect.DeepEqual(p.Nodes[i], tc.nodes[i]) {
					t.Errorf("node %d:\n got %+v\nwant %+v", i, p.Nodes[i], tc.nodes[i])
				}
			}
			if p.HasWatermark != tc.hasWM {
				t.Errorf("HasWatermark = %v, want %v", p.HasWatermark, tc.hasWM)
			}
			var codes []WarningCode
			for _, w := range p.Warnings {
				codes = append(codes, w.Code)
				if !p.Nodes[w.Node].IsDedup() {
					t.Errorf("warning %s on node %d, which is not a dedup", w.Code, w.Node)
				}
				if strings.Contains(w.Message, "\n") || w.Message == "" {
					t.Errorf("warning %s message %q: want one non-empty line", w.Code, w.Message)
				}
			}
			if !reflect.DeepEqual(codes, tc.warnings) {
				t.Errorf("warnings %v, want %v", codes, tc.warnings)
			}
			if !p.Chain.Equal(c) || p.Chain.Text != c.Text || !reflect.DeepEqual(p.Schema, schema) {
				t.Errorf("plan does not carry its chain and schema")
			}
		})
	}
}

// TestPlanDoesNotAlias checks that a plan's nodes own their key slices: the
// executor may keep a plan while the caller reuses its chain.
func TestPlanDoesNotAlias(t *testing.T) {
	c := Chain{Ops: []Op{dd("event_id")}}
	p, err := PlanFor(c, events)
	if err != nil {
		t.Fatal(err)
	}
	c.Ops[0].Keys[0] = "changed"
	if p.Nodes[0].Op.Keys[0] != "event_id" {
		t.Errorf("node keys alias the chain's")
	}
}

// TestPlanDelay checks the delay a hand-built chain carries: Delay text
// wins (it is what Parse fills DelayMs from), DelayMs alone is accepted.
func TestPlanDelay(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		want int64
	}{
		{Op{Kind: WithWatermark, Column: "event_time", Delay: "1 minute"}, 60000},
		{Op{Kind: WithWatermark, Column: "event_time", DelayMs: 1234}, 1234},
	} {
		p, err := PlanFor(Chain{Ops: []Op{tc.op, dd("event_id")}}, events)
		if err != nil {
			t.Fatal(err)
		}
		if p.Nodes[0].DelayMs != tc.want || p.Nodes[1].DelayMs != tc.want || p.Nodes[0].Op.DelayMs != tc.want {
			t.Errorf("%s: DelayMs %d/%d, want %d", tc.op, p.Nodes[0].DelayMs, p.Nodes[1].DelayMs, tc.want)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	ambiguous := Schema{{Name: "id"}, {Name: "Id"}, {Name: "t", Type: Timestamp}, {Name: "T", Type: Timestamp}}
	for _, tc := range []struct {
		name   string
		chain  Chain
		query  string
		schema Schema
	}{
		{name: "unknown key column", query: `withWatermark("event_time", "10 seconds").dropDuplicates(["user"])`},
		{name: "unknown watermark column", query: `withWatermark("ts", "10 seconds").dropDuplicates(["event_id"])`},
		{name: "watermark column not a timestamp", query: `withWatermark("event_id", "10 seconds").dropDuplicates(["event_id"])`},
		{name: "ambiguous case-insensitive watermark column", query: `withWatermark("t", "1 minute").dropDuplicates(["id"])`, schema: ambiguous},
		{name: "ambiguous exact-case watermark column", query: `withWatermark("t", "1 minute").dropDuplicates(["id"])`, schema: Schema{{Name: "id"}, {Name: "t", Type: Timestamp}, {Name: "t", Type: Timestamp}}},
		{name: "key on an empty schema", query: `dropDuplicates(["id"])`, schema: Schema{}},
		{name: "within watermark without watermark", query: `dropDuplicatesWithinWatermark(["event_id"])`},
		{name: "within watermark, all columns, without watermark", query: `dropDuplicatesWithinWatermark()`, schema: Schema{{Name: "value"}}},
		{name: "within watermark with the watermark after it", query: `dropDuplicatesWithinWatermark(["event_id"]).withWatermark("event_time", "1 minute")`},
		{name: "redefining watermark", query: `withWatermark("event_time", "1 minute").withWatermark("ingest_time", "1 minute").dropDuplicates()`},
		{name: "redefining watermark on the same column", query: `withWatermark("event_time", "1 minute").withWatermark("event_time", "2 minutes").dropDuplicates()`},
		{name: "redefining watermark after a dedup", query: `withWatermark("event_time", "1 minute").dropDuplicates(["event_id"]).withWatermark("ingest_time", "1 minute")`},
		{name: "analysis errors come before the redefinition", query: `withWatermark("event_time", "1 minute").withWatermark("event_time", "1 minute").dropDuplicates(["nope"])`},
		{name: "within-watermark check comes before the redefinition", query: `dropDuplicatesWithinWatermark(["event_id"]).withWatermark("event_time", "1 minute").withWatermark("event_time", "1 minute")`},
		{name: "no dedup", query: `withWatermark("event_time", "1 minute")`},
		{name: "no operators", chain: Chain{}},
		{name: "hand-built unknown kind", chain: Chain{Ops: []Op{{Kind: OpKind(7)}}}},
		{name: "hand-built empty keys", chain: Chain{Ops: []Op{{Kind: DropDuplicates}}}},
		{name: "hand-built bad delay", chain: Chain{Ops: []Op{{Kind: WithWatermark, Column: "event_time", Delay: "soon"}, dd()}}},
		{name: "hand-built negative delay", chain: Chain{Ops: []Op{{Kind: WithWatermark, Column: "event_time", DelayMs: -1}, dd()}}},
	} {
		c := tc.chain
		if tc.query != "" {
			var err error
			if c, err = Parse(tc.query); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		schema := tc.schema
		if schema == nil {
			schema = events
		}
		_, err := PlanFor(c, schema)
		if err == nil {
			t.Errorf("%s: PlanFor(%s) succeeded, want an error", tc.name, c)
			continue
		}
		checkOneLine(t, tc.name, err)
	}
	// The messages, pinned.
	var b strings.Builder
	for _, tc := range []struct {
		query  string
		schema Schema
	}{
		{`withWatermark("event_time", "10 seconds").dropDuplicates(["user"])`, events},
		{`withWatermark("ts", "10 seconds").dropDuplicates(["event_id"])`, events},
		{`withWatermark("event_id", "10 seconds").dropDuplicates(["event_id"])`, events},
		{`withWatermark("t", "1 minute").dropDuplicates(["ID"])`, ambiguous},
		{`withWatermark("t", "1 minute").dropDuplicates(["id"])`, Schema{{Name: "id"}, {Name: "t", Type: Timestamp}, {Name: "t", Type: Timestamp}}},
		{`dropDuplicates(["id"])`, Schema{}},
		{`dropDuplicatesWithinWatermark(["event_id"])`, events},
		{`dropDuplicatesWithinWatermark()`, Schema{{Name: "value"}}},
		{`dropDuplicatesWithinWatermark(["event_id"]).withWatermark("event_time", "1 minute")`, events},
		{`withWatermark("event_time", "1 minute").withWatermark("ingest_time", "1 minute").dropDuplicates()`, events},
		{`withWatermark("event_time", "1 minute").dropDuplicates(["event_id"]).withWatermark("ingest_time", "1 minute")`, events},
		{`withWatermark("event_time", "1 minute").withWatermark("event_time", "1 minute").dropDuplicates(["nope"])`, events},
		{`withWatermark("event_time", "1 minute")`, events},
	} {
		c, err := Parse(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = PlanFor(c, tc.schema)
		fmt.Fprintf(&b, "%s\n\tschema: %s\n\t%v\n", tc.query, tc.schema.names(), err)
	}
	for _, c := range []Chain{{}, {Ops: []Op{{Kind: OpKind(7)}}}, {Ops: []Op{{Kind: DropDuplicates}}},
		{Ops: []Op{{Kind: WithWatermark, Column: "event_time", Delay: "soon"}, dd()}},
		{Ops: []Op{{Kind: WithWatermark, Column: "event_time", DelayMs: -1}, dd()}}} {
		_, err := PlanFor(c, events)
		fmt.Fprintf(&b, "%#v\n\t%v\n", c.Ops, err)
	}
	golden(t, "plan_errors.golden", b.String())
}

func TestInferSchema(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  Schema
	}{
		{`withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])`,
			Schema{{Name: "event_time", Type: Timestamp}, {Name: "event_id"}}},
		{`dropDuplicates(["id", "eventTime"]).withWatermark("eventTime", "5 minutes")`,
			Schema{{Name: "id"}, {Name: "eventTime", Type: Timestamp}}},
		{`dropDuplicates(["id", "ID", "other"]).dropDuplicates(["Other"])`,
			Schema{{Name: "id"}, {Name: "other"}}},
		{`dropDuplicates()`, nil},
	} {
		c, err := Parse(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		got := InferSchema(c)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("InferSchema(%s) = %+v, want %+v", tc.query, got, tc.want)
		}
		// A chain always plans against its own inferred schema, unless
		// Spark itself would reject it.
		if _, err := PlanFor(c, got); err != nil {
			t.Errorf("PlanFor(%s, InferSchema): %v", tc.query, err)
		}
	}
}

// explainCases are the pitfalls of docs/semantics.md, each explained in
// testdata/explain/NAME.txt.
var explainCases = []struct{ name, query string }{
	{"event-time-in-keys", `events.withWatermark("event_time", "20 minutes").dropDuplicates(["event_id", "event_time"])`},
	{"event-time-not-in-keys", `events.withWatermark("event_time", "20 minutes").dropDuplicates(["event_id"])`},
	{"watermark-after-dedup", `df.dropDuplicates(["id", "eventTime"]).withWatermark("eventTime", "5 minutes")`},
	{"no-watermark", `dropDuplicates(["event_id"])`},
	{"within-watermark", `events.withWatermark("event_time", "20 minutes").dropDuplicatesWithinWatermark(["event_id"])`},
	{"all-columns", `withWatermark("eventTime", "10 seconds").dropDuplicates()`},
	{"multiple-dedups", `dropDuplicates().dropDuplicates("_1")`},
	{"three-operators", `withWatermark("t", "1 hour 30 minutes").dropDuplicates(["id", "t"]).dropDuplicatesWithinWatermark(["id"])`},
}

func TestExplain(t *testing.T) {
	for _, tc := range explainCases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			p, err := PlanFor(c, InferSchema(c))
			if err != nil {
				t.Fatal(err)
			}
			got := Explain(p)
			if strings.Contains(got, "\x1b") {
				t.Errorf("explain output holds an escape sequence")
			}
			golden(t, "explain/"+tc.name+".txt", got)
		})
	}
	// The generators' schema: dropDuplicates() covers every column.
	c, _ := Parse(`withWatermark("event_time", "20 minutes").dropDuplicates()`)
	p, err := PlanFor(c, events)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "explain/generator-schema.txt", Explain(p))
	// Columns that differ only in case: Spark keys on both.
	c, _ = Parse(`withWatermark("t", "10 seconds").dropDuplicates(["id"])`)
	p, err = PlanFor(c, Schema{{Name: "id"}, {Name: "ID"}, {Name: "t", Type: Timestamp}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "explain/case-variant-keys.txt", Explain(p))
}

// TestMaxDedups: a query of MaxDedups dedup operators plans, one more is
// rejected, naming the operator, before anything runs.
func TestMaxDedups(t *testing.T) {
	ops := []Op{wm("event_time", "1 minute", 60000)}
	for range MaxDedups {
		ops = append(ops, dd("event_id"))
	}
	if _, err := PlanFor(Chain{Ops: ops}, events); err != nil {
		t.Fatalf("%d dedups: %v", MaxDedups, err)
	}
	ops = append(ops, ddw("event_id"))
	_, err := PlanFor(Chain{Ops: ops}, events)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("operator %d (dropDuplicatesWithinWatermark): more than 255 dedup operators", len(ops))) {
		t.Fatalf("%d dedups: %v", MaxDedups+1, err)
	}
	checkOneLine(t, "max dedups", err)
}

// TestRedefinitionDeferred: PlanFor rejects a second withWatermark, saying
// when Spark fails it; PlanDeferred plans it and records both operators.
func TestRedefinitionDeferred(t *testing.T) {
	for _, tc := range []struct {
		query       string
		node, first int
	}{
		{`withWatermark("event_time", "1 minute").withWatermark("ingest_time", "1 minute").dropDuplicates()`, 1, 0},
		{`withWatermark("event_time", "1 minute").dropDuplicates(["event_id"]).withWatermark("ingest_time", "1 minute")`, 2, 0},
		{`dropDuplicates(["event_id"]).withWatermark("event_time", "1 minute").dropDuplicates().withWatermark("event_time", "2 minutes").withWatermark("event_time", "3 minutes")`, 3, 1},
	} {
		c, err := Parse(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = PlanFor(c, events)
		if err == nil || !strings.Contains(err.Error(), "Redefining watermark is disallowed") || !strings.Contains(err.Error(), "watermark other than 0") {
			t.Errorf("PlanFor(%s): %v", tc.query, err)
		}
		p, err := PlanDeferred(c, events)
		if err != nil || p.Redefinition == nil || p.Redefinition.Node != tc.node || p.Redefinition.First != tc.first {
			t.Errorf("PlanDeferred(%s) = %+v, %v; want redefinition at %d of %d", tc.query, p.Redefinition, err, tc.node, tc.first)
		}
	}
	c, _ := Parse(`withWatermark("event_time", "1 minute").dropDuplicates()`)
	if p, err := PlanDeferred(c, events); err != nil || p.Redefinition != nil {
		t.Errorf("one watermark: %+v, %v", p.Redefinition, err)
	}
}
