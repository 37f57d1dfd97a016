package reports

import (
	"strings"
	"unicode"
)

// tocEntry is one line of a report's table of contents: a section, or
// under Charts a chart, and the anchor it links to.
type tocEntry struct {
	Title, ID string
	Sub       []tocEntry
}

// slug is the anchor GitHub gives a Markdown heading, which report.html
// uses as the id of the same section, so one link works in both: lower
// case, letters, digits, "-" and "_" kept, spaces made "-", the rest
// dropped.
func slug(title string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(c) || unicode.IsDigit(c) || c == '-' || c == '_':
			b.WriteRune(c)
		case c == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// contents lists the sections of a report in order, each chart under
// Charts; stores is the title of the store comparison section that comes
// before the charts (a results folder of bench-stores), "" for none.
func (res *results) contents(charts []chartFile, findings, recs []string, stores string) []tocEntry {
	var out []tocEntry
	add := func(title string) { out = append(out, tocEntry{Title: title, ID: slug(title)}) }
	if len(res.scenarioWarnings()) > 0 {
		add("Warnings")
	}
	add("Findings")
	if len(recs) > 0 {
		add("Recommendation")
	}
	add("Summary")
	if res.hasSparkSummary() {
		add("Spark cluster (modelled)")
	}
	if enginesCompared(res.sum) {
		add(enginesComparedTitle)
	}
	if len(counterQueries(res.sum)) > 0 {
		add(engineCountersTitle)
	}
	if stores != "" {
		add(stores)
	}
	add("Charts")
	for _, c := range charts {
		out[len(out)-1].Sub = append(out[len(out)-1].Sub, tocEntry{Title: c.Title, ID: slug(c.Title)})
	}
	add("Scenario as run")
	add("Warnings per query")
	if len(res.markerRows()) > 0 {
		add("Marked on the charts")
	}
	return out
}

// tocMarkdown renders the contents as a Markdown paragraph of links.
func tocMarkdown(toc []tocEntry) string {
	var b strings.Builder
	b.WriteString("**Contents:** ")
	for i, e := range toc {
		if i > 0 {
			b.WriteString(" · ")
		}
		b.WriteString("[" + mdText(e.Title) + "](#" + e.ID + ")")
		if len(e.Sub) > 0 {
			b.WriteString(" (")
			for j, s := range e.Sub {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("[" + mdText(s.Title) + "](#" + s.ID + ")")
			}
			b.WriteString(")")
		}
	}
	return b.String()
}
