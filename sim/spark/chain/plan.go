package chain

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// MaxDedups is the most dedup operators a query may hold: the executor
// numbers them in a byte. Spark has no such limit; dedupsim rejects such a
// query before it runs.
const MaxDedups = 255

// PlanFor resolves c against schema and plans it the way Spark 3.5's
// analyzer, UnsupportedOperationChecker and watermark propagation would,
// and rejects every chain that Spark would fail, whenever it fails it,
// reporting the first error in the order Spark raises them:
//
//  1. column resolution, operator by operator in chain order (Spark
//     analyses each Dataset method eagerly): a missing column, a
//     withWatermark column that matches several columns case-insensitively
//     (AMBIGUOUS_REFERENCE), and a withWatermark column that is not a
//     timestamp ("Event time must be defined on a window or a timestamp");
//  2. at query start: dropDuplicatesWithinWatermark whose input carries no
//     watermark ("dropDuplicatesWithinWatermark is not supported on
//     streaming DataFrames/DataSets without watermark");
//  3. later, while the query runs: a second withWatermark ("Redefining
//     watermark is disallowed"), which Spark raises only when it plans a
//     micro-batch with a non-zero watermark (see Redefinition). PlanFor
//     rejects it, saying when Spark would fail; PlanDeferred keeps it in
//     the plan so that the executor fails at that batch.
//
// A chain with no operator, no dedup operator or more than MaxDedups is
// rejected first: dedupsim only simulates dedup queries.
//
// Column names resolve case-insensitively (spark.sql.caseSensitive=false).
// A dedup key resolves as Dataset.groupColsFromDropDuplicates does: its
// distinct names, each expanded to every column it matches, so that
// dropDuplicates(["id"]) on a frame with id and ID keys on both, and
// dropDuplicates() names every column (see Node.KeyColumns).
func PlanFor(c Chain, schema Schema) (Plan, error) {
	p, err := PlanDeferred(c, schema)
	if err != nil {
		return Plan{}, err
	}
	if r := p.Redefinition; r != nil {
		return Plan{}, opErr(r.Node+1, WithWatermark, "%s", r.Message)
	}
	return p, nil
}

// PlanDeferred is PlanFor without the failures Spark raises only while the
// query runs: a chain with a second withWatermark gets a plan whose
// Redefinition says where and when Spark fails it. The replay executor
// uses it to run the batches Spark runs before that failure.
func PlanDeferred(c Chain, schema Schema) (Plan, error) {
	if len(c.Ops) == 0 {
		return Plan{}, errors.New("query: no operators (want at least a dropDuplicates or dropDuplicatesWithinWatermark)")
	}
	dedups := 0
	for i, op := range c.Ops {
		switch op.Kind {
		case WithWatermark:
		case TransformWithStateDedup:
			timed := op.Timer != "" || op.TimerMs > 0
			switch {
			case timed && (len(c.Ops) != 2 || i != 1 || c.Ops[0].Kind != WithWatermark):
				return Plan{}, opErr(i+1, op.Kind, "an event-time transformWithState dedup (timer=) must follow one withWatermark and nothing else: withWatermark(\"event_time\", \"10 seconds\").groupBy(\"event_id\").transformWithState(DedupProcessor(timer=\"1 minute\"), timeMode=\"EventTime\")")
			case !timed && len(c.Ops) > 1:
				return Plan{}, opErr(i+1, op.Kind, "a processing-time transformWithState dedup must be the query's only operator (dedupsim models it alone: no withWatermark, no other dedup)")
			}
			dedups++
		case DropDuplicates, DropDuplicatesWithinWatermark:
			dedups++
			if dedups > MaxDedups {
				return Plan{}, opErr(i+1, op.Kind, "more than %d dedup operators (dedupsim numbers a query's dedup operators in a byte; split the query)", MaxDedups)
			}
		default:
			return Plan{}, fmt.Errorf("query: operator %d: unknown operator kind %d", i+1, int(op.Kind))
		}
	}
	if dedups == 0 {
		return Plan{}, errors.New("query: no dedup operator (want dropDuplicates or dropDuplicatesWithinWatermark; dedupsim simulates dedup queries only)")
	}

	p := Plan{Chain: c, Schema: schema, Nodes: make([]Node, len(c.Ops))}
	// Pass 1: resolve every operator, as Spark's eager analysis does.
	for i, op := range c.Ops {
		n := i + 1
		node := Node{Op: op, EventTimeColumn: -1}
		node.Op.Keys = append([]string(nil), op.Keys...)
		switch op.Kind {
		case WithWatermark:
			col, err := schema.resolve(op.Column)
			if err != nil {
				return Plan{}, opErr(n, op.Kind, "column %q %s", op.Column, err)
			}
			if schema[col].Type != Timestamp {
				return Plan{}, opErr(n, op.Kind, "column %q is not a timestamp column (Spark: event time must be defined on a window or a timestamp)", schema[col].Name)
			}
			ms := op.DelayMs
			if op.Delay != "" {
				if ms, err = interval.ParseSpark(op.Delay); err != nil {
					return Plan{}, opErr(n, op.Kind, "delay: %v", err)
				}
			} else if ms < 0 {
				return Plan{}, opErr(n, op.Kind, "delay %d ms: a watermark delay must not be negative", ms)
			}
			node.Op.DelayMs = ms
			node.EventTimeColumn, node.DelayMs = col, ms
			p.HasWatermark = true
		default:
			node.Operator = "dedupe"
			switch op.Kind {
			case DropDuplicatesWithinWatermark:
				node.Operator = "dedupeWithinWatermark"
			case TransformWithStateDedup:
				node.Operator = TWSOperatorName
				if op.TTL != "" {
					ms, err := interval.ParseSpark(op.TTL)
					if err != nil {
						return Plan{}, opErr(n, op.Kind, "ttl: %v", err)
					}
					if ms <= 0 {
						return Plan{}, opErr(n, op.Kind, "ttl %q: Spark wants a positive TTL duration", op.TTL)
					}
					node.Op.TTLMs = ms
				} else if op.TTLMs < 0 {
					return Plan{}, opErr(n, op.Kind, "ttl %d ms: Spark wants a positive TTL duration", op.TTLMs)
				}
				if op.Timer != "" {
					ms, err := interval.ParseSpark(op.Timer)
					if err != nil {
						return Plan{}, opErr(n, op.Kind, "timer: %v", err)
					}
					if ms <= 0 {
						return Plan{}, opErr(n, op.Kind, "timer %q: want a positive horizon", op.Timer)
					}
					node.Op.TimerMs = ms
				} else if op.TimerMs < 0 {
					return Plan{}, opErr(n, op.Kind, "timer %d ms: want a positive horizon", op.TimerMs)
				}
			}
			names := op.Keys
			if op.AllColumns {
				// dropDuplicates() is dropDuplicates(df.columns). An input
				// without columns makes every row the same key, as Spark's
				// Deduplicate over no attributes would.
				names = make([]string, len(schema))
				for j, col := range schema {
					names[j] = col.Name
				}
			} else if len(op.Keys) == 0 {
				return Plan{}, opErr(n, op.Kind, "keys: empty key list (want %s() for all columns, or at least one column name)", op.Kind)
			}
			seen := map[string]bool{}
			for _, k := range names {
				if seen[k] {
					continue // colNames.toSet: a name given twice counts once
				}
				seen[k] = true
				cols := schema.matches(k)
				if len(cols) == 0 {
					return Plan{}, opErr(n, op.Kind, "key %q not found (columns: %s)", k, schema.names())
				}
				for _, col := range cols {
					node.KeyColumns = append(node.KeyColumns, col)
					node.KeyNames = append(node.KeyNames, schema[col].Name)
				}
			}
		}
		p.Nodes[i] = node
	}

	// Pass 2: propagate the watermark down the chain, as the event-time
	// metadata of the column flows through Spark's plan: a dedup sees the
	// column and delay of the nearest withWatermark before it (a later
	// withWatermark replaces the delay key of the column's metadata, and
	// removes it from any other column).
	wm := -1 // index in Nodes of the nearest withWatermark upstream
	for i := range p.Nodes {
		node := &p.Nodes[i]
		if !node.IsDedup() {
			wm = i
			continue
		}
		if wm >= 0 {
			node.EventTimeColumn = p.Nodes[wm].EventTimeColumn
			node.DelayMs = p.Nodes[wm].DelayMs
			node.WatermarkReaches = true
			node.EventTimeInKeys = slices.Contains(node.KeyColumns, node.EventTimeColumn)
		} else if node.Op.Kind == DropDuplicatesWithinWatermark {
			hint := "add withWatermark before it"
			if later := p.watermarkAfter(i); later >= 0 {
				hint = fmt.Sprintf("operator %d withWatermark comes after it; move it before", later+1)
			}
			return Plan{}, opErr(i+1, node.Op.Kind, "dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets without watermark (%s)", hint)
		}
	}

	// Pass 3: one watermark per query, checked when Spark checks it.
	first := -1
	for i, node := range p.Nodes {
		if node.IsDedup() {
			continue
		}
		if first >= 0 {
			p.Redefinition = &Redefinition{Node: i, First: first, Message: fmt.Sprintf(
				"Redefining watermark is disallowed (AnalysisException; operator %d already sets a watermark, on %s): "+
					"Spark 3.5 starts this query and fails it at the first micro-batch it plans with a watermark other than 0, "+
					"that is once rows move the watermark past 0; the batches before it run and commit their output",
				first+1, p.colName(p.Nodes[first].EventTimeColumn))}
			break
		}
		first = i
	}
	p.Warnings = p.warnings()
	return p, nil
}

// Redefinition is a second withWatermark in a chain. Spark 3.5 (with
// spark.sql.streaming.statefulOperator.allowMultiple=true, the default)
// raises "Redefining watermark is disallowed" from its watermark
// propagation (PropagateWatermarkSimulator), which skips a watermark of 0:
// so the query fails at the first micro-batch planned with a late-event or
// eviction watermark other than 0, or, with no-data batches enabled, at
// the trigger after the batch that moved the watermark (when Spark asks
// the last batch whether another one is needed), never before.
type Redefinition struct {
	// Node is the index in Plan.Nodes of the second withWatermark, First
	// that of the first one.
	Node, First int
	// Message says what Spark raises and when.
	Message string
}

// watermarkAfter returns the index of the first withWatermark after node
// i, or -1.
func (p Plan) watermarkAfter(i int) int {
	for j := i + 1; j < len(p.Nodes); j++ {
		if !p.Nodes[j].IsDedup() {
			return j
		}
	}
	return -1
}

// resolve finds the one column name refers to, the way Spark's analyzer
// resolves withWatermark's UnresolvedAttribute with the default
// case-insensitive resolver: every column whose name equals it ignoring
// case is a candidate, an exact-case match has no precedence, and several
// candidates are an AMBIGUOUS_REFERENCE. The error text continues a
// message that names the column.
func (s Schema) resolve(name string) (int, error) {
	cols := s.matches(name)
	switch len(cols) {
	case 1:
		return cols[0], nil
	case 0:
		return -1, fmt.Errorf("not found (columns: %s)", s.names())
	}
	names := make([]string, len(cols))
	for j, i := range cols {
		names[j] = showName(s[i].Name)
	}
	return -1, fmt.Errorf("is ambiguous (Spark: AMBIGUOUS_REFERENCE): it matches columns %s, names being case-insensitive", strings.Join(names, ", "))
}

// matches returns, in schema order, every column whose name equals name
// ignoring case (Spark's caseInsensitiveResolution).
func (s Schema) matches(name string) []int {
	var out []int
	for i, c := range s {
		if strings.EqualFold(c.Name, name) {
			out = append(out, i)
		}
	}
	return out
}

// names lists the schema's column names for messages.
func (s Schema) names() string {
	if len(s) == 0 {
		return "none"
	}
	names := make([]string, len(s))
	for i, c := range s {
		names[i] = showName(c.Name)
	}
	return strings.Join(names, ", ")
}

// InferSchema returns a schema for explaining c when no data is known:
// every column the chain names, in order of first mention, names that
// differ only in case counted once (as Spark would resolve them), and the
// withWatermark columns typed Timestamp, so that dropDuplicates() covers
// the event time as it would on real data.
func InferSchema(c Chain) Schema {
	var s Schema
	add := func(name string, ts bool) {
		if name == "" {
			return
		}
		for i := range s {
			if strings.EqualFold(s[i].Name, name) {
				if ts {
					s[i].Type = Timestamp
				}
				return
			}
		}
		t := Other
		if ts {
			t = Timestamp
		}
		s = append(s, Column{Name: name, Type: t})
	}
	for _, op := range c.Ops {
		if op.Kind == WithWatermark {
			add(op.Column, true)
			continue
		}
		for _, k := range op.Keys {
			add(k, false)
		}
	}
	return s
}
