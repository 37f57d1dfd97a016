package chain

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// Parse parses a query as users paste it from PySpark (or Scala) code, or
// the structured JSON form of the replay format when the trimmed text
// starts with "[".
//
// The PySpark form is a method chain, the receiver optional:
//
//	events.withWatermark("event_time", "20 minutes").dropDuplicates(["event_id", "event_time"])
//	(df
//	   .withWatermark(eventTime="ts", delayThreshold="10 seconds")
//	   .dropDuplicatesWithinWatermark(subset=["id"]))
//
// Layout is free (newlines, backslash continuations, comments), strings use
// single, double or triple quotes with Python escapes, and a dedup takes a
// list, a tuple, Scala's Seq(...), several names, subset=, or nothing (all
// columns). drop_duplicates is PySpark's alias of dropDuplicates and
// distinct() is Dataset.distinct, which Spark defines as dropDuplicates().
//
// Every error is one line starting with "query: ", naming the operator by
// position (1-based) and method, the field, and what was expected; byte
// offsets point into text. Chain.Text is text unchanged.
func Parse(text string) (Chain, error) {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return Chain{}, errors.New("query: empty (want e.g. withWatermark(\"event_time\", \"20 minutes\").dropDuplicatesWithinWatermark([\"event_id\"]))")
	}
	if strings.HasPrefix(trimmed, "[") {
		lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
		ops, err := parseStructured([]byte(trimmed), lead)
		if err != nil {
			return Chain{}, err
		}
		return Chain{Ops: ops, Text: text}, nil
	}
	toks, err := lex(text)
	if err != nil {
		return Chain{}, err
	}
	p := &parser{toks: toks}
	ops, err := p.chain()
	if err != nil {
		return Chain{}, err
	}
	return Chain{Ops: ops, Text: text}, nil
}

// The method names the parser knows, with the operator each one means.
var methods = map[string]OpKind{
	"withWatermark":                 WithWatermark,
	"dropDuplicates":                DropDuplicates,
	"drop_duplicates":               DropDuplicates,
	"distinct":                      DropDuplicates,
	"dropDuplicatesWithinWatermark": DropDuplicatesWithinWatermark,
}

const wantOps = "want withWatermark, dropDuplicates, dropDuplicatesWithinWatermark or groupBy(...).transformWithState(DedupProcessor(...))"

// twsMethods are the PySpark methods that apply a stateful processor to a
// groupBy: transformWithState (pyspark 4.1+, Row-based) and
// transformWithStateInPandas (4.0+).
var twsMethods = []string{"transformWithState", "transformWithStateInPandas"}

// parser is a recursive-descent parser over the tokens of one query.
type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token        { return p.toks[p.pos] }
func (p *parser) peekAt(k int) token { return p.toks[min(p.pos+k, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func unexpected(t token, want string) error {
	if want != "" {
		return fmt.Errorf("query: unexpected %s at offset %d (want %s)", t.describe(), t.off, want)
	}
	return fmt.Errorf("query: unexpected %s at offset %d", t.describe(), t.off)
}

// segment is one link of a method chain: a name, called or not.
type segment struct {
	name   token
	called bool
	args   []arg
	close  token // the ")" of the call, for messages
}

// arg is one argument of a call, keyword or positional.
type arg struct {
	keyword *token
	val     value
}

type valueKind int

const (
	vString valueKind = iota
	vList             // [a, b]
	vTuple            // (a, b) or (a,)
	vName             // None, True, a variable
	vCall             // Seq("a", "b"), col("a")
	vNumber
)

// value is a parsed argument value.
type value struct {
	kind  valueKind
	off   int
	str   string  // vString: decoded text; vName, vCall, vNumber: the name as written
	elems []value // vList, vTuple
	args  []arg   // vCall
}

// describe renders v for an error message.
func (v value) describe() string {
	switch v.kind {
	case vString:
		return "string " + pyQuote(v.str)
	case vList:
		return "a list"
	case vTuple:
		return "a tuple"
	case vCall:
		return v.str + "(...)"
	case vNumber:
		return "number " + v.str
	}
	return v.str
}

// chain parses the whole query: an optional assignment ("deduped = "), then
// a postfix expression of names, attributes and calls, possibly wrapped in
// parentheses, then optional semicolons.
func (p *parser) chain() ([]Op, error) {
	if p.peek().kind == tIdent && p.peekAt(1).kind == tAssign {
		p.pos += 2
	}
	var segs []segment
	if err := p.postfix(&segs, 0); err != nil {
		return nil, err
	}
	for p.peek().kind == tSemicolon {
		p.next()
	}
	if t := p.peek(); t.kind != tEOF {
		if t.kind == tRParen {
			return nil, unexpected(t, "")
		}
		return nil, unexpected(t, `"." and a method call, or the end of the query`)
	}
	return interpret(segs)
}

// maxDepth bounds the nesting of parentheses and brackets, so that a
// hostile input cannot exhaust the stack.
const maxDepth = 64

// postfix parses primary ( "." name | "(" args ")" )*, where primary is a
// name or a parenthesised postfix expression, appending to segs.
func (p *parser) postfix(segs *[]segment, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("query: parentheses nested too deeply at offset %d", p.peek().off)
	}
	// lastIsName says whether the previous token was a segment's name, the
	// only place a call may follow.
	lastIsName := false
	switch t := p.peek(); t.kind {
	case tIdent:
		p.next()
		*segs = append(*segs, segment{name: t})
		lastIsName = true
	case tLParen:
		open := p.next()
		if err := p.postfix(segs, depth+1); err != nil {
			return err
		}
		if c := p.next(); c.kind != tRParen {
			return unexpected(c, fmt.Sprintf(`")" to close "(" at offset %d`, open.off))
		}
	case tDot:
		// ".withWatermark(...)" with the receiver left out.
	case tEOF:
		return unexpected(t, "a query such as withWatermark(...).dropDuplicates(...)")
	default:
		return unexpected(t, "a method call such as dropDuplicates(...)")
	}
	for {
		switch t := p.peek(); t.kind {
		case tDot:
			p.next()
			name := p.next()
			if name.kind != tIdent {
				return unexpected(name, "a method name after \".\"")
			}
			*segs = append(*segs, segment{name: name})
			lastIsName = true
		case tLParen:
			if !lastIsName {
				return unexpected(t, "")
			}
			p.next()
			args, err := p.args(tRParen, depth+1)
			if err != nil {
				return err
			}
			s := &(*segs)[len(*segs)-1]
			s.called, s.args, s.close = true, args, p.toks[p.pos-1]
			lastIsName = false
		default:
			return nil
		}
	}
}

// args parses a comma-separated argument list up to and including the
// closing token, allowing a trailing comma as Python does.
func (p *parser) args(closing tokKind, depth int) ([]arg, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("query: parentheses nested too deeply at offset %d", p.peek().off)
	}
	var out []arg
	seenKeyword := false
	for {
		if p.peek().kind == closing {
			p.next()
			return out, nil
		}
		var a arg
		if t := p.peek(); t.kind == tIdent && p.peekAt(1).kind == tAssign {
			for _, b := range out {
				if b.keyword != nil && b.keyword.raw == t.raw {
					// Python: "SyntaxError: keyword argument repeated".
					return nil, fmt.Errorf("query: keyword argument %s repeated at offset %d (Python refuses a call that names one twice)", t.raw, t.off)
				}
			}
			p.pos += 2
			a.keyword = &t
			seenKeyword = true
		} else if seenKeyword {
			return nil, fmt.Errorf("query: positional argument after a keyword argument at offset %d", t.off)
		}
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		a.val = v
		out = append(out, a)
		switch t := p.next(); t.kind {
		case tComma:
		case closing:
			return out, nil
		default:
			return nil, unexpected(t, fmt.Sprintf(`"," or %q`, closer(closing)))
		}
	}
}

func closer(k tokKind) string {
	if k == tRBrack {
		return "]"
	}
	return ")"
}

// value parses one argument value: strings (adjacent literals concatenate
// as in Python), lists, tuples or parenthesised values, names, calls such
// as Seq("a"), and numbers (which are never valid, but make clear errors).
func (p *parser) value(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, fmt.Errorf("query: brackets nested too deeply at offset %d", p.peek().off)
	}
	t := p.next()
	switch t.kind {
	case tString:
		s := t.val
		for p.peek().kind == tString {
			s += p.next().val
		}
		return value{kind: vString, off: t.off, str: s}, nil
	case tNumber:
		return value{kind: vNumber, off: t.off, str: t.raw}, nil
	case tIdent:
		if p.peek().kind != tLParen {
			return value{kind: vName, off: t.off, str: t.raw}, nil
		}
		p.next()
		args, err := p.args(tRParen, depth+1)
		if err != nil {
			return value{}, err
		}
		return value{kind: vCall, off: t.off, str: t.raw, args: args}, nil
	case tLBrack:
		elems, _, err := p.elems(tRBrack, depth+1)
		if err != nil {
			return value{}, err
		}
		return value{kind: vList, off: t.off, elems: elems}, nil
	case tLParen:
		elems, comma, err := p.elems(tRParen, depth+1)
		if err != nil {
			return value{}, err
		}
		if len(elems) == 1 && !comma {
			return elems[0], nil // ("a") is just "a" in Python
		}
		return value{kind: vTuple, off: t.off, elems: elems}, nil
	}
	return value{}, unexpected(t, "a value such as \"event_id\" or [\"event_id\"]")
}

// elems parses the elements of a list or tuple up to the closing token and
// reports whether a comma was seen (which makes ("a",) a tuple).
func (p *parser) elems(closing tokKind, depth int) ([]value, bool, error) {
	var out []value
	comma := false
	for {
		if p.peek().kind == closing {
			p.next()
			return out, comma, nil
		}
		v, err := p.value(depth)
		if err != nil {
			return nil, false, err
		}
		out = append(out, v)
		switch t := p.next(); t.kind {
		case tComma:
			comma = true
		case closing:
			return out, comma, nil
		default:
			return nil, false, unexpected(t, fmt.Sprintf(`"," or %q`, closer(closing)))
		}
	}
}

// interpret turns the segments of a method chain into operators: leading
// uncalled names are the receiver (df, self.events), every call after them
// must be one of the known methods.
func interpret(segs []segment) ([]Op, error) {
	var ops []Op
	var group *segment // a groupBy(...) waiting for its transformWithState
	for i := range segs {
		s := segs[i]
		if s.called && s.name.raw == "groupBy" {
			if group != nil {
				return nil, fmt.Errorf("query: groupBy at offset %d follows groupBy at offset %d (want groupBy(...).transformWithState(...))", s.name.off, group.name.off)
			}
			group = &segs[i]
			continue
		}
		if slices.Contains(twsMethods, s.name.raw) && s.called {
			if group == nil {
				return nil, fmt.Errorf("query: operator %d (transformWithState): %s at offset %d needs groupBy(keys) before it", len(ops)+1, s.name.raw, s.name.off)
			}
			op, err := twsOp(len(ops)+1, *group, s)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
			group = nil
			continue
		}
		if group != nil {
			return nil, fmt.Errorf("query: unknown operator \"groupBy\" at offset %d (dedupsim models groupBy only before transformWithState(DedupProcessor(...)), got %q at offset %d)", group.name.off, s.name.raw, s.name.off)
		}
		kind, known := methods[s.name.raw]
		if !s.called {
			if known {
				return nil, fmt.Errorf("query: operator %d (%s): missing argument list after %s at offset %d (want %s(...))",
					len(ops)+1, kind, s.name.raw, s.name.off, s.name.raw)
			}
			if len(ops) > 0 {
				return nil, fmt.Errorf("query: unexpected attribute %q at offset %d (want a method call such as .dropDuplicates(...))", s.name.raw, s.name.off)
			}
			continue // part of the receiver
		}
		if !known {
			hint := wantOps
			for m := range methods {
				if strings.EqualFold(m, s.name.raw) {
					hint = "did you mean " + m + "? method names are case-sensitive"
				}
			}
			return nil, fmt.Errorf("query: unknown operator %q at offset %d (%s)", s.name.raw, s.name.off, hint)
		}
		n := len(ops) + 1
		var op Op
		var err error
		if kind == WithWatermark {
			op, err = watermarkOp(n, s)
		} else {
			op, err = dedupOp(n, kind, s)
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if group != nil {
		return nil, fmt.Errorf("query: unknown operator \"groupBy\" at offset %d (dedupsim models groupBy only before transformWithState(DedupProcessor(...)))", group.name.off)
	}
	if len(ops) == 0 {
		return nil, errors.New("query: no operator (" + wantOps + ")")
	}
	return ops, nil
}

// twsOp interprets groupBy(keys).transformWithState(DedupProcessor(ttl=...),
// outputStructType=..., outputMode="Append", timeMode="ProcessingTime"): the
// processor must be DedupProcessor (dedupsim's name for the dedup processor
// of docs/spark-model.md), its only argument an optional ttl interval;
// timeMode, when given, must be "ProcessingTime" (the only mode modelled),
// outputMode "Append" or "Update"; outputStructType is not read.
func twsOp(n int, group, s segment) (Op, error) {
	op := Op{Kind: TransformWithStateDedup}
	k := TransformWithStateDedup
	var names []value
	for _, a := range group.args {
		if a.keyword != nil {
			return op, opErr(n, k, "groupBy: unexpected keyword %q at offset %d (want column names)", a.keyword.raw, a.keyword.off)
		}
		if a.val.kind == vList || a.val.kind == vTuple {
			names = append(names, a.val.elems...)
		} else {
			names = append(names, a.val)
		}
	}
	if len(names) == 0 {
		return op, opErr(n, k, "groupBy: at least one key column (want groupBy(\"event_id\"))")
	}
	for i, v := range names {
		if v.kind != vString || v.str == "" {
			return op, opErr(n, k, "groupBy key %d: want a column name in quotes, got %s at offset %d", i+1, v.describe(), v.off)
		}
		op.Keys = append(op.Keys, v.str)
	}
	var proc *value
	timeMode := ""
	for i, a := range s.args {
		name := ""
		switch {
		case a.keyword != nil:
			name = a.keyword.raw
		case i == 0:
			name = "statefulProcessor"
		case i == 1:
			name = "outputStructType"
		case i == 2:
			name = "outputMode"
		case i == 3:
			name = "timeMode"
		default:
			return op, opErr(n, k, "unexpected argument %d at offset %d", i+1, a.val.off)
		}
		switch name {
		case "statefulProcessor":
			v := a.val
			proc = &v
		case "outputStructType":
		case "outputMode":
			if a.val.kind != vString || (a.val.str != "Append" && a.val.str != "Update") {
				return op, opErr(n, k, "outputMode: want \"Append\" or \"Update\", got %s at offset %d", a.val.describe(), a.val.off)
			}
		case "timeMode":
			if a.val.kind != vString {
				return op, opErr(n, k, "timeMode: want \"ProcessingTime\" or \"EventTime\", got %s at offset %d", a.val.describe(), a.val.off)
			}
			timeMode = a.val.str
		default:
			return op, opErr(n, k, "unknown keyword %q at offset %d (want statefulProcessor, outputStructType, outputMode or timeMode)", name, a.keyword.off)
		}
	}
	if proc == nil {
		return op, opErr(n, k, "missing processor (want transformWithState(DedupProcessor(ttl=\"10 minutes\")))")
	}
	if proc.kind != vCall || proc.str != "DedupProcessor" {
		return op, opErr(n, k, "processor: want DedupProcessor(...), got %s at offset %d (dedupsim models the dedup processor only)", proc.describe(), proc.off)
	}
	for i, a := range proc.args {
		name := "ttl"
		if a.keyword != nil {
			name = a.keyword.raw
		}
		if (a.keyword == nil && i > 0) || (name != "ttl" && name != "timer") {
			return op, opErr(n, k, "DedupProcessor: want only ttl=\"<interval>\" or timer=\"<interval>\", got an argument at offset %d", a.val.off)
		}
		if a.val.kind != vString {
			return op, opErr(n, k, "%s: want an interval in quotes such as \"10 minutes\", got %s at offset %d", name, a.val.describe(), a.val.off)
		}
		ms, err := interval.ParseSpark(a.val.str)
		if err != nil {
			return op, opErr(n, k, "%s: %v", name, err)
		}
		if name == "timer" {
			if ms <= 0 {
				return op, opErr(n, k, "timer %q: want a positive horizon", a.val.str)
			}
			op.Timer, op.TimerMs = a.val.str, ms
			continue
		}
		if ms <= 0 {
			return op, opErr(n, k, "ttl %q: Spark wants a positive TTL duration", a.val.str)
		}
		op.TTL, op.TTLMs = a.val.str, ms
	}
	switch {
	case op.Timer != "" && op.TTL != "":
		return op, opErr(n, k, "DedupProcessor: ttl and timer together: dedupsim models a processing-time TTL (timeMode \"ProcessingTime\") or an event-time timer (timeMode \"EventTime\"), one at a time")
	case op.Timer != "" && !strings.EqualFold(timeMode, "EventTime"):
		return op, opErr(n, k, "DedupProcessor(timer=...) registers event-time timers: want timeMode=\"EventTime\"")
	case op.Timer != "":
	case timeMode == "" || strings.EqualFold(timeMode, "ProcessingTime"):
	case strings.EqualFold(timeMode, "EventTime"):
		return op, opErr(n, k, "timeMode \"EventTime\": dedupsim models the event-time processor with a timer (want DedupProcessor(timer=\"10 minutes\"))")
	default:
		return op, opErr(n, k, "timeMode %q: want \"ProcessingTime\" (with ttl=) or \"EventTime\" (with timer=)", timeMode)
	}
	return op, nil
}

// opErr formats an error about operator n.
func opErr(n int, kind OpKind, format string, a ...any) error {
	return fmt.Errorf("query: operator %d (%s): %s", n, kind, fmt.Sprintf(format, a...))
}

// watermarkOp interprets withWatermark(eventTime, delayThreshold), the
// PySpark (and Scala) parameter names accepted as keywords.
func watermarkOp(n int, s segment) (Op, error) {
	op := Op{Kind: WithWatermark}
	var col, delay *value
	for i, a := range s.args {
		name := ""
		switch {
		case a.keyword == nil && i == 0:
			name = "eventTime"
		case a.keyword == nil && i == 1:
			name = "delayThreshold"
		case a.keyword == nil:
			return op, opErr(n, WithWatermark, "unexpected argument %d at offset %d (want a column and a delay)", i+1, a.val.off)
		default:
			name = a.keyword.raw
		}
		switch name {
		case "eventTime":
			if col != nil {
				return op, opErr(n, WithWatermark, "column given twice, at offset %d", a.val.off)
			}
			col = &a.val
		case "delayThreshold":
			if delay != nil {
				return op, opErr(n, WithWatermark, "delay given twice, at offset %d", a.val.off)
			}
			delay = &a.val
		default:
			return op, opErr(n, WithWatermark, "unknown keyword %q at offset %d (want eventTime or delayThreshold)", name, a.keyword.off)
		}
	}
	if col == nil {
		return op, opErr(n, WithWatermark, "missing column (want withWatermark(\"event_time\", \"10 minutes\"))")
	}
	if col.kind != vString {
		return op, opErr(n, WithWatermark, "column: want a column name in quotes, got %s at offset %d", col.describe(), col.off)
	}
	if col.str == "" {
		return op, opErr(n, WithWatermark, "column: empty name at offset %d", col.off)
	}
	if delay == nil {
		return op, opErr(n, WithWatermark, "missing delay (want withWatermark(%s, \"10 minutes\"))", pyQuote(col.str))
	}
	if delay.kind != vString {
		return op, opErr(n, WithWatermark, "delay: want an interval in quotes such as \"10 minutes\", got %s at offset %d", delay.describe(), delay.off)
	}
	ms, err := interval.ParseSpark(delay.str)
	if err != nil {
		return op, opErr(n, WithWatermark, "delay: %v", err)
	}
	op.Column, op.Delay, op.DelayMs = col.str, delay.str, ms
	return op, nil
}

// seqNames are the Scala collection constructors accepted as a key list.
var seqNames = []string{"Seq", "List", "Array"}

// dedupOp interprets dropDuplicates and dropDuplicatesWithinWatermark in
// every form PySpark 3.5 and 4.x and Scala accept.
func dedupOp(n int, kind OpKind, s segment) (Op, error) {
	op := Op{Kind: kind}
	method := s.name.raw
	if method == "distinct" {
		if len(s.args) > 0 {
			return op, opErr(n, kind, "distinct() takes no arguments, got one at offset %d", s.args[0].val.off)
		}
		op.AllColumns = true
		return op, nil
	}
	var vals []value
	for _, a := range s.args {
		if a.keyword != nil {
			if a.keyword.raw != "subset" {
				return op, opErr(n, kind, "unknown keyword %q at offset %d (want subset)", a.keyword.raw, a.keyword.off)
			}
			if len(s.args) > 1 {
				return op, opErr(n, kind, "subset= given with other arguments, at offset %d", a.keyword.off)
			}
		}
		vals = append(vals, a.val)
	}
	if len(vals) == 0 || len(vals) == 1 && vals[0].kind == vName && vals[0].str == "None" {
		op.AllColumns = true
		return op, nil
	}
	var names []value
	if len(vals) == 1 {
		switch v := vals[0]; {
		case v.kind == vList || v.kind == vTuple:
			names = v.elems
		case v.kind == vCall && slices.Contains(seqNames, v.str):
			for _, a := range v.args {
				if a.keyword != nil {
					return op, opErr(n, kind, "keys: unexpected keyword %q at offset %d", a.keyword.raw, a.keyword.off)
				}
				names = append(names, a.val)
			}
		case v.kind == vString:
			names = vals
		default:
			return op, opErr(n, kind, "keys: want a list of column names such as [\"event_id\"], got %s at offset %d", v.describe(), v.off)
		}
		if len(names) == 0 {
			return op, opErr(n, kind, "keys: empty key list at offset %d (want %s() for all columns, or at least one column name)", vals[0].off, method)
		}
	} else {
		names = vals // varargs: dropDuplicates("a", "b")
	}
	for i, v := range names {
		if v.kind != vString {
			return op, opErr(n, kind, "key %d: want a column name in quotes, got %s at offset %d", i+1, v.describe(), v.off)
		}
		if v.str == "" {
			return op, opErr(n, kind, "key %d: empty name at offset %d", i+1, v.off)
		}
		op.Keys = append(op.Keys, v.str)
	}
	return op, nil
}
