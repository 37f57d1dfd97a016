package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected output of the cases in testdata/cases")

// TestConformance runs the sample traces of shared/conformance (copied into
// testdata/conformance, never rewritten) and this project's own cases
// (testdata/cases, each with a notes file explaining its expected values)
// and compares every batch with the rule of FORMAT.md.
func TestConformance(t *testing.T) {
	for _, dir := range []string{"testdata/conformance", "testdata/cases"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no cases in %s", dir)
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			t.Run(name, func(t *testing.T) {
				expPath := strings.TrimSuffix(f, ".json") + ".expected.jsonl"
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				lines, runErr := runTrace(data)
				if *update && dir == "testdata/cases" {
					writeExpected(t, expPath, lines, runErr)
				}
				want := readJSONL(t, expPath)
				if len(want) == 1 && isErrorLine(want[0]) {
					if runErr == nil {
						t.Fatalf("want the trace rejected, it ran %d batches", len(lines))
					}
					if strings.Contains(runErr.Error(), "\n") {
						t.Fatalf("error is not one line: %q", runErr)
					}
					return
				}
				if runErr != nil {
					t.Fatalf("unexpected error: %v", runErr)
				}
				var got []map[string]any
				var buf bytes.Buffer
				if err := WriteLines(&buf, lines); err != nil {
					t.Fatal(err)
				}
				for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					if l == "" {
						continue
					}
					got = append(got, decode(t, []byte(l)))
				}
				for i := range want {
					if i >= len(got) {
						t.Fatalf("expected %d batches, got %d (first missing: batchId %v)", len(want), len(got), want[i]["batchId"])
					}
					if d := compareBatch(want[i], got[i]); d != "" {
						t.Fatalf("batch #%d (batchId %v): %s", i, want[i]["batchId"], d)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("expected %d batches, got %d", len(want), len(got))
				}
			})
		}
	}
}

func runTrace(data []byte) ([]BatchLine, error) {
	tr, err := Load(data)
	if err != nil {
		return nil, err
	}
	return Run(tr)
}

func writeExpected(t *testing.T, path string, lines []BatchLine, err error) {
	var buf bytes.Buffer
	if err != nil {
		buf.WriteString("{\"error\": true}\n")
	} else if werr := WriteLines(&buf, lines); werr != nil {
		t.Fatal(werr)
	}
	if werr := os.WriteFile(path, buf.Bytes(), 0o644); werr != nil {
		t.Fatal(werr)
	}
}

func readJSONL(t *testing.T, path string) []map[string]any {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		out = append(out, decode(t, sc.Bytes()))
	}
	return out
}

func decode(t *testing.T, b []byte) map[string]any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("bad JSON line %q: %v", b, err)
	}
	return m
}

func isErrorLine(m map[string]any) bool {
	return len(m) == 1 && m["error"] == true
}

// compareBatch applies FORMAT.md's comparison rule: the fields the expected
// line lists must match; rows compare as multisets of JSON values.
func compareBatch(want, got map[string]any) string {
	for _, f := range []string{"batchId", "step", "noData", "numInputRows"} {
		if w, ok := want[f]; ok && !sameJSON(w, got[f]) {
			return fmt.Sprintf("%s: expected %v, got %v", f, w, got[f])
		}
	}
	wwm := nested(want, "eventTime", "watermark")
	gwm := nested(got, "eventTime", "watermark")
	if !sameJSON(wwm, gwm) {
		return fmt.Sprintf("eventTime.watermark: expected %v, got %v", wwm, gwm)
	}
	if wops, ok := want["stateOperators"].([]any); ok {
		gops, _ := got["stateOperators"].([]any)
		if len(wops) != len(gops) {
			return fmt.Sprintf("stateOperators: expected %d, got %d", len(wops), len(gops))
		}
		for k := range wops {
			wo, go_ := wops[k].(map[string]any), gops[k].(map[string]any)
			for f, wv := range wo {
				if f == "customMetrics" {
					for m, mv := range wv.(map[string]any) {
						if gv := nested(go_, "customMetrics", m); !sameJSON(mv, gv) {
							return fmt.Sprintf("stateOperators[%d].customMetrics.%s: expected %v, got %v", k, m, mv, gv)
						}
					}
					continue
				}
				if !sameJSON(wv, go_[f]) {
					return fmt.Sprintf("stateOperators[%d].%s: expected %v, got %v", k, f, wv, go_[f])
				}
			}
		}
	}
	if w := nested(want, "sink", "numOutputRows"); w != nil && !sameJSON(w, nested(got, "sink", "numOutputRows")) {
		return fmt.Sprintf("sink.numOutputRows: expected %v, got %v", w, nested(got, "sink", "numOutputRows"))
	}
	if wr, ok := want["rows"].([]any); ok {
		gr, _ := got["rows"].([]any)
		if a, b := canonRows(wr), canonRows(gr); strings.Join(a, "|") != strings.Join(b, "|") {
			return fmt.Sprintf("rows differ: expected %v, got %v", a, b)
		}
	}
	return ""
}

func nested(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func sameJSON(a, b any) bool { return canon(a) == canon(b) }

// canon renders a JSON value canonically: numbers by exact value, object
// keys sorted.
func canon(v any) string {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return "n?" + string(x)
		}
		return "n" + r.RatString()
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("{")
		for _, k := range keys {
			fmt.Fprintf(&b, "%q:%s,", k, canon(x[k]))
		}
		return b.String() + "}"
	case []any:
		var b strings.Builder
		b.WriteString("[")
		for _, e := range x {
			b.WriteString(canon(e) + ",")
		}
		return b.String() + "]"
	case string:
		return "s" + x
	default:
		return fmt.Sprintf("%T%v", v, v)
	}
}

func canonRows(rows []any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = canon(r)
	}
	sort.Strings(out)
	return out
}
