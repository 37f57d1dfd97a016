package compare

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// DefaultMaxRows is how many differences WriteTable shows when it is
// given no bound.
const DefaultMaxRows = 20

// Width is the most columns a line that WriteTable writes takes.
const Width = 100

// tableColumns are the columns of a query's table of differences.
var tableColumns = []string{"batch", "field", "expected", "actual"}

// WriteTable writes the differences of r to w, query by query; it is
// meant to follow the verdict line (see Result.Verdict):
//
//	query within
//	  5 of 412 batches differ: 3 missing in actual
//	  actual: 2 triggers that ran no batch (no durationMs.addBatch), ignored
//	┌─────────┬────────────────────┬──────────┬────────┐
//	│   batch │ field              │ expected │ actual │
//	├─────────┼────────────────────┼──────────┼────────┤
//	│      17 │ [0] numRowsRemoved │      210 │    208 │
//	│     130 │ numInputRows       │    1,022 │  1,021 │
//	│ 409-411 │ missing in actual  │ executed │ absent │
//	└─────────┴────────────────────┴──────────┴────────┘
//
// Each query gets a heading, a line that counts its batches and a line
// for each note on its inputs (records ignored, repeated or of another
// query id; see Input), then a table of its differences in batch order.
// "[i] NAME" is the field NAME of stateOperators[i]
// (numDroppedDuplicateRows is one of its customMetrics); counters have
// thousands separators, batch ids none; a run of batches missing in
// actual (or extra in actual) with consecutive ids takes one row. At most
// maxRows rows are shown in all (DefaultMaxRows when maxRows is 0 or
// less); a query whose differences are not all shown says how many more
// it has. Every line fits in Width columns: text echoed from the records
// is escaped when it is not printable ASCII, and cells are cut with "..."
// only when a table would be wider (counters past 10^17, names of
// operators and queries of dozens of characters).
func WriteTable(w io.Writer, r *Result, maxRows int) error {
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	var b strings.Builder
	left := maxRows
	operatorRows := false
	for i := range r.Queries {
		q := &r.Queries[i]
		if i > 0 {
			b.WriteByte('\n')
		}
		if q.Name == "" {
			b.WriteString("query id " + show(q.ID, Width-len("query id  (unnamed)")) + " (unnamed)\n")
		} else {
			b.WriteString("query " + show(q.Name, Width-6) + "\n")
		}
		b.WriteString("  " + summary(&q.Counts) + "\n")
		for _, n := range notes("expected", &q.Expected) {
			b.WriteString("  " + n + "\n")
		}
		for _, n := range notes("actual", &q.Actual) {
			b.WriteString("  " + n + "\n")
		}
		if len(q.Differences) == 0 {
			continue
		}
		rows, shown := tableRows(q.Differences, left)
		if len(rows) > 0 {
			for j := range shown {
				if strings.HasPrefix(q.Differences[j].Field, "stateOperators[") {
					operatorRows = true
				}
			}
			if err := writeRows(&b, rows); err != nil {
				return fmt.Errorf("differences of query %s: %w", q.Label(), err)
			}
			left -= len(rows)
		}
		if rest := len(q.Differences) - shown; rest > 0 {
			batches := 0
			for j := shown; j < len(q.Differences); j++ {
				if j == shown || q.Differences[j].BatchID != q.Differences[j-1].BatchID {
					batches++
				}
			}
			more := ""
			if shown > 0 {
				more = "more "
			}
			fmt.Fprintf(&b, "  %s %s%s, in %s %s%s, not shown\n",
				interval.Count(int64(rest)), more, noun(rest, "difference", "differences"),
				interval.Count(int64(batches)), more, noun(batches, "batch", "batches"))
		}
	}
	if n := len(r.IgnoredQueries); n > 0 {
		if len(r.Queries) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(ignoredLine(r.IgnoredQueries) + "\n")
	}
	if operatorRows {
		b.WriteString("\n[i] NAME is stateOperators[i].NAME; numDroppedDuplicateRows is in its customMetrics.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tableRows renders at most maxRows rows of diffs and returns them with
// the number of differences they show. A run of batches missing in
// actual (or extra in actual) with consecutive ids takes one row, its
// batch cell "FIRST-LAST".
func tableRows(diffs []Difference, maxRows int) ([][]string, int) {
	var rows [][]string
	i := 0
	for i < len(diffs) && len(rows) < maxRows {
		d := &diffs[i]
		j := i + 1
		if d.Kind != Changed {
			for j < len(diffs) && diffs[j].Kind == d.Kind && diffs[j].BatchID == diffs[j-1].BatchID+1 {
				j++
			}
		}
		r := row(d)
		if j > i+1 {
			r[0] += "-" + strconv.FormatInt(diffs[j-1].BatchID, 10)
		}
		rows = append(rows, r)
		i = j
	}
	return rows, i
}

// noun is one or many after n.
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// summary counts a query's batches in one line.
func summary(c *Counts) string {
	switch {
	case c.Batches == 0:
		return "no executed batch on either side"
	case c.Different == 0 && c.Batches == 1:
		return "1 batch, equal"
	case c.Different == 0:
		return plural(c.Batches, "batch", "batches") + ", all equal"
	}
	verb := "differ"
	if c.Different == 1 {
		verb = "differs"
	}
	s := fmt.Sprintf("%s of %s %s", interval.Count(int64(c.Different)), plural(c.Batches, "batch", "batches"), verb)
	var parts []string
	if c.Missing > 0 {
		parts = append(parts, interval.Count(int64(c.Missing))+" missing in actual")
	}
	if c.Extra > 0 {
		parts = append(parts, interval.Count(int64(c.Extra))+" extra in actual")
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// notes are the lines that tell what of a side's records was left out.
func notes(side string, in *Input) []string {
	var out []string
	if in.Idle > 0 {
		out = append(out, fmt.Sprintf("%s: %s that ran no batch (no durationMs.addBatch), ignored",
			side, plural(in.Idle, "trigger", "triggers")))
	}
	if in.NoBatchID > 0 {
		out = append(out, fmt.Sprintf("%s: %s without a batchId, ignored",
			side, plural(in.NoBatchID, "executed record", "executed records")))
	}
	if in.Repeated > 0 {
		out = append(out, fmt.Sprintf("%s: %s of a batch already read; each batch counted once",
			side, plural(in.Repeated, "record", "records")))
	}
	if in.OtherIDs > 0 {
		out = append(out,
			fmt.Sprintf("%s: %s of %s with this name left out",
				side, plural(in.OtherIDRecords, "record", "records"), plural(in.OtherIDs, "other query id", "other query ids")),
			fmt.Sprintf("%s: compared query id %s, the one with the latest record", side, show(in.QueryID, 40)))
	}
	return out
}

// ignoredLine lists the queries left out by Options.IgnoreExtraQueries,
// as many as fit in a line.
func ignoredLine(names []string) string {
	s := fmt.Sprintf("left out %s that only the actual records hold:", plural(len(names), "query", "queries"))
	for i, n := range names {
		tail := ""
		if i < len(names)-1 {
			tail = ","
		}
		rest := fmt.Sprintf(" and %d more", len(names)-i)
		if len(s)+1+len(n)+len(tail)+len(" and 999,999 more") > Width {
			return s + rest
		}
		s += " " + n + tail
	}
	return s
}

// row renders a difference as a row of the table.
func row(d *Difference) []string {
	id := strconv.FormatInt(d.BatchID, 10)
	switch d.Kind {
	case Missing:
		return []string{id, "missing in actual", "executed", "absent"}
	case Extra:
		return []string{id, "extra in actual", "absent", "executed"}
	}
	return []string{id, fieldLabel(d.Field), cell(d.Expected.String(), maxEcho), cell(d.Actual.String(), maxEcho)}
}

// fieldLabel shortens a field's path for the table: "[0] numRowsRemoved"
// for "stateOperators[0].numRowsRemoved", the customMetrics prefix left
// out.
func fieldLabel(f string) string {
	if f == "stateOperators" {
		return "number of stateOperators"
	}
	rest, ok := strings.CutPrefix(f, "stateOperators")
	if !ok {
		return f
	}
	i := strings.IndexByte(rest, ']')
	name := strings.TrimPrefix(rest[i+1:], ".")
	name = strings.TrimPrefix(name, "customMetrics.")
	return rest[:i+1] + " " + name
}

// writeRows renders a table of differences into b, every line within
// Width columns: when the cells are too wide, the widest column is
// narrowed, one column at a time, and its cells cut with "...".
func writeRows(b *strings.Builder, rows [][]string) error {
	n := len(tableColumns)
	widths := make([]int, n)
	for c, h := range tableColumns {
		widths[c] = len(h)
		for _, r := range rows {
			widths[c] = max(widths[c], len(r[c]))
		}
	}
	// A boxed line is "│ " + cell + " │" per column, sharing the bars.
	budget := Width - 3*n - 1
	for {
		sum, widest := 0, -1
		for c, wd := range widths {
			sum += wd
			if wd > max(len(tableColumns[c]), 8) && (widest < 0 || wd > widths[widest]) {
				widest = c
			}
		}
		if sum <= budget || widest < 0 {
			break
		}
		widths[widest]--
	}
	for _, r := range rows {
		for c := range r {
			if len(r[c]) > widths[c] {
				r[c] = r[c][:widths[c]-3] + "..."
			}
		}
	}
	align := []tw.Align{tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight}
	t := tablewriter.NewTable(b,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(tableColumns)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}
