package scenario

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestQueryStorePrecedence: a query's own store beats the scenario's,
// which beats the default (memory); a scenario without queries[].store
// marshals without the key, as before queries had stores.
func TestQueryStorePrecedence(t *testing.T) {
	const base = "name: s\nduration: 1h\nworkload:\n  rate: 10/s\n"
	// q is a query in block form, with its own store unless store is "".
	q := func(name, store string) string {
		out := "  - name: " + name + "\n    query: dropDuplicates([\"event_id\"])\n"
		if store != "" {
			out += "    store: " + store + "\n"
		}
		return out
	}
	for _, c := range []struct {
		yaml string
		want []string
	}{
		{base + "queries:\n" + q("a", "") + q("b", ""), []string{"memory", "memory"}},
		{base + "store: pebble\nqueries:\n" + q("a", "") + q("b", "memory"), []string{"pebble", "memory"}},
		{base + "queries:\n" + q("a", "pebble") + q("b", ""), []string{"pebble", "memory"}},
		{base + "store: pebble\nqueries:\n" + q("a", "pebble") + q("b", ""), []string{"pebble", "pebble"}},
	} {
		s, err := Parse([]byte(c.yaml), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range c.want {
			if got := s.QueryStore(i); got != w {
				t.Errorf("%s\nqueries[%d] on %s, want %s", c.yaml, i, got, w)
			}
		}
		data, _ := json.Marshal(s.Queries)
		if has, set := strings.Contains(string(data), `"store"`), strings.Contains(c.yaml, "    store:"); has != set {
			t.Errorf("queries marshal as %s; a query's store set: %v", data, set)
		}
	}
}
