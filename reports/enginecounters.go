package reports

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// engineCountersTitle is the title of the reports' section of the
// engines' own counters (summary.json's engineCounters).
const engineCountersTitle = "Engine counters"

// counterColumns returns the counters the queries' summaries describe
// (summary.json's engineCounterInfo, which sim/registry fills), in the
// order they first appear: the reports know no engine's counters
// themselves.
func counterColumns(qs []*metrics.QuerySummary) []metrics.CounterInfo {
	var out []metrics.CounterInfo
	for _, q := range qs {
		for _, c := range q.EngineCounterInfo {
			if !slices.ContainsFunc(out, func(o metrics.CounterInfo) bool { return o.Name == c.Name }) {
				out = append(out, c)
			}
		}
	}
	return out
}

// counterQueries returns the queries of s that carry engine counters (the
// queries of engines other than Spark), in the summary's order.
func counterQueries(s *metrics.Summary) []*metrics.QuerySummary {
	var out []*metrics.QuerySummary
	for i := range s.Queries {
		if len(s.Queries[i].EngineCounters) > 0 {
			out = append(out, &s.Queries[i])
		}
	}
	return out
}

// counterNames returns the counters the queries carry, the described ones
// in counterColumns' order, then the others sorted.
func counterNames(qs []*metrics.QuerySummary) []string {
	var names, other []string
	for _, c := range counterColumns(qs) {
		for _, q := range qs {
			if _, ok := q.EngineCounters[c.Name]; ok {
				names = append(names, c.Name)
				break
			}
		}
	}
	for _, q := range qs {
		for n := range q.EngineCounters {
			if !slices.Contains(names, n) && !slices.Contains(other, n) {
				other = append(other, n)
			}
		}
	}
	slices.Sort(other)
	return append(names, other...)
}

// engineCountersHeader names the columns of the engine counters table:
// the query, its engine, its logical state rows (peak and final, the
// summary's), then one column per counter the queries carry.
func engineCountersHeader(s *metrics.Summary) []string {
	h := []string{"query", "engine", "peak state rows", "final state rows"}
	if sweptCounters(counterQueries(s)) {
		h = slices.Insert(h, 2, "delay")
	}
	cols := counterColumns(counterQueries(s))
	for _, n := range counterNames(counterQueries(s)) {
		i := slices.IndexFunc(cols, func(c metrics.CounterInfo) bool { return c.Name == n })
		if i >= 0 {
			h = append(h, cols[i].Header)
		} else {
			h = append(h, n)
		}
	}
	return h
}

// engineCountersRows returns one row per query that carries engine
// counters, "—" in the column of a counter its engine does not have.
func engineCountersRows(s *metrics.Summary) [][]string {
	qs := counterQueries(s)
	names := counterNames(qs)
	var rows [][]string
	swept := sweptCounters(qs)
	for _, q := range qs {
		row := []string{q.Name, engineName(q), interval.Count(q.PeakStateRows), interval.Count(q.FinalStateRows)}
		if swept {
			// In a sweep a query has a row per swept horizon.
			row = slices.Insert(row, 2, formatDelay(q.Delay))
		}
		for _, n := range names {
			if v, ok := q.EngineCounters[n]; ok {
				row = append(row, interval.Count(v))
			} else {
				row = append(row, "—")
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// sweptCounters reports whether some query has several rows in the
// engine counters table (one per swept horizon), which then gains a delay
// column.
func sweptCounters(qs []*metrics.QuerySummary) bool {
	seen := map[string]bool{}
	for _, q := range qs {
		if seen[q.Name] {
			return true
		}
		seen[q.Name] = true
	}
	return false
}

// engineCountersNote explains the engine counters table of s: what its
// columns hold, then each explanation the queries' summaries give for the
// counters they carry (engineCounterInfo), once each, in the columns'
// order.
func engineCountersNote(s *metrics.Summary) string {
	var b strings.Builder
	b.WriteString("The numbers of the engines other than Spark that the summary's columns do not hold (summary.json's engineCounters). " +
		"State rows are logical, what decides the engine's verdicts (the summary's peak state rows); physical rows are what its memory holds.")
	qs := counterQueries(s)
	names := counterNames(qs)
	var said []string
	for _, n := range names {
		for _, q := range qs {
			for _, c := range q.EngineCounterInfo {
				if c.Name == n && c.Explanation != "" && !slices.Contains(said, c.Explanation) {
					said = append(said, c.Explanation)
					b.WriteString(" " + c.Explanation)
				}
			}
		}
	}
	b.WriteString(" Peaks cover the traffic window; final values the end of the run, the drain included; —: the engine has no such counter.")
	return b.String()
}

// writeEngineCountersMarkdown writes the engine counters section of
// report.md; nothing when no query carries engine counters.
func writeEngineCountersMarkdown(b *bytes.Buffer, s *metrics.Summary) {
	rows := engineCountersRows(s)
	if len(rows) == 0 {
		return
	}
	h := engineCountersHeader(s)
	b.WriteString("## " + engineCountersTitle + "\n\n")
	b.WriteString("| " + strings.Join(h, " | ") + " |\n")
	b.WriteString("|:--|:--|" + strings.Repeat("--:|", len(h)-2) + "\n")
	for _, row := range rows {
		b.WriteString("| " + strings.Join(mdCells(row), " | ") + " |\n")
	}
	fmt.Fprintf(b, "\n%s\n\n", engineCountersNote(s))
}
