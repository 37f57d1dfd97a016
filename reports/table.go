package reports

import (
	"fmt"
	"io"
	"math"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/dedupsim/dedupsim/metrics"
)

// summaryHeader names the columns of the summary table.
func summaryHeader() []string {
	return []string{
		"query", "delay", "emitted", "missed duplicates", "false drops (late/collision)",
		"peak state rows", "peak state bytes", "events/s",
	}
}

// summaryRows returns one row per summary entry, in the summary's order.
func summaryRows(s *metrics.Summary) [][]string {
	rows := make([][]string, 0, len(s.Queries))
	for i := range s.Queries {
		q := &s.Queries[i]
		rows = append(rows, []string{
			q.Name,
			formatDelay(q.Delay),
			metrics.FormatCount(q.EmittedRows),
			fmt.Sprintf("%s of %s (%s)", metrics.FormatCount(q.MissedDuplicates), metrics.FormatCount(q.TrueDuplicates),
				metrics.FormatPercent(rate(q.MissedDuplicates, q.TrueDuplicates))),
			fmt.Sprintf("%s (%s/%s)", metrics.FormatCount(q.FalseDrops),
				metrics.FormatCount(q.FalseDropsByCause.Late), metrics.FormatCount(q.FalseDropsByCause.Collision)),
			metrics.FormatCount(q.PeakStateRows),
			metrics.FormatBytes(q.PeakStateBytes),
			metrics.FormatCount(int64(math.Round(q.EventsPerSecond))),
		})
	}
	return rows
}

// SummaryTable writes the per-query summary table of s to w: query, delay,
// emitted rows, missed duplicates (of the true duplicates, with the rate),
// false drops split late/collision, peak state rows and bytes, and engine
// throughput. With markdown it writes a GitHub-flavoured Markdown table,
// otherwise a boxed table for the terminal. Numbers are right-aligned so
// that rows of a sweep compare at a glance.
func SummaryTable(w io.Writer, s *metrics.Summary, markdown bool) error {
	align := []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight,
		tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}
	opts := []tablewriter.Option{
		// Header auto-format would upper-case the headers and mangle
		// "events/s"; keep them as written.
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		// Never wrap cells: a wrapped Markdown cell breaks the table.
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(summaryHeader())
	for _, row := range summaryRows(s) {
		if err := t.Append(row); err != nil {
			return fmt.Errorf("summary table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("summary table: %w", err)
	}
	return nil
}
