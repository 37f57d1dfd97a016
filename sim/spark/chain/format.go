package chain

import (
	"slices"
	"strconv"
	"strings"
)

// String renders c in canonical PySpark form, without a receiver:
//
//	withWatermark("event_time", "20 minutes").dropDuplicates(["event_id", "event_time"])
//
// Parse(c.String()) gives a chain Equal to c, so the canonical form can be
// stored in results and read back. Text is not part of it.
func (c Chain) String() string {
	parts := make([]string, len(c.Ops))
	for i, op := range c.Ops {
		parts[i] = op.String()
	}
	return strings.Join(parts, ".")
}

// String renders op as one PySpark method call: keys as written (not yet
// resolved against a schema), dropDuplicates() for all columns, and the
// delay as written (or in milliseconds when only DelayMs is set).
func (op Op) String() string {
	var b strings.Builder
	if op.Kind == TransformWithStateDedup {
		b.WriteString("groupBy(")
		for i, k := range op.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyQuote(k))
		}
		b.WriteString(").transformWithState(DedupProcessor(")
		if op.TTL != "" {
			b.WriteString("ttl=" + pyQuote(op.TTL))
		} else if op.TTLMs > 0 {
			b.WriteString("ttl=" + pyQuote(strconv.FormatInt(op.TTLMs, 10)+" milliseconds"))
		}
		timer := op.Timer
		if timer == "" && op.TimerMs > 0 {
			timer = strconv.FormatInt(op.TimerMs, 10) + " milliseconds"
		}
		if timer != "" {
			b.WriteString("timer=" + pyQuote(timer) + "), timeMode=\"EventTime\")")
			return b.String()
		}
		b.WriteString("))")
		return b.String()
	}
	b.WriteString(op.Kind.String())
	b.WriteByte('(')
	switch op.Kind {
	case WithWatermark:
		b.WriteString(pyQuote(op.Column))
		b.WriteString(", ")
		delay := op.Delay
		if delay == "" {
			delay = strconv.FormatInt(op.DelayMs, 10) + " milliseconds"
		}
		b.WriteString(pyQuote(delay))
	default:
		if !op.AllColumns {
			b.WriteByte('[')
			for i, k := range op.Keys {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(pyQuote(k))
			}
			b.WriteByte(']')
		}
	}
	b.WriteByte(')')
	return b.String()
}

// Equal reports whether c and d hold the same operators. Text is ignored:
// two spellings of one query are equal.
func (c Chain) Equal(d Chain) bool {
	return slices.EqualFunc(c.Ops, d.Ops, Op.Equal)
}

// Equal reports whether op and o are the same operator with the same
// arguments as written (keys in order, delay text and value).
func (op Op) Equal(o Op) bool {
	return op.Kind == o.Kind && op.Column == o.Column && op.Delay == o.Delay &&
		op.DelayMs == o.DelayMs && op.AllColumns == o.AllColumns && slices.Equal(op.Keys, o.Keys) &&
		op.TTL == o.TTL && op.TTLMs == o.TTLMs && op.Timer == o.Timer && op.TimerMs == o.TimerMs
}
