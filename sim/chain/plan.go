package chain

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dedupsim/dedupsim/sim/interval"
)

// PlanFor resolves c against schema and plans it the way Spark 3.5's
// analyzer, UnsupportedOperationChecker and watermark propagation would,
// reporting the first error in the order Spark raises them:
//
//  1. column resolution, operator by operator in chain order (Spark
//     analyses each Dataset method eagerly): a missing column, and a
//     withWatermark column that is not a timestamp ("Event time must be
//     defined on a window or a timestamp");
//  2. at query start: dropDuplicatesWithinWatermark whose input carries no
//     watermark ("dropDuplicatesWithinWatermark is not supported on
//     streaming DataFrames/DataSets without watermark");
//  3. at the first batch: a withWatermark downstream of another one
//     ("Redefining watermark is disallowed", PropagateWatermarkSimulator,
//     the default since spark.sql.streaming.statefulOperator.allowMultiple
//     became true).
//
// A chain with no operator or no dedup operator is rejected first: dedupsim
// only simulates dedup queries.
//
// Column names resolve case-insensitively (spark.sql.caseSensitive=false);
// an exact-case match wins, and a name that matches several columns only
// case-insensitively is ambiguous. Keys that resolve to the same column
// are collapsed, first occurrence kept.
func PlanFor(c Chain, schema Schema) (Plan, error) {
	if len(c.Ops) == 0 {
		return Plan{}, errors.New("query: no operators (want at least a dropDuplicates or dropDuplicatesWithinWatermark)")
	}
	hasDedup := false
	for i, op := range c.Ops {
		switch op.Kind {
		case WithWatermark:
		case DropDuplicates, DropDuplicatesWithinWatermark:
			hasDedup = true
		default:
			return Plan{}, fmt.Errorf("query: operator %d: unknown operator kind %d", i+1, int(op.Kind))
		}
	}
	if !hasDedup {
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
					return Plan{}, opErr(n, op.Kind, "delay %v", err)
				}
			} else if ms < 0 {
				return Plan{}, opErr(n, op.Kind, "delay %d ms: a watermark delay must not be negative", ms)
			}
			node.Op.DelayMs = ms
			node.EventTimeColumn, node.DelayMs = col, ms
			p.HasWatermark = true
		default:
			node.Operator = "dedupe"
			if op.Kind == DropDuplicatesWithinWatermark {
				node.Operator = "dedupeWithinWatermark"
			}
			if op.AllColumns {
				// An input without columns makes every row the same key, as
				// Spark's Deduplicate over no attributes would.
				for j, col := range schema {
					node.KeyColumns = append(node.KeyColumns, j)
					node.KeyNames = append(node.KeyNames, col.Name)
				}
				break
			}
			if len(op.Keys) == 0 {
				return Plan{}, opErr(n, op.Kind, "keys: empty key list (want %s() for all columns, or at least one column name)", op.Kind)
			}
			for _, k := range op.Keys {
				col, err := schema.resolve(k)
				if err != nil {
					return Plan{}, opErr(n, op.Kind, "key %q %s", k, err)
				}
				if !slices.Contains(node.KeyColumns, col) {
					node.KeyColumns = append(node.KeyColumns, col)
					node.KeyNames = append(node.KeyNames, schema[col].Name)
				}
			}
		}
		p.Nodes[i] = node
	}

	// Pass 2: propagate the watermark down the chain, as the event-time
	// metadata of the column flows through Spark's plan.
	wm := -1 // index in Nodes of the withWatermark upstream, if any
	for i := range p.Nodes {
		node := &p.Nodes[i]
		if !node.IsDedup() {
			if wm < 0 {
				wm = i
			}
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

	// Pass 3: one watermark per query.
	first := -1
	for i, node := range p.Nodes {
		if node.IsDedup() {
			continue
		}
		if first >= 0 {
			return Plan{}, opErr(i+1, WithWatermark, "Redefining watermark is disallowed (operator %d already sets one on %q; since Spark 3.5 a query may hold only one withWatermark)", first+1, p.Schema[p.Nodes[first].EventTimeColumn].Name)
		}
		first = i
	}
	p.Warnings = p.warnings()
	return p, nil
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

// resolve finds the column name refers to, the way Spark's default
// case-insensitive resolver would, preferring an exact-case match. The
// error text continues a message that names the column.
func (s Schema) resolve(name string) (int, error) {
	exact, folded := -1, []int(nil)
	for i, c := range s {
		if c.Name == name {
			if exact >= 0 {
				return -1, fmt.Errorf("is ambiguous: the input has two columns of that name")
			}
			exact = i
		} else if strings.EqualFold(c.Name, name) {
			folded = append(folded, i)
		}
	}
	switch {
	case exact >= 0:
		return exact, nil
	case len(folded) == 1:
		return folded[0], nil
	case len(folded) > 1:
		names := make([]string, len(folded))
		for j, i := range folded {
			names[j] = pyQuote(s[i].Name)
		}
		return -1, fmt.Errorf("is ambiguous: it matches columns %s (names are case-insensitive; spell one exactly)", strings.Join(names, ", "))
	}
	return -1, fmt.Errorf("not found (columns: %s)", s.names())
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
