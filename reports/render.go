package reports

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// chartNames lists every chart Render can write, so that a rerender
// removes charts the results no longer call for (a sweep rerun as a
// single run leaves no stale horizon-tradeoff behind).
func chartNames() []string {
	return []string{"state-rows", "state-bytes", "watermark", "horizon-tradeoff", "engines-compared", "batch-duration", "processing-lag", "partition-rows", "executor-memory", "executor-disk"}
}

// Render reads the results folder dir (summary.json and timeseries.csv)
// and writes its report into it: the charts as PNG and SVG, report.md and
// a self-contained report.html. Every file is written atomically, and the
// output depends only on the two results files, so rendering twice yields
// byte-identical files. A dir that is not a results folder is an error
// naming the file that is missing or bad.
func Render(dir string) error {
	// A named pipe or a device among the inputs is refused before any
	// work, not after the charts are drawn.
	if err := metrics.CheckInputs(dir); err != nil {
		return err
	}
	res, err := loadResults(dir)
	if err != nil {
		return err
	}
	if err := res.readSpark(dir); err != nil {
		return err
	}
	if res.curves, err = readCurves(dir); err != nil {
		return err
	}
	charts, err := buildCharts(res)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	findings := res.findings()
	s := res.sum
	recs := res.recommendations()
	yml, err := scenarioYAML(s.Scenario)
	if err != nil {
		return fmt.Errorf("%s/summary.json: %w", dir, err)
	}
	sb, err := readStores(dir)
	if err != nil {
		return err
	}
	toc := res.contents(charts, findings, recs, storesSection(sb))
	var md bytes.Buffer
	if err := writeMarkdown(&md, res, charts, findings, recs, yml, toc); err != nil {
		return fmt.Errorf("%s: report.md: %w", dir, err)
	}
	var page bytes.Buffer
	if err := writeHTML(&page, res, charts, findings, recs, yml, toc); err != nil {
		return fmt.Errorf("%s: report.html: %w", dir, err)
	}
	// A results folder of `simulate bench-stores` also compares backends.
	if err := renderStores(dir, sb, &md, &page); err != nil {
		return err
	}
	write := func(name string, data []byte) error {
		if err := metrics.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("writing report: %w", err)
		}
		return nil
	}
	for _, c := range charts {
		if err := write(c.Name+".png", c.PNG); err != nil {
			return err
		}
		if err := write(c.Name+".svg", c.SVG); err != nil {
			return err
		}
	}
	for _, name := range chartNames() {
		if slices.ContainsFunc(charts, func(c chartFile) bool { return c.Name == name }) {
			continue
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := os.Remove(filepath.Join(dir, name+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing a stale chart: %w", err)
			}
		}
	}
	if err := write("report.md", md.Bytes()); err != nil {
		return err
	}
	return write("report.html", page.Bytes())
}

// loadResults reads the results folder dir as ReadResults does, streaming
// the timeseries into each run's series, so that its memory is bounded by
// what the charts draw, never by the length of the run (see
// exactBatches).
func loadResults(dir string) (*results, error) {
	s, err := readSummary(dir)
	if err != nil {
		return nil, err
	}
	g := newGrouper(s)
	err = metrics.ScanTimeseriesFile(dir, func(b *metrics.BatchRecord) error {
		g.add(b)
		return nil
	})
	if err := timeseriesError(dir, err); err != nil {
		return nil, err
	}
	return g.done(), nil
}

// ReadResults reads the summary and the timeseries of the results folder
// dir. Its errors are one line naming the folder and the file that is
// missing or bad, for `simulate report` to print as is. It holds every
// batch: Render reads a folder in memory bounded by what it draws.
func ReadResults(dir string) (*metrics.Summary, []metrics.BatchRecord, error) {
	s, err := readSummary(dir)
	if err != nil {
		return nil, nil, err
	}
	ts, err := metrics.ReadTimeseriesFile(dir)
	if err := timeseriesError(dir, err); err != nil {
		return nil, nil, err
	}
	return s, ts, nil
}

// timeseriesError words an error reading dir/timeseries.csv for the
// command line; nil for nil.
func timeseriesError(dir string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s is not a results folder: %s is missing", dir, filepath.Join(dir, "timeseries.csv"))
	case err != nil:
		return fmt.Errorf("%s is not a readable results folder: %w", dir, err)
	}
	return nil
}

// readSummary checks that dir is a folder and reads its summary.json.
func readSummary(dir string) (*metrics.Summary, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such results folder", dir)
	case err != nil:
		return nil, fmt.Errorf("results folder: %w", err)
	case !st.IsDir():
		return nil, fmt.Errorf("%s is a file, not a results folder (want the folder holding summary.json and timeseries.csv)", dir)
	}
	s, err := metrics.ReadSummary(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s is not a results folder: %s is missing", dir, filepath.Join(dir, "summary.json"))
	case err != nil:
		return nil, fmt.Errorf("%s is not a readable results folder: %w", dir, err)
	case len(s.Queries) == 0:
		return nil, fmt.Errorf("%s: holds no queries", filepath.Join(dir, "summary.json"))
	}
	return s, nil
}

// reportTitle is the heading of both reports.
func (res *results) reportTitle() string {
	if res.sc.Name != "" {
		return "dedupsim report: " + res.sc.Name
	}
	return "dedupsim report"
}

// intro is the paragraph under the title: what ran, with which seed.
func (res *results) intro() string {
	var b strings.Builder
	if res.sc.Name != "" {
		fmt.Fprintf(&b, "Scenario %s, seed %d", res.sc.Name, res.sum.Seed)
	} else {
		fmt.Fprintf(&b, "Seed %d", res.sum.Seed)
	}
	names := res.queryNames()
	fmt.Fprintf(&b, ", %d %s", len(names), plural(len(names), "query", "queries"))
	if res.sc.Duration != "" {
		fmt.Fprintf(&b, ", %s of traffic", res.sc.Duration)
	}
	if res.isSweep() {
		var ds []string
		for _, r := range res.runs {
			if d := formatDelay(r.sum.Delay); r.sum.Delay != nil && !slices.Contains(ds, d) {
				ds = append(ds, d)
			}
		}
		what := "watermark delays"
		if otherEngines(res.sum) {
			what = "horizons (Spark's watermark delay, Flink's state TTL, Kafka Streams' window, Beam's duration)"
		}
		fmt.Fprintf(&b, ", swept over %s %s", what, strings.Join(ds, ", "))
	}
	b.WriteString(". Drawn by `simulate report` from summary.json and timeseries.csv (" + res.sum.Format + ").")
	return b.String()
}

// trafficLine states the traffic the run simulated, for the header of
// both reports: the rate of originals the scenario asked for (its rate,
// or its profile's range) and the rows that arrived, copies included, per
// second of the traffic window. Every Spark figure of the report is at
// this rate; "" when the results say nothing of it.
func (res *results) trafficLine() string {
	var asked string
	w := res.sc.Workload
	switch {
	case w.Rate != "":
		asked = w.Rate + " originals (workload.rate)"
	case len(w.Profile) > 0:
		var rates []string
		for _, seg := range w.Profile {
			if !slices.Contains(rates, seg.Rate) {
				rates = append(rates, seg.Rate)
			}
		}
		asked = "originals at " + strings.Join(rates, ", then ") + " (workload.profile)"
	}
	var input int64
	for _, r := range res.runs {
		input = max(input, r.sum.InputRows)
	}
	var arrived string
	if d := res.durationSeconds(); input > 0 && d > 0 {
		arrived = fmt.Sprintf("%s input rows with every copy (the drain's too), about %s rows/s over the %s of traffic", interval.Count(input),
			interval.Count(int64(math.Round(float64(input)/d))), formatSpan(d))
	}
	switch {
	case asked == "" && arrived == "":
		return ""
	case asked == "":
		return "Simulated traffic: " + arrived + "."
	case arrived == "":
		return "Simulated traffic: " + asked + "."
	}
	return "Simulated traffic: " + asked + "; " + arrived + ". Every figure below is at this rate; the sim speed column is the simulator's own speed on this machine, not Spark's."
}

// plural picks the singular or plural form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// tableNote explains the columns of the summary table.
func tableNote() string {
	return "Missed duplicates: emitted rows whose event had already been emitted, of all duplicate copies in the input. " +
		"False drops: real events never emitted, split by cause: late (every copy dropped behind the watermark), " +
		"bad clock (the same, the last copy dropped while a future timestamp held the watermark ahead of processing time minus the delay) and " +
		"collision (dropped as the duplicate of a different event's key). Counts cover the whole run; peaks cover the traffic window, " +
		"not the drain after it. Peak state bytes are modelled, not measured. " +
		"sim speed is the simulator's own speed on this machine (input rows per second of the engine's wall-clock time), not Spark's throughput; " +
		"it is the only column that varies between identical runs."
}

// tableNoteFor explains the columns of the summary table of s: tableNote,
// and, when some query ran on an engine other than Spark, what its delay
// and state bytes cells mean.
func tableNoteFor(s *metrics.Summary) string {
	if !otherEngines(s) {
		return tableNote()
	}
	return tableNote() + " The horizon is how long a query remembers a key, by its engine's own name: Spark's watermark delay (\"10m\"), Flink's state TTL (\"TTL 10m\"), Kafka Streams' window (\"W 20m\") and Beam's duration (\"d 10m\"); none: the query never forgets a key; in a sweep, each runs with its horizon set to the swept value; " +
		"— in peak state bytes: the engine's model gives no state bytes."
}

// queryWarnings is the query text and the explain warnings of one query.
type queryWarnings struct {
	Name, Query string
	Warnings    []string
}

// warnings returns each query's warnings once, in summary order (a sweep
// repeats the query at each delay; its warnings do not depend on it).
func (res *results) warnings() []queryWarnings {
	var out []queryWarnings
	for _, name := range res.queryNames() {
		q := res.runsOf(name)[0].sum
		out = append(out, queryWarnings{Name: q.Name, Query: q.Query, Warnings: q.Warnings})
	}
	return out
}

// scenarioWarning is one line of summary.json's warnings, split into the
// key path it concerns and the message.
type scenarioWarning struct{ Key, Msg string }

// scenarioWarnings returns the summary's warnings in order, split at the
// first ": " into key path and message (a line without one is all
// message).
func (res *results) scenarioWarnings() []scenarioWarning {
	var out []scenarioWarning
	for _, w := range res.sum.Warnings {
		k, m, ok := strings.Cut(w, ": ")
		if !ok || strings.ContainsAny(k, " \t") {
			k, m = "", w
		}
		out = append(out, scenarioWarning{Key: k, Msg: m})
	}
	return out
}

// scenarioWarningsNote introduces the scenario's warnings.
func scenarioWarningsNote() string {
	return "The scenario runs, but some of it probably not as meant; the numbers below are for the scenario as it ran."
}

// markerRow is one marked moment, for the reports' list.
type markerRow struct{ Kind, At, Until, Label string }

// markerRows lists the summary's markers.
func (res *results) markerRows() []markerRow {
	var out []markerRow
	for _, m := range res.sum.Markers {
		r := markerRow{Kind: markerName(m.Kind), At: formatOffset(m.At), Label: m.Label}
		if m.Until != nil {
			r.Until = formatOffset(*m.Until)
		}
		out = append(out, r)
	}
	return out
}

// writeMarkdown writes report.md: what the run shows first (findings and,
// for a sweep, the recommendation), then the numbers and charts they rest
// on, then the scenario as run.
func writeMarkdown(b *bytes.Buffer, res *results, charts []chartFile, findings, recs []string, yml string, toc []tocEntry) error {
	fmt.Fprintf(b, "# %s\n\n%s\n\n", mdText(res.reportTitle()), mdText(res.intro()))
	if t := res.trafficLine(); t != "" {
		fmt.Fprintf(b, "%s\n\n", mdText(t))
	}
	fmt.Fprintf(b, "%s\n\n", tocMarkdown(toc))
	if ws := res.scenarioWarnings(); len(ws) > 0 {
		b.WriteString("## Warnings\n\n" + scenarioWarningsNote() + "\n\n")
		for _, w := range ws {
			if w.Key != "" {
				fmt.Fprintf(b, "- %s: %s\n", mdCode(w.Key), mdText(w.Msg))
			} else {
				fmt.Fprintf(b, "- %s\n", mdText(w.Msg))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("## Findings\n\n")
	for _, f := range findings {
		fmt.Fprintf(b, "- %s\n", mdText(f))
	}
	if len(findings) == 0 {
		b.WriteString("No findings.\n")
	}
	b.WriteString("\n")
	if len(recs) > 0 {
		b.WriteString("## Recommendation\n\n")
		for _, r := range recs {
			fmt.Fprintf(b, "- %s\n", mdText(r))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Summary\n\n")
	if err := SummaryTable(b, res.sum, true); err != nil {
		return err
	}
	fmt.Fprintf(b, "\n%s\n\n", tableNoteFor(res.sum))
	if res.hasSparkSummary() {
		res.writeSparkMarkdown(b)
	}
	writeEnginesComparedMarkdown(b, res.sum)
	writeEngineCountersMarkdown(b, res.sum)
	b.WriteString("## Charts\n\n")
	if len(charts) == 0 {
		b.WriteString("The timeseries holds no batches to draw.\n\n")
	}
	for _, c := range charts {
		fmt.Fprintf(b, "### %s\n\n![%s](%s.png)\n\n", mdText(c.Title), mdText(c.Title), c.Name)
		if c.Note != "" {
			fmt.Fprintf(b, "%s ", mdText(c.Note))
		}
		fmt.Fprintf(b, "Also as [%s.svg](%s.svg).\n\n", c.Name, c.Name)
	}
	b.WriteString("## Scenario as run\n\n")
	if yml == "" {
		b.WriteString("The results do not record the scenario.\n\n")
	} else {
		fence := mdFence(yml)
		fmt.Fprintf(b, "%syaml\n%s%s\n\n", fence, yml, fence)
	}
	b.WriteString("## Warnings per query\n\nWhat `simulate explain` says about each query.\n\n")
	for _, w := range res.warnings() {
		fmt.Fprintf(b, "### %s\n\n%s\n\n", mdText(w.Name), mdCode(w.Query))
		if len(w.Warnings) == 0 {
			b.WriteString("No warnings.\n\n")
			continue
		}
		for _, x := range w.Warnings {
			fmt.Fprintf(b, "- %s\n", mdText(x))
		}
		b.WriteString("\n")
	}
	if rows := res.markerRows(); len(rows) > 0 {
		b.WriteString("## Marked on the charts\n\n" + markersNote(res.sum.Markers) + "\n\n| kind | at | until | what |\n|:--|--:|--:|:--|\n")
		for _, r := range rows {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdText(r.Kind), r.At, r.Until, mdText(r.Label))
		}
		b.WriteString("\n")
	}
	return nil
}

// markersNote introduces the list of markers.
func markersNote(ms []metrics.Marker) string {
	return joinSentences("Times are processing time since the start.", badClockCapNote(ms))
}

// mdCode renders s as a Markdown code span, with a fence long enough for
// any backticks inside it.
func mdCode(s string) string {
	// A code span renders a line break as a space; writing it as one
	// keeps a blank line in s from ending the span and the paragraph.
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdFence returns a code fence longer than any run of backticks in s, so
// no line of s can close the block early.
func mdFence(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence
}

// htmlChart is a chart as report.html embeds it.
type htmlChart struct {
	Title, ID, Note string
	SVG             template.HTML
}

// inlineSVG strips the XML prolog and the generator comment from an SVG
// file so it can sit inside HTML.
func inlineSVG(svg []byte) template.HTML {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	// gonum's SVG is built from escaped text and numbers only, so it is
	// safe to embed as is.
	return template.HTML(s)
}

// writeHTML writes report.html: one page, its CSS inline and its charts as
// inline SVG, so it can be mailed or attached as a single file.
func writeHTML(b *bytes.Buffer, res *results, charts []chartFile, findings, recs []string, yml string, toc []tocEntry) error {
	t, err := template.New("report").Parse(htmlTemplate())
	if err != nil {
		return err
	}
	var hc []htmlChart
	for _, c := range charts {
		hc = append(hc, htmlChart{Title: c.Title, ID: slug(c.Title), Note: c.Note, SVG: inlineSVG(c.SVG)})
	}
	data := map[string]any{
		"Title":    res.reportTitle(),
		"Intro":    strings.ReplaceAll(res.intro(), "`", ""),
		"Traffic":  res.trafficLine(),
		"TOC":      toc,
		"YAML":     yml,
		"Header":   summaryHeader(res.sum),
		"TextCols": 1 + labelsOf(res.sum).n(),
		// An engine column makes the table wider than the page: its
		// labels may break at their hyphens ("rocksdb-window-store").
		"WrapLabels":  otherEngines(res.sum),
		"Rows":        summaryRows(res.sum),
		"TableNote":   tableNoteFor(res.sum),
		"Charts":      hc,
		"Findings":    findings,
		"Recs":        recs,
		"Warnings":    res.warnings(),
		"Markers":     res.markerRows(),
		"MarkersNote": markersNote(res.sum.Markers),
		"Scenario":    res.scenarioWarnings(),
		"ScNote":      scenarioWarningsNote(),
	}
	if res.hasSparkSummary() {
		data["SparkHeader"], data["SparkRows"], data["SparkNote"] = sparkHeader(), res.sparkRows(), res.sparkNote()
	}
	if enginesCompared(res.sum) {
		data["ComparedHeader"], data["ComparedRows"], data["ComparedNote"] = enginesComparedHeader(), enginesComparedRows(res.sum), enginesComparedNote()
	}
	if rows := engineCountersRows(res.sum); len(rows) > 0 {
		data["CountersHeader"], data["CountersRows"], data["CountersNote"] = engineCountersHeader(res.sum), rows, engineCountersNote(res.sum)
	}
	return t.Execute(b, data)
}

// htmlTemplate is report.html. No scripts and no external references:
// the page must render the same from an attachment, offline.
func htmlTemplate() string {
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328; background: #fff; margin: 0; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 6px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #d8dee4; }
h3 { font-size: 16px; margin: 22px 0 6px; }
p.intro { color: #59636e; margin-top: 0; }
pre { background: #f6f8fa; border: 1px solid #d8dee4; border-radius: 6px; padding: 12px 14px; overflow-x: auto; font-size: 13px; line-height: 1.45; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
p code, li code { background: #f0f2f4; padding: 1px 5px; border-radius: 4px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13.5px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d8dee4; padding: 5px 9px; }
td { white-space: nowrap; }
th { background: #f6f8fa; font-weight: 600; vertical-align: bottom; }
td.num, th.num { text-align: right; }
td.text, th.text { text-align: left; }
tbody tr:nth-child(even) td { background: #fafbfc; }
p.note { color: #59636e; font-size: 13.5px; }
figure { margin: 18px 0 28px; }
figure svg { display: block; width: 100%; height: auto; max-width: 960px; border: 1px solid #eaeef2; border-radius: 6px; }
figcaption { color: #59636e; font-size: 13.5px; margin-top: 6px; }
ul.findings li { margin: 6px 0; }
nav.toc { font-size: 13.5px; background: #f6f8fa; border: 1px solid #d8dee4; border-radius: 6px; padding: 8px 14px; margin: 12px 0 0; }
nav.toc ul { margin: 4px 0; padding-left: 20px; }
nav.toc > ul { columns: 2; }
nav.toc > ul > li { break-inside: avoid; }
nav.toc a { color: #0969da; text-decoration: none; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p class="intro">{{.Intro}}</p>
{{if .Traffic}}<p class="intro">{{.Traffic}}</p>
{{end}}<nav class="toc"><b>Contents</b>
<ul>
{{range .TOC}}<li><a href="#{{.ID}}">{{.Title}}</a>{{if .Sub}}
<ul>
{{range .Sub}}<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{end}}</ul>
{{end}}</li>
{{end}}</ul>
</nav>
{{if .Scenario}}
<h2 id="warnings">Warnings</h2>
<p>{{.ScNote}}</p>
<ul class="warnings">
{{range .Scenario}}<li>{{if .Key}}<code>{{.Key}}</code>: {{end}}{{.Msg}}</li>
{{end}}</ul>
{{end}}
<h2 id="findings">Findings</h2>
{{if .Findings}}<ul class="findings">
{{range .Findings}}<li>{{.}}</li>
{{end}}</ul>{{else}}<p>No findings.</p>{{end}}
{{if .Recs}}
<h2 id="recommendation">Recommendation</h2>
<ul class="findings">
{{range .Recs}}<li>{{.}}</li>
{{end}}</ul>
{{end}}
<h2 id="summary">Summary</h2>
<div class="table-wrap">
<table>
<thead><tr>{{range $i, $h := .Header}}<th class="{{if lt $i $.TextCols}}text{{else}}num{{end}}">{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range $i, $c := .}}<td class="{{if lt $i $.TextCols}}text{{else}}num{{end}}"{{if and $.WrapLabels (gt $i 0) (lt $i $.TextCols)}} style="white-space: normal"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</div>
<p class="note">{{.TableNote}}</p>
{{if .SparkRows}}
<h2 id="spark-cluster-modelled">Spark cluster (modelled)</h2>
<div class="table-wrap">
<table>
<thead><tr>{{range $i, $h := .SparkHeader}}<th class="{{if eq $i 0}}text{{else}}num{{end}}">{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .SparkRows}}<tr>{{range $i, $c := .}}<td class="{{if eq $i 0}}text{{else}}num{{end}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</div>
<p class="note">{{.SparkNote}}</p>
{{end}}
{{if .ComparedRows}}
<h2 id="engines-compared">Engines compared</h2>
<div class="table-wrap">
<table>
<thead><tr>{{range $i, $h := .ComparedHeader}}<th class="{{if or (lt $i 3) (eq $i 6)}}text{{else}}num{{end}}">{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .ComparedRows}}<tr>{{range $i, $c := .}}<td class="{{if or (lt $i 3) (eq $i 6)}}text{{else}}num{{end}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</div>
<p class="note">{{.ComparedNote}}</p>
{{end}}
{{if .CountersRows}}
<h2 id="engine-counters">Engine counters</h2>
<div class="table-wrap">
<table>
<thead><tr>{{range $i, $h := .CountersHeader}}<th class="{{if lt $i 2}}text{{else}}num{{end}}">{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .CountersRows}}<tr>{{range $i, $c := .}}<td class="{{if lt $i 2}}text{{else}}num{{end}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</div>
<p class="note">{{.CountersNote}}</p>
{{end}}<h2 id="charts">Charts</h2>
{{range .Charts}}<figure id="{{.ID}}" aria-label="{{.Title}}">
{{.SVG}}
{{if .Note}}<figcaption>{{.Note}}</figcaption>
{{end}}</figure>
{{else}}<p>The timeseries holds no batches to draw.</p>
{{end}}
<h2 id="scenario-as-run">Scenario as run</h2>
{{if .YAML}}<pre><code>{{.YAML}}</code></pre>{{else}}<p>The results do not record the scenario.</p>{{end}}

<h2 id="warnings-per-query">Warnings per query</h2>
<p>What <code>simulate explain</code> says about each query.</p>
{{range .Warnings}}<h3>{{.Name}}</h3>
<pre><code>{{.Query}}</code></pre>
{{if .Warnings}}<ul>
{{range .Warnings}}<li>{{.}}</li>
{{end}}</ul>{{else}}<p>No warnings.</p>{{end}}
{{end}}
{{if .Markers}}<h2 id="marked-on-the-charts">Marked on the charts</h2>
<p>{{.MarkersNote}}</p>
<div class="table-wrap">
<table>
<thead><tr><th class="text">kind</th><th class="num">at</th><th class="num">until</th><th class="text">what</th></tr></thead>
<tbody>
{{range .Markers}}<tr><td class="text">{{.Kind}}</td><td class="num">{{.At}}</td><td class="num">{{.Until}}</td><td class="text">{{.Label}}</td></tr>
{{end}}</tbody>
</table>
</div>
{{end}}</main>
</body>
</html>
`
}
