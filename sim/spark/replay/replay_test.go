package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// conformanceReasons are what the error lines of the shared error cases
// (testdata/conformance, a copy that gets no file of dedupsim's own) must
// contain.
var conformanceReasons = map[string]string{
	"deduplicate-without-event-time-column-should-result-in-error-all-columns": "dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets without watermark",
	"own-error-key-column-missing":                                             "not found",
}

// TestConformance runs the sample traces of the conformance contract
// (copied into testdata/conformance, never rewritten) and this project's
// own cases (testdata/cases, each with a notes file deriving its expected
// values by hand) and compares every batch with the comparison rule of the
// format. Expected outputs are never generated from dedupsim's output:
// there is no -update for them.
//
// An error case expects exit non-zero and nothing on stdout, and here also
// its reason: the one error line must contain every line of
// NAME.error-reason.txt (an error class such as INVALID_UNIT, or a
// phrase), which every own error case has; check.py ignores that file.
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
				want := readJSONL(t, expPath)
				reason, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".error-reason.txt")
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				if r, ok := conformanceReasons[name]; ok && dir == "testdata/conformance" {
					reason = []byte(r)
				}
				if len(want) == 1 && isErrorLine(want[0]) {
					if runErr == nil {
						t.Fatalf("want the trace rejected, it ran %d batches", len(lines))
					}
					if strings.Contains(runErr.Error(), "\n") {
						t.Fatalf("error is not one line: %q", runErr)
					}
					r := strings.TrimSpace(string(reason))
					if r == "" {
						t.Fatalf("an error case needs its reason in %s.error-reason.txt", name)
					}
					for _, part := range strings.Split(r, "\n") {
						if !strings.Contains(runErr.Error(), strings.TrimSpace(part)) {
							t.Fatalf("error %q does not give the reason %q", runErr, part)
						}
					}
					return
				}
				if len(reason) > 0 {
					t.Fatalf("%s.error-reason.txt beside a case that is not an error", name)
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

// compareBatch applies the comparison rule of docs/replay-format.md: the fields the expected
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

// TestManualClockSteps: advanceManualClock needs "manualClock": true and
// the value true; rows added before a restart stay available and run at
// the first trigger after it, in the order added.
func TestManualClockSteps(t *testing.T) {
	for _, bad := range []string{
		`{"query": "dropDuplicates()", "steps": [{"advanceManualClock": true}]}`,
		`{"query": "dropDuplicates()", "manualClock": true, "steps": [{"advanceManualClock": false}]}`,
		`{"query": "dropDuplicates()", "manualClock": true, "steps": [{"advanceManualClock": true, "restart": true}]}`,
	} {
		if _, err := Load([]byte(bad)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Load(%s): %v, want a one-line error", bad, err)
		}
	}
	tr, err := Load([]byte(`{"query": "dropDuplicates([\"id\"])", "manualClock": true, "steps": [
		{"addData": [{"id": "a"}]}, {"addData": []}, {"addData": [{"id": "b"}, {"id": "a"}]},
		{"restart": true}, {"advanceManualClock": true}, {"advanceManualClock": true},
		{"addData": []}, {"advanceManualClock": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Run(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("%d batches, want 2 (one per trigger with data): %+v", len(lines), lines)
	}
	if l := lines[0]; l.Step != 4 || l.NumInputRows != 3 || len(l.Rows) != 2 || string(l.Rows[0]) != `{"id":"a"}` || string(l.Rows[1]) != `{"id":"b"}` {
		t.Errorf("first batch: %+v", l)
	}
	if l := lines[1]; l.BatchID != 1 || l.Step != 7 || l.NumInputRows != 0 || l.NoData {
		t.Errorf("an empty addData still makes a (data) batch at the next trigger: %+v", l)
	}
}
