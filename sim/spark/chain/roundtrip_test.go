package chain

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines/interval"
	"pgregory.net/rapid"
)

// genName draws a column name: usually identifier-like, sometimes any
// Unicode text, with quotes and backslashes, to exercise the quoting.
var genName = rapid.OneOf(
	rapid.StringMatching(`[a-zA-Z_][a-zA-Z0-9_]{0,12}`),
	rapid.StringN(1, 10, -1),
	rapid.SampledFrom([]string{`it's`, `say "hi"`, `a\b`, "tab\tnew\nline", "é", "\u00a0", "\x00", "😀", `\`, `'`, `"`, "#", "a.b"}),
)

var delayUnits = []string{
	"millisecond", "milliseconds", "second", "seconds", "minute", "minutes",
	"hour", "hours", "day", "days", "week", "weeks", "SECONDS", "Minutes",
}

// genDelay draws a valid Spark interval string ("1 minute 30 seconds").
var genDelay = rapid.Custom(func(t *rapid.T) string {
	n := rapid.IntRange(1, 3).Draw(t, "parts")
	var parts []string
	if rapid.Bool().Draw(t, "interval") {
		parts = append(parts, "interval")
	}
	for i := 0; i < n; i++ {
		num := rapid.IntRange(0, 100000).Draw(t, "num")
		unit := rapid.SampledFrom(delayUnits).Draw(t, "unit")
		parts = append(parts, itoa(num), unit)
	}
	return strings.Join(parts, rapid.SampledFrom([]string{" ", "  ", "\t"}).Draw(t, "sep"))
})

func itoa(i int) string { return strconv.Itoa(i) }

// genChain draws a chain of one to six operators, valid for Parse (not
// necessarily plannable: that is PlanFor's business).
var genChain = rapid.Custom(func(t *rapid.T) Chain {
	n := rapid.IntRange(1, 6).Draw(t, "ops")
	var c Chain
	for i := 0; i < n; i++ {
		kind := rapid.SampledFrom([]OpKind{WithWatermark, DropDuplicates, DropDuplicatesWithinWatermark}).Draw(t, "kind")
		op := Op{Kind: kind}
		if kind == WithWatermark {
			op.Column = genName.Draw(t, "column")
			op.Delay = genDelay.Draw(t, "delay")
			ms, err := interval.ParseSpark(op.Delay)
			if err != nil {
				t.Fatalf("generated delay %q: %v", op.Delay, err)
			}
			op.DelayMs = ms
		} else if rapid.IntRange(0, 3).Draw(t, "all") == 0 {
			op.AllColumns = true
		} else {
			op.Keys = rapid.SliceOfN(genName, 1, 5).Draw(t, "keys")
		}
		c.Ops = append(c.Ops, op)
	}
	return c
})

// TestStringParseRoundTrip: for any chain, Parse(c.String()) is c, and the
// canonical form is a fixed point.
func TestStringParseRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genChain.Draw(t, "chain")
		s := c.String()
		got, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%s): %v", s, err)
		}
		if !got.Equal(c) {
			t.Fatalf("Parse(String()) differs:\n  in  %#v\n  out %#v\n  text %s", c.Ops, got.Ops, s)
		}
		if again := got.String(); again != s {
			t.Fatalf("canonical form is not a fixed point: %s then %s", s, again)
		}
	})
}

// TestStructuredRoundTrip: the JSON array form and a JSON string holding
// the PySpark form both parse to the same chain.
func TestStructuredRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genChain.Draw(t, "chain")
		var arr []map[string]any
		for _, op := range c.Ops {
			m := map[string]any{"op": op.Kind.String()}
			switch {
			case op.Kind == WithWatermark:
				m["column"], m["delay"] = op.Column, op.Delay
			case !op.AllColumns:
				m["keys"] = op.Keys
			case rapid.Bool().Draw(t, "null"):
				m["keys"] = nil
			}
			arr = append(arr, m)
		}
		raw, _ := json.Marshal(arr)
		got, err := ParseJSON(raw)
		if err != nil || !got.Equal(c) {
			t.Fatalf("ParseJSON(%s) = %#v, %v; want %#v", raw, got.Ops, err, c.Ops)
		}
		if got, err := Parse(string(raw)); err != nil || !got.Equal(c) {
			t.Fatalf("Parse(%s) = %#v, %v; want %#v", raw, got.Ops, err, c.Ops)
		}
		quoted, _ := json.Marshal(c.String())
		if got, err := ParseJSON(quoted); err != nil || !got.Equal(c) {
			t.Fatalf("ParseJSON(%s) = %#v, %v; want %#v", quoted, got.Ops, err, c.Ops)
		}
	})
}

// quoteWith renders s as a Python literal in quote q (' or ").
func quoteWith(s string, q rune) string {
	var b strings.Builder
	b.WriteRune(q)
	for _, r := range s {
		switch {
		case r == q:
			b.WriteString(`\` + string(q))
		case r == '"' || r == '\'':
			b.WriteRune(r)
		default:
			inner := pyQuote(string(r))
			b.WriteString(inner[1 : len(inner)-1])
		}
	}
	b.WriteRune(q)
	return b.String()
}

// TestLayoutsParseAlike renders random chains in the many ways users write
// them (receivers, parentheses, continuations, quotes, keywords, tuples,
// varargs, Scala Seq, aliases) and checks they all parse to the chain.
func TestLayoutsParseAlike(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genChain.Draw(t, "chain")
		sep := func() string {
			return rapid.SampledFrom([]string{"", " ", "\n    ", " \\\n  ", "\t", "  # note\n "}).Draw(t, "sep")
		}
		quote := func(s string) string {
			return quoteWith(s, rapid.SampledFrom([]rune{'"', '\''}).Draw(t, "quote"))
		}
		list := func(keys []string, open, close string, trailing bool) string {
			q := make([]string, len(keys))
			for i, k := range keys {
				q[i] = quote(k)
			}
			s := open + strings.Join(q, ","+sep())
			if trailing {
				s += ","
			}
			return s + close
		}
		var calls []string
		for _, op := range c.Ops {
			var call string
			switch op.Kind {
			case WithWatermark:
				col, delay := quote(op.Column), quote(op.Delay)
				switch rapid.IntRange(0, 3).Draw(t, "wmForm") {
				case 0:
					call = "withWatermark(" + col + "," + sep() + delay + ")"
				case 1:
					call = "withWatermark(eventTime=" + col + ", delayThreshold=" + delay + ")"
				case 2:
					call = "withWatermark(delayThreshold=" + delay + "," + sep() + "eventTime=" + col + ",)"
				default:
					call = "withWatermark(" + col + ", delayThreshold =" + delay + ")"
				}
			default:
				name := op.Kind.String()
				if op.Kind == DropDuplicates && rapid.Bool().Draw(t, "alias") {
					name = "drop_duplicates"
				}
				if op.AllColumns {
					forms := []string{"()", "(None)", "(subset=None)", "(" + sep() + ")"}
					call = name + rapid.SampledFrom(forms).Draw(t, "allForm")
					if op.Kind == DropDuplicates && rapid.IntRange(0, 4).Draw(t, "distinct") == 0 {
						call = "distinct()"
					}
					break
				}
				switch rapid.IntRange(0, 5).Draw(t, "ddForm") {
				case 0:
					call = name + "(" + list(op.Keys, "[", "]", rapid.Bool().Draw(t, "trailing")) + ")"
				case 1:
					call = name + "(" + list(op.Keys, "(", ")", len(op.Keys) == 1) + ")"
				case 2:
					call = name + list(op.Keys, "(", ")", false) // varargs
				case 3:
					call = name + "(subset=" + list(op.Keys, "[", "]", false) + ")"
				case 4:
					call = name + "(" + list(op.Keys, "Seq(", ")", false) + ")"
				default:
					call = name + "(subset=" + list(op.Keys, "(", ")", true) + ")"
				}
			}
			calls = append(calls, call)
		}
		text := ""
		for i, call := range calls {
			if i > 0 {
				text += sep() + "."
			}
			text += call
		}
		switch rapid.IntRange(0, 3).Draw(t, "receiver") {
		case 1:
			text = "df." + text
		case 2:
			text = "(events" + sep() + "." + text + ")"
		case 3:
			text = "deduped = (spark_df\n  ." + text + "\n)"
		}
		got, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		if !got.Equal(c) {
			t.Fatalf("Parse(%q):\n  got  %#v\n  want %#v", text, got.Ops, c.Ops)
		}
	})
}

// TestPlanNeverPanics plans random chains against their inferred schema:
// it either fails with one line or yields a plan whose warnings point at
// dedup nodes and whose explanation renders.
func TestPlanNeverPanics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genChain.Draw(t, "chain")
		p, err := PlanFor(c, InferSchema(c))
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "query: ") {
				t.Fatalf("error not one line: %q", msg)
			}
			return
		}
		for _, w := range p.Warnings {
			if w.Node < 0 || w.Node >= len(p.Nodes) || !p.Nodes[w.Node].IsDedup() {
				t.Fatalf("warning %+v does not point at a dedup node", w)
			}
		}
		checkExplainLines(t, p)
	})
}

// FuzzParse checks that Parse never panics, that its errors are one line,
// and that whatever it accepts has a canonical form that parses back to
// the same chain (and plans or fails cleanly):
//
//	go test -fuzz=FuzzParse ./sim/spark/chain
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.in)
	}
	for _, in := range parseErrorCases {
		f.Add(in)
	}
	for _, tc := range explainCases {
		f.Add(tc.query)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "query: ") {
				t.Fatalf("Parse(%q): error not one line: %q", s, msg)
			}
			return
		}
		if len(c.Ops) == 0 || c.Text != s {
			t.Fatalf("Parse(%q) = %#v: want operators and the text", s, c)
		}
		canon := c.String()
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) gave %s, which does not parse: %v", s, canon, err)
		}
		if !again.Equal(c) {
			t.Fatalf("Parse(%q) gave %s, which parses to %#v, not %#v", s, canon, again.Ops, c.Ops)
		}
		if again.String() != canon {
			t.Fatalf("canonical form not a fixed point: %s then %s", canon, again.String())
		}
		p, err := PlanFor(c, InferSchema(c))
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("PlanFor(%s): error not one line: %q", canon, msg)
			}
			return
		}
		checkExplainLines(t, p)
	})
}

// checkExplainLines checks that Explain gives one line per part (query,
// header, node, source, warnings), so no name can break its layout.
func checkExplainLines(t interface{ Fatalf(string, ...any) }, p Plan) {
	out := Explain(p)
	want := 1 + 1 + len(p.Nodes) + 1 + 1 + len(p.Warnings)
	if got := strings.Count(out, "\n"); got != want || strings.ContainsAny(out, "\r\x00\x1b") {
		t.Fatalf("Explain has %d lines, want %d, or holds control characters:\n%s", got, want, out)
	}
}
