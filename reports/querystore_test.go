package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// TestSummaryTableShowsMixedStores: queries that ran on different state
// stores get a store column after the query's name, in the Markdown and
// the terminal tables; queries that share one store get the tables as
// before, whichever store it is.
func TestSummaryTableShowsMixedStores(t *testing.T) {
	s, _ := singleRun(t)
	if len(s.Queries) < 2 {
		t.Fatalf("the fixture has %d queries, want at least 2", len(s.Queries))
	}
	tables := func(s *metrics.Summary) (md, term string) {
		var a, b bytes.Buffer
		if err := SummaryTable(&a, s, true); err != nil {
			t.Fatal(err)
		}
		if err := SummaryTable(&b, s, false); err != nil {
			t.Fatal(err)
		}
		return a.String(), b.String()
	}
	setStores := func(stores ...string) *metrics.Summary {
		c := *s
		c.Queries = append([]metrics.QuerySummary(nil), s.Queries...)
		for i := range c.Queries {
			c.Queries[i].Store = stores[min(i, len(stores)-1)]
		}
		return &c
	}
	memMD, memTerm := tables(setStores("memory"))
	pebMD, pebTerm := tables(setStores("pebble"))
	if memMD != pebMD || memTerm != pebTerm {
		t.Errorf("one shared store changed the tables:\n%s\n%s", memMD, pebMD)
	}
	if strings.Contains(memMD, "store") || strings.Contains(memTerm, "store") {
		t.Errorf("a store column with one shared store:\n%s%s", memMD, memTerm)
	}

	mixed := setStores("memory", "pebble")
	md, term := tables(mixed)
	lines := strings.Split(strings.TrimSpace(md), "\n")
	cellsOf := func(line string) []string {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		return cells
	}
	if h := cellsOf(lines[0]); len(h) < 2 || h[0] != "query" || h[1] != "store" {
		t.Fatalf("mixed stores: Markdown header %q, want query then store", lines[0])
	}
	for i, q := range mixed.Queries {
		c := cellsOf(lines[i+2])
		if len(c) != len(summaryHeader(mixed)) || c[0] != q.Name || c[1] != q.Store {
			t.Errorf("Markdown row %d: %q, want %s then %s in %d cells", i, lines[i+2], q.Name, q.Store, len(summaryHeader(mixed)))
		}
	}
	tl := strings.Split(term, "\n")
	if f := strings.Fields(tl[0]); len(f) < 2 || f[0] != "query" || f[1] != "store" {
		t.Fatalf("mixed stores: terminal header %q, want query then store", tl[0])
	}
	// A row starts on a line with a value in the store column (a long
	// name or a count wraps onto the next lines, the store never does).
	col := strings.Index(tl[0], "store")
	var stores []string
	for _, l := range tl[2:] {
		if len(l) > col && l[col] != ' ' {
			stores = append(stores, strings.Fields(l[col:])[0])
		}
	}
	if len(stores) != len(mixed.Queries) {
		t.Fatalf("terminal table has %d rows, want %d:\n%s", len(stores), len(mixed.Queries), term)
	}
	for i, q := range mixed.Queries {
		if stores[i] != q.Store {
			t.Errorf("terminal row %d: store %s, want %s:\n%s", i, stores[i], q.Store, term)
		}
	}
}
