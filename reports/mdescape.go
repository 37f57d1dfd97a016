package reports

import "strings"

// mdText makes s safe to place in report.md as prose, a heading or a
// table cell: Markdown renders raw HTML, so "<", ">" and "&" become
// entities (a query named "<script>" reads as text, and a placeholder
// such as "<delay>" no longer vanishes as an unknown tag); "|" is
// escaped so a cell cannot split a table row; a "]" followed by "(" is
// escaped so no inline link can be written in ("[x](javascript:...)"; a
// reference link would need a definition at the start of a line); and
// line breaks become spaces so nothing can start a heading or a list of
// its own. Backticks and emphasis are
// left alone: they change how text looks, not what the page holds.
func mdText(s string) string {
	if !strings.ContainsAny(s, "<>&|]\r\n") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, c := range s {
		switch c {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '|':
			b.WriteString(`\|`)
		case ']':
			if strings.HasPrefix(s[i+1:], "(") {
				b.WriteByte('\\')
			}
			b.WriteByte(']')
		case '\r', '\n':
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// mdCells applies mdText to every cell of row, in place, and returns it.
func mdCells(row []string) []string {
	for i, c := range row {
		row[i] = mdText(c)
	}
	return row
}
