package chain

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// warnings finds the pitfalls of docs/semantics.md in a resolved plan: for each
// dedup operator in chain order, at most one about its watermark and keys,
// then one if a key name matches columns that differ only in case.
func (p Plan) warnings() []Warning {
	var out []Warning
	for i, n := range p.Nodes {
		if !n.IsDedup() {
			continue
		}
		call := fmt.Sprintf("operator %d %s", i+1, n.Op)
		w := Warning{Node: i}
		switch {
		case n.Op.Kind == TransformWithStateDedup && (n.Op.TTLMs > 0 || n.Op.TimerMs > 0):
			// A processing-time TTL or an event-time timer bounds the
			// state: no pitfall.
		case n.Op.Kind == TransformWithStateDedup:
			w.Code = NoWatermark
			w.Message = fmt.Sprintf("%s has no TTL: its ValueState is never removed, so state grows forever. "+
				"Give the processor a TTL, DedupProcessor(ttl=\"10 minutes\"), so that a key's state is removed that long after it was set.", call)
		case !n.WatermarkReaches && p.watermarkAfter(i) >= 0:
			wm := p.Nodes[p.watermarkAfter(i)]
			w.Code = WatermarkAfterDedup
			w.Message = fmt.Sprintf("%s comes before withWatermark(%s, ...) (operator %d), so the watermark never reaches it: "+
				"no row is dropped as late, no key is ever evicted, and state grows forever. "+
				"Move withWatermark before the dedup.",
				call, pyQuote(p.colName(wm.EventTimeColumn)), p.watermarkAfter(i)+1)
		case !n.WatermarkReaches:
			w.Code = NoWatermark
			w.Message = fmt.Sprintf("%s has no watermark: state grows forever, every key is kept for the life of the query. "+
				"Add withWatermark(\"<event time column>\", \"<delay>\") before it and use dropDuplicatesWithinWatermark(%s) so that keys expire.",
				call, idList(n))
		case n.Op.Kind != DropDuplicates:
			// dropDuplicatesWithinWatermark with its watermark: the intended use
		case !n.EventTimeInKeys:
			et := showName(p.Schema[n.EventTimeColumn].Name)
			w.Code = EventTimeNotInKeys
			w.Message = fmt.Sprintf("%s has a watermark on %s but %s is not among its keys: it dedups globally, "+
				"so keys are never evicted (state grows forever), yet rows at or below the watermark are still dropped as late. "+
				"Use dropDuplicatesWithinWatermark(%s) to forget a key once the watermark passes its first event time plus the delay, "+
				"or add %s to the keys if every copy carries the same event time.",
				call, et, et, idList(n), et)
		default:
			et := showName(p.Schema[n.EventTimeColumn].Name)
			var ids []string
			for _, k := range n.KeyColumns {
				if k != n.EventTimeColumn {
					ids = append(ids, p.Schema[k].Name) // quoted by pyList
				}
			}
			what := "keys on the event time " + et
			if n.Op.AllColumns {
				what = "keys on every column, the event time " + et + " included"
			}
			instead := `dropDuplicatesWithinWatermark(["<id column>"])`
			if len(ids) > 0 && !n.Op.AllColumns {
				instead = "dropDuplicatesWithinWatermark(" + pyList(ids, false) + ")"
			}
			w.Code = EventTimeInKeys
			w.Message = fmt.Sprintf("%s %s: a key is evicted once the watermark passes its event time, "+
				"but a retry whose timestamp was re-stamped (10:00:00 vs 10:00:01) is a different key and is emitted again. "+
				"If copies may carry different timestamps, use %s instead.",
				call, what, instead)
		}
		if w.Code != "" {
			out = append(out, w)
		}
		if m := p.caseVariants(n); m != "" {
			out = append(out, Warning{Code: CaseVariantKeys, Node: i, Message: call + " " + m})
		}
	}
	return out
}

// caseVariants describes the keys of dedup n that match several columns
// differing only in case, or returns "".
func (p Plan) caseVariants(n Node) string {
	if n.Op.AllColumns {
		return "" // every column is a key anyway
	}
	var parts, cols []string
	seen := map[string]bool{}
	for _, k := range n.Op.Keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		m := p.Schema.matches(k)
		if len(m) < 2 {
			continue
		}
		names := make([]string, len(m))
		for j, c := range m {
			names[j] = showName(p.Schema[c].Name)
		}
		parts = append(parts, fmt.Sprintf("key %s matches columns %s", pyQuote(k), strings.Join(names, ", ")))
		for _, c := range names {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": Spark resolves names case-insensitively and keys on every match " +
		"(Dataset.dropDuplicates), so two rows are duplicates only when " + strings.Join(cols, ", ") + " are all equal. " +
		"Rename or drop the column you do not mean before the dedup."
}

// idList renders the keys of a dedup as a Python list to suggest in a
// message: its keys as written, each once, or a placeholder for all
// columns, which would include the event time.
func idList(n Node) string {
	if n.Op.AllColumns {
		return `["<id column>"]`
	}
	var keys []string
	for _, k := range n.Op.Keys {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return pyList(keys, false)
}

// pyList renders names as a Python list literal, or nothing for all
// columns, to quote a call in a message.
func pyList(names []string, all bool) string {
	if all {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = pyQuote(n)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Explain renders p for `simulate explain`: the query in canonical form,
// the physical operators sink side first with the source last, as Spark's
// explain() prints them, then the warnings. For example:
//
//	query: withWatermark("event_time", "20 minutes").dropDuplicates(["event_id", "event_time"])
//	== Physical Plan (sink first) ==
//	dedupe keys=[event_id, event_time] watermark=event_time delay=20m late=dropped evicts=when event_time <= watermark
//	+- EventTimeWatermark event_time, 20 minutes
//	   +- source [event_time: timestamp, event_id]
//	warnings:
//	- event-time-in-keys: operator 2 dropDuplicates(["event_id", "event_time"]) keys on the event time ...
//
// A dedup line says which keys it stores, whether a watermark reaches it
// (late=dropped: rows at or below the watermark are dropped before state is
// consulted) and when a key leaves its state.
func Explain(p Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query: %s\n", p.Chain)
	b.WriteString("== Physical Plan (sink first) ==\n")
	indent := ""
	for i := len(p.Nodes) - 1; i >= 0; i-- {
		prefix := ""
		if i < len(p.Nodes)-1 {
			prefix = indent + "+- "
			indent += "   "
		}
		b.WriteString(prefix + p.explainNode(i) + "\n")
	}
	cols := make([]string, len(p.Schema))
	for i, c := range p.Schema {
		cols[i] = showName(c.Name)
		if c.Type == Timestamp {
			cols[i] += ": timestamp"
		}
	}
	prefix := ""
	if len(p.Nodes) > 0 {
		prefix = indent + "+- "
	}
	fmt.Fprintf(&b, "%ssource [%s]\n", prefix, strings.Join(cols, ", "))
	if len(p.Warnings) == 0 {
		b.WriteString("warnings: none\n")
		return b.String()
	}
	b.WriteString("warnings:\n")
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "- %s: %s\n", w.Code, w.Message)
	}
	return b.String()
}

// explainNode renders node i on one line.
func (p Plan) explainNode(i int) string {
	n := p.Nodes[i]
	if !n.IsDedup() {
		delay := n.Op.Delay
		if delay == "" {
			delay = fmt.Sprintf("%d milliseconds", n.DelayMs)
		}
		return fmt.Sprintf("EventTimeWatermark %s, %s", p.colName(n.EventTimeColumn), strings.Join(strings.Fields(delay), " "))
	}
	var b strings.Builder
	keys := make([]string, len(n.KeyNames))
	for j, k := range n.KeyNames {
		keys[j] = showName(k)
	}
	fmt.Fprintf(&b, "%s keys=[%s]", n.Operator, strings.Join(keys, ", "))
	if n.Op.Kind == TransformWithStateDedup {
		if n.Op.TimerMs > 0 {
			et := p.colName(n.EventTimeColumn)
			fmt.Fprintf(&b, " timeMode=EventTime watermark=%s delay=%s late=dropped timer=first %s + %s evicts=when watermark >= first %s + %s (the timer fires after the batch's rows)",
				et, formatMs(n.DelayMs), et, formatMs(n.Op.TimerMs), et, formatMs(n.Op.TimerMs))
			return b.String()
		}
		if n.Op.TTLMs > 0 {
			fmt.Fprintf(&b, " timeMode=ProcessingTime ttl=%s evicts=when batch timestamp >= set time + %s (then removed at the batch's end)", formatMs(n.Op.TTLMs), formatMs(n.Op.TTLMs))
		} else {
			b.WriteString(" timeMode=ProcessingTime ttl=none evicts=never")
		}
		return b.String()
	}
	if !n.WatermarkReaches {
		b.WriteString(" watermark=none")
		if p.watermarkAfter(i) >= 0 {
			b.WriteString(" (withWatermark is downstream)")
		}
		b.WriteString(" late=kept evicts=never")
		return b.String()
	}
	et := p.colName(n.EventTimeColumn)
	delay := formatMs(n.DelayMs)
	fmt.Fprintf(&b, " watermark=%s delay=%s late=dropped", et, delay)
	switch {
	case n.Op.Kind == DropDuplicatesWithinWatermark:
		fmt.Fprintf(&b, " evicts=when watermark >= first %s + %s", et, delay)
	case n.EventTimeInKeys:
		fmt.Fprintf(&b, " evicts=when %s <= watermark", et)
	default:
		fmt.Fprintf(&b, " evicts=never (%s not in keys)", et)
	}
	return b.String()
}

// colName returns the name of schema column i, tolerating a plan built by
// hand with an index out of range.
func (p Plan) colName(i int) string {
	if i >= 0 && i < len(p.Schema) {
		return showName(p.Schema[i].Name)
	}
	return fmt.Sprintf("column#%d", i)
}

// formatMs renders a delay compactly ("20m", "1h30m", "7d"), falling back
// to milliseconds beyond what a time.Duration holds (about 292 years).
func formatMs(ms int64) string {
	if ms < 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return fmt.Sprintf("%dms", ms)
	}
	return interval.Format(time.Duration(ms) * time.Millisecond)
}
