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

// engineCounterColumns names the counters of engineCounters that the
// reports know, in the order of their columns, with their headers. A
// counter not listed gets a column of its own name, after these.
var engineCounterColumns = []struct{ name, header string }{
	{"peakPhysicalStateRows", "peak physical state rows"},
	{"finalPhysicalStateRows", "final physical state rows"},
	{"droppedRecordsTotal", "dropped records (Kafka Streams)"},
	{"punctuations", "punctuations (Kafka Streams wall-clock)"},
	{"timersFired", "timers fired (Beam)"},
	{"numLateRecordsDropped", "late records dropped (Flink)"},
	{"insertsEmitted", "+I rows (Flink)"},
	{"updatesEmitted", "+U rows (Flink)"},
	{"retractionsEmitted", "-U rows: retractions (Flink)"},
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

// counterNames returns the counters the queries carry, the known ones in
// engineCounterColumns' order, then the others sorted.
func counterNames(qs []*metrics.QuerySummary) []string {
	var names, other []string
	for _, c := range engineCounterColumns {
		for _, q := range qs {
			if _, ok := q.EngineCounters[c.name]; ok {
				names = append(names, c.name)
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
	for _, n := range counterNames(counterQueries(s)) {
		i := slices.IndexFunc(engineCounterColumns, func(c struct{ name, header string }) bool { return c.name == n })
		if i >= 0 {
			h = append(h, engineCounterColumns[i].header)
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

// engineCountersNote explains the engine counters table.
func engineCountersNote() string {
	return "The numbers of the engines other than Spark that the summary's columns do not hold (summary.json's engineCounters). " +
		"State rows are logical, what decides the engine's verdicts (the summary's peak state rows); physical rows are what its memory holds: " +
		"Flink's heap keeps an expired entry until a read or the incremental cleanup removes it, " +
		"Kafka Streams' window store keeps a row until its whole segment is older than the retention, while all() shows only the rows of the last window, " +
		"and Beam clears a key when its timer fires, so the two are the same. " +
		"dropped records is Kafka Streams' dropped-records-total: puts the window store dropped because their segment had already expired, so their keys were never remembered. " +
		"punctuations counts a Kafka Streams wall-clock query's purges, each deleting the keys a window W old or older. " +
		"timers fired counts Beam's expiry timers, each forgetting one key. " +
		"late records dropped is Flink's numLateRecordsDropped: rows a 2.1+ rowtime keep-first dropped behind the watermark. " +
		"+I, +U and -U rows are the changelog rows a Flink query emitted by kind: +I a key's first row (or its first after its state expired), " +
		"+U a row replacing the one emitted for its key (keep-last, and the rowtime changelog functions of 2.0 keep-first and mini-batch); " +
		"the run's sink appends, so a +U for an event already emitted is also a missed duplicate, and it needs no -U rows (generateUpdateBefore false), so retractions are 0. " +
		"Peaks cover the traffic window; final values the end of the run, the drain included; —: the engine has no such counter."
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
	fmt.Fprintf(b, "\n%s\n\n", engineCountersNote())
}
