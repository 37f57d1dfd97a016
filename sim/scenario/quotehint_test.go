package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestYAMLErrorsNearAQueryHintAtQuoting: a query YAML misreads (quotes in
// a quoted value, ": " in a plain one) gets the way to write it; a syntax
// error far from any query gets no such hint.
func TestYAMLErrorsNearAQueryHintAtQuoting(t *testing.T) {
	head := "name: q\nduration: 10m\nworkload:\n  rate: 100/s\nqueries:\n  - name: a\n"
	for _, c := range []struct {
		body string
		hint bool
	}{
		{"    query: \"SELECT * FROM t WHERE a = \"x\"\"\n", true},
		{"    query: withWatermark(\"event_time\", \"10 minutes\"): dropDuplicates()\n", true},
		{"    query: dropDuplicates()\n", false},
	} {
		p := filepath.Join(t.TempDir(), "s.yaml")
		text := head + c.body
		if !c.hint {
			// A syntax error on line 2, five lines above the query.
			text = strings.Replace(text, "duration: 10m", "duration: [a: b: c]", 1)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if err == nil {
			t.Fatalf("%q: loaded", c.body)
		}
		if got := strings.Contains(err.Error(), "single quotes"); got != c.hint {
			t.Errorf("%q: %v; hint %v, want %v", c.body, err, got, c.hint)
		}
	}
}
