package reports

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// mixedStores reports whether the queries of s ran on more than one state
// store backend (each query's store, scenario queries[].store): the
// summary tables then gain a store column after the query's name. When
// every query shares one store, the tables have no store column.
func mixedStores(s *metrics.Summary) bool {
	for _, q := range s.Queries {
		if q.Store != s.Queries[0].Store {
			return true
		}
	}
	return false
}

// otherEngines reports whether some query of s ran on an engine other
// than Spark (queries[].engine): the summary tables then gain an engine
// column after the query's name. When every query is Spark's, the tables
// have no engine column.
func otherEngines(s *metrics.Summary) bool {
	for _, q := range s.Queries {
		if q.Engine != "" {
			return true
		}
	}
	return false
}

// engineName names the engine of q in the reports: its summary's engine,
// "spark" for a Spark query (whose summary leaves the engine out).
func engineName(q *metrics.QuerySummary) string {
	if q.Engine == "" {
		return "spark"
	}
	return q.Engine
}

// labels says which label columns the summary tables of s have after the
// query's name: engine (otherEngines), then store (mixedStores).
type labels struct{ engine, store bool }

func labelsOf(s *metrics.Summary) labels {
	return labels{engine: otherEngines(s), store: mixedStores(s)}
}

// n is the number of label columns.
func (l labels) n() int {
	n := 0
	for _, on := range []bool{l.engine, l.store} {
		if on {
			n++
		}
	}
	return n
}

// with inserts the label columns engine and store after the first cell
// of cells, those that l has.
func (l labels) with(cells []string, engine, store string) []string {
	out := append(make([]string, 0, len(cells)+2), cells[0])
	if l.engine {
		out = append(out, engine)
	}
	if l.store {
		out = append(out, store)
	}
	return append(out, cells[1:]...)
}

// bytesModelled reports whether the state bytes of q are modelled: a
// Spark query's always are; another engine's only when its model gives
// them (a summary of such a query without them holds 0).
func bytesModelled(q *metrics.QuerySummary) bool {
	return q.Engine == "" || q.PeakStateBytes > 0 || q.FinalStateBytes > 0
}

// peakBytes is the peak state bytes of q for the tables: "—" when they
// are not modelled.
func peakBytes(q *metrics.QuerySummary) string {
	if !bytesModelled(q) {
		return "—"
	}
	return interval.Bytes(q.PeakStateBytes)
}

// summaryHeader names the columns of the summary table of s in the
// reports: engine and store columns after the query's when its queries
// ran on other engines than Spark (otherEngines) or on different stores
// (mixedStores).
func summaryHeader(s *metrics.Summary) []string {
	return labelsOf(s).with([]string{
		"query", delayHeader(s), "emitted", "missed duplicates", "false drops (late/bad clock/collision)",
		"peak state rows", "peak state bytes", "sim speed (rows/s)",
	}, "engine", "store")
}

// summaryRows returns one row per summary entry, in the summary's order.
func summaryRows(s *metrics.Summary) [][]string {
	rows := make([][]string, 0, len(s.Queries))
	l := labelsOf(s)
	for i := range s.Queries {
		q := &s.Queries[i]
		c := q.FalseDropsByCause
		rows = append(rows, l.with([]string{
			q.Name,
			formatHorizon(q),
			interval.Count(q.EmittedRows),
			fmt.Sprintf("%s of %s (%s)", interval.Count(q.MissedDuplicates), interval.Count(q.TrueDuplicates),
				interval.Percent(rate(q.MissedDuplicates, q.TrueDuplicates))),
			fmt.Sprintf("%s (%s/%s/%s)", interval.Count(q.FalseDrops),
				interval.Count(c.Late), interval.Count(c.BadClock), interval.Count(c.Collision)),
			interval.Count(q.PeakStateRows),
			peakBytes(q),
			interval.Count(int64(math.Round(q.EventsPerSecond))),
		}, engineName(q), q.Store))
	}
	return rows
}

// TerminalWidth is the widest line SummaryTable writes for a terminal.
const TerminalWidth = 100

// SummaryTable writes the per-query summary table of s to w. With
// markdown it writes a GitHub-flavoured Markdown table of every column:
// query, delay, emitted rows, missed duplicates (of the true duplicates,
// with the rate), false drops split late/bad clock/collision, peak state
// rows and bytes, and the simulator's own speed. Otherwise it writes a table for
// the terminal, at most TerminalWidth columns wide: missed duplicates and
// lost events with their rates, the main cause of the losses, peak state
// and throughput, a cell wrapped onto a second line where the table would
// be wider. Numbers are right-aligned so that rows of a sweep compare at a
// glance. When some query ran on an engine other than Spark, both tables
// show each query's engine after its name; when the queries ran on
// different state stores, each query's store (after the engine).
func SummaryTable(w io.Writer, s *metrics.Summary, markdown bool) error {
	if !markdown {
		return SummaryTableWidth(w, s, TerminalWidth)
	}
	align := []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight,
		tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}
	// The label columns are text, left-aligned like the query's.
	for range labelsOf(s).n() {
		align = append([]tw.Align{tw.AlignLeft}, align...)
	}
	opts := []tablewriter.Option{
		// Header auto-format would upper-case the headers and mangle
		// "rows/s"; keep them as written.
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		// Never wrap cells: a wrapped Markdown cell breaks the table.
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRenderer(renderer.NewMarkdown()),
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(summaryHeader(s))
	for _, row := range summaryRows(s) {
		if err := t.Append(mdCells(row)); err != nil {
			return fmt.Errorf("summary table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("summary table: %w", err)
	}
	return nil
}

// mainCause names the cause of most of a query's false drops: "late",
// "bad clock" or "collision"; "" without false drops.
func mainCause(q *metrics.QuerySummary) string {
	c := q.FalseDropsByCause
	switch {
	case q.FalseDrops == 0:
		return ""
	case c.BadClock >= c.Late && c.BadClock >= c.Collision:
		return "bad clock"
	case c.Late >= c.Collision:
		return "late"
	}
	return "collision"
}

// terminalTable renders the summary for a terminal: plain columns two
// spaces apart under a ruled header, at most TerminalWidth wide.
// SummaryTableWidth writes SummaryTable's terminal table at most width
// columns wide; width 0 or less means no limit (stdout is a file or a
// pipe, where nothing wraps: every cell stays on one line, whole).
func SummaryTableWidth(w io.Writer, s *metrics.Summary, width int) error {
	_, err := io.WriteString(w, terminalTable(s, width))
	return err
}

func terminalTable(s *metrics.Summary, width int) string {
	if width <= 0 {
		width = math.MaxInt / 2
	}
	l := labelsOf(s)
	header := l.with([]string{"query", delayHeader(s), "missed dups", "lost events", "cause", "peak rows", "peak bytes", "sim rows/s"}, "engine", "store")
	// The text columns, left-aligned: the query, its labels, the cause.
	text := map[int]bool{0: true, 4 + l.n(): true}
	for j := 1; j <= l.n(); j++ {
		text[j] = true
	}
	// Each cell has a one-line form and a two-line one, used when the
	// one-line table is too wide.
	type cell struct{ one, two1, two2 string }
	var rows [][]cell
	for i := range s.Queries {
		q := &s.Queries[i]
		count := func(n, of int64) cell {
			c, p := interval.Count(n), "("+interval.Percent(rate(n, of))+")"
			if n == 0 {
				return cell{one: "0", two1: "0"}
			}
			return cell{one: c + " " + p, two1: c, two2: p}
		}
		cause := mainCause(q)
		if cause == "" {
			cause = "-"
		}
		plain := func(v string) cell { return cell{one: v, two1: v} }
		// A label breaks at its middle hyphen in the two-line form
		// ("rocksdb-" over "window-store").
		label := func(v string) cell {
			c := plain(v)
			best := -1
			for k, r := range v {
				if r == '-' && (best < 0 || abs(len(v)-2*(k+1)) < abs(len(v)-2*(best+1))) {
					best = k
				}
			}
			if best >= 0 {
				c.two1, c.two2 = v[:best+1], v[best+1:]
			}
			return c
		}
		name := []cell{plain(q.Name)}
		if l.engine {
			name = append(name, label(engineName(q)))
		}
		if l.store {
			name = append(name, label(q.Store))
		}
		rows = append(rows, append(name,
			plain(formatHorizon(q)),
			count(q.MissedDuplicates, q.TrueDuplicates), count(q.FalseDrops, q.LogicalEvents),
			plain(cause), plain(interval.Count(q.PeakStateRows)), plain(peakBytes(q)),
			plain(interval.Count(int64(math.Round(q.EventsPerSecond)))),
		))
	}
	const gap = 2
	widths := func(two bool) []int {
		ws := make([]int, len(header))
		for j, h := range header {
			ws[j] = utf8.RuneCountInString(h)
		}
		for _, r := range rows {
			for j, c := range r {
				if two {
					ws[j] = max(ws[j], utf8.RuneCountInString(c.two1), utf8.RuneCountInString(c.two2))
				} else {
					ws[j] = max(ws[j], utf8.RuneCountInString(c.one))
				}
			}
		}
		return ws
	}
	total := func(ws []int) int {
		n := gap * (len(ws) - 1)
		for _, w := range ws {
			n += w
		}
		return n
	}
	two := false
	ws := widths(false)
	if total(ws) > width {
		two, ws = true, widths(true)
	}
	// With an engine column the table may still be too wide: the headers
	// then wrap at their spaces and the labels at every hyphen.
	if l.engine && total(ws) > width {
		longest := func(v string, seps string) int {
			n := 0
			for _, w := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
				n = max(n, utf8.RuneCountInString(w)+1)
			}
			return n
		}
		header = slices.Clone(header)
		for j, h := range header {
			ws[j] = longest(h, " ") - 1
			header[j] = strings.ReplaceAll(h, " ", "\n")
			for _, r := range rows {
				c := r[j]
				if j >= 1 && j <= l.n() {
					ws[j] = max(ws[j], longest(c.one, "-"))
				} else {
					ws[j] = max(ws[j], utf8.RuneCountInString(c.two1), utf8.RuneCountInString(c.two2))
				}
			}
		}
	}
	// The query column gives way last: long names wrap.
	if over := total(ws) - width; over > 0 {
		ws[0] = max(ws[0]-over, 8)
	}
	var b strings.Builder
	line := func(cells []string) {
		// Wrap every cell to its width, then print the lines side by
		// side, text left, numbers right.
		parts := make([][]string, len(cells))
		n := 1
		for j, c := range cells {
			parts[j] = wrapCell(c, ws[j])
			n = max(n, len(parts[j]))
		}
		for k := 0; k < n; k++ {
			var l strings.Builder
			for j := range cells {
				v := ""
				if k < len(parts[j]) {
					v = parts[j][k]
				}
				pad := strings.Repeat(" ", ws[j]-utf8.RuneCountInString(v))
				if j > 0 {
					l.WriteString(strings.Repeat(" ", gap))
				}
				if text[j] {
					l.WriteString(v + pad)
				} else {
					l.WriteString(pad + v)
				}
			}
			b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
		}
	}
	line(header)
	var rule []string
	for _, w := range ws {
		rule = append(rule, strings.Repeat("-", w))
	}
	line(rule)
	for _, r := range rows {
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = c.one
			if two {
				cells[j] = strings.TrimSpace(c.two1 + "\n" + c.two2)
			}
		}
		line(cells)
	}
	return b.String()
}

// wrapCell splits s into lines of at most w runes: at its own newlines,
// and then at the last '-', '_', '.', '@' or space that fits, or hard.
func wrapCell(s string, w int) []string {
	var out []string
	for _, part := range strings.Split(s, "\n") {
		r := []rune(part)
		for len(r) > w {
			cut := w
			for k := w; k > w/2; k-- {
				if strings.ContainsRune("-_.@ ", r[k-1]) {
					cut = k
					break
				}
			}
			out = append(out, strings.TrimRight(string(r[:cut]), " "))
			r = r[cut:]
		}
		out = append(out, string(r))
	}
	return out
}

// abs is |n|.
func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// delayHeader names the summary tables' horizon column: "delay" when every
// query is Spark's, "horizon" when some engine names its own (TTL, W, d).
func delayHeader(s *metrics.Summary) string {
	if otherEngines(s) {
		return "horizon"
	}
	return "delay"
}
