package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/metrics/fitfile"
)

// RenderFit writes the report of a fit into dir: fit.json, report.md,
// report.html and the charts (rate, arrival-delay, retry-gap, lateness,
// copies; PNG and SVG). Every file is written atomically.
func RenderFit(dir string, r *fitfile.Report) error {
	if err := fitfile.Write(filepath.Join(dir, "fit.json"), r); err != nil {
		return err
	}
	write := func(name string, data []byte) error {
		if err := metrics.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	type spec struct {
		name, title, note string
		d                 drawing
		ok                bool
	}
	var specs []spec
	if d, ok := fitRateChart(r); ok {
		specs = append(specs, spec{"rate", "Rate over time", "Rows and estimated originals per second in each bin of the log; the fitted profile of originals on top (thick), each segment found by binary segmentation on Poisson counts.", d, true})
	}
	if d, ok := fitCDFChart("Arrival delay of originals: observed against fitted", r.Delay); ok {
		specs = append(specs, spec{"arrival-delay", "Arrival delay", cdfNote(r.Delay), d, true})
	}
	if d, ok := fitCDFChart("Gap between copies: observed against fitted", r.Gap); ok {
		specs = append(specs, spec{"retry-gap", "Gap between copies", cdfNote(r.Gap), d, true})
	}
	if d, ok := fitLatenessChart(r); ok {
		specs = append(specs, spec{"lateness", "Event time minus arrival", fmt.Sprintf("A sample of rows and every bad clock; above the dashed line (%s ahead) a row counts as a bad clock.", fmtSecs(r.Tolerance)), d, true})
	}
	if d, ok := fitCopiesChart(r); ok {
		specs = append(specs, spec{"copies", "Copies per event", "Events followed, by number of rows (1: never resent).", d, true})
	}
	var charts []chartFile
	for _, s := range specs {
		c, err := chartOf(s.name, s.title, s.note, s.d)
		if err != nil {
			return err
		}
		if err := write(c.Name+".png", c.PNG); err != nil {
			return err
		}
		if err := write(c.Name+".svg", c.SVG); err != nil {
			return err
		}
		charts = append(charts, c)
	}
	var md bytes.Buffer
	writeFitMarkdown(&md, r, charts)
	if err := write("report.md", md.Bytes()); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := writeFitHTML(&page, r, charts); err != nil {
		return err
	}
	return write("report.html", page.Bytes())
}

func cdfNote(d fitfile.Dist) string {
	if d.Family == "empirical" {
		return fmt.Sprintf("%d values; no family within the 1%% critical value of the Kolmogorov-Smirnov statistic (%.4f): the scenario draws the observed values. Log scale of seconds.", d.N, d.Critical)
	}
	return fmt.Sprintf("%d values; fitted %s, Kolmogorov-Smirnov statistic %.4f (1%% critical value %.4f). Log scale of seconds.", d.N, d.Spec, d.KS, d.Critical)
}

func styledLine(xys plotter.XYs, c color.Color, width float64, dashes []vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(width), dashes
	return l, nil
}

func fitRateChart(r *fitfile.Report) (drawing, bool) {
	if len(r.Rate.Rows) == 0 {
		return drawing{}, false
	}
	cs := seriesColors()
	return drawing{w: 8 * vg.Inch, h: 5 * vg.Inch, draw: func(dc draw.Canvas) error {
		rowsSt := draw.LineStyle{Color: color.Gray{Y: 0xA0}, Width: vg.Points(0.8)}
		origSt := draw.LineStyle{Color: cs[0], Width: vg.Points(0.8)}
		fitSt := draw.LineStyle{Color: cs[1], Width: vg.Points(2.5)}
		items := []legendItem{{"rows", []plot.Thumbnailer{lineThumb(rowsSt)}}, {"originals (estimated)", []plot.Thumbnailer{lineThumb(origSt)}}, {"fitted profile", []plot.Thumbnailer{lineThumb(fitSt)}}}
		area := frame(dc, "Rate over time, with the fitted profile", fmt.Sprintf("per %s bin", fmtSecs(r.Rate.BinSeconds)), items)
		p := newPlot("minutes from start", "per second")
		var rows, orig plotter.XYs
		for i := range r.Rate.Rows {
			x := (float64(i) + 0.5) * r.Rate.BinSeconds / 60
			rows = append(rows, plotter.XY{X: x, Y: r.Rate.Rows[i]})
			orig = append(orig, plotter.XY{X: x, Y: r.Rate.Originals[i]})
		}
		var prof plotter.XYs
		for _, s := range r.Rate.Profile {
			prof = append(prof, plotter.XY{X: s.Start / 60, Y: s.Rate}, plotter.XY{X: (s.Start + s.Length) / 60, Y: s.Rate})
		}
		for _, l := range []struct {
			xys plotter.XYs
			st  draw.LineStyle
		}{{thin(rows, 2000), rowsSt}, {thin(orig, 2000), origSt}, {prof, fitSt}} {
			ln, err := plotter.NewLine(l.xys)
			if err != nil {
				return err
			}
			ln.LineStyle = l.st
			p.Add(ln)
		}
		p.Y.Min = 0
		p.Draw(area)
		return nil
	}}, true
}

func fitCDFChart(title string, d fitfile.Dist) (drawing, bool) {
	if len(d.Observed) < 2 {
		return drawing{}, false
	}
	cs := seriesColors()
	return drawing{w: 8 * vg.Inch, h: 5 * vg.Inch, draw: func(dc draw.Canvas) error {
		obsSt := draw.LineStyle{Color: cs[0], Width: vg.Points(1.5)}
		fitSt := draw.LineStyle{Color: cs[1], Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
		items := []legendItem{{"observed", []plot.Thumbnailer{lineThumb(obsSt)}}, {"fitted " + d.Spec, []plot.Thumbnailer{lineThumb(fitSt)}}}
		area := frame(dc, title, fmt.Sprintf("%d values; KS %.4f", d.N, d.KS), items)
		p := newPlot("seconds (log scale)", "share at or below")
		floor := math.Inf(1)
		for _, q := range d.Observed {
			if q.X > 0 {
				floor = math.Min(floor, q.X)
			}
		}
		if math.IsInf(floor, 1) {
			floor = 1e-3
		}
		lx := func(x float64) float64 { return math.Log10(math.Max(x, floor)) }
		var obs, fitted plotter.XYs
		for i := range d.Observed {
			obs = append(obs, plotter.XY{X: lx(d.Observed[i].X), Y: d.Observed[i].Y})
			fitted = append(fitted, plotter.XY{X: lx(d.Fitted[i].X), Y: d.Fitted[i].Y})
		}
		for _, l := range []struct {
			xys plotter.XYs
			st  draw.LineStyle
		}{{obs, obsSt}, {fitted, fitSt}} {
			ln, err := plotter.NewLine(l.xys)
			if err != nil {
				return err
			}
			ln.LineStyle = l.st
			p.Add(ln)
		}
		p.X.Tick.Marker = logTicks{format: func(v float64) string { return fmtSecs(v) }}
		p.Y.Min, p.Y.Max = 0, 1
		p.Draw(area)
		return nil
	}}, true
}

func fitLatenessChart(r *fitfile.Report) (drawing, bool) {
	if len(r.Lateness) == 0 {
		return drawing{}, false
	}
	cs := seriesColors()
	return drawing{w: 8 * vg.Inch, h: 5 * vg.Inch, draw: func(dc draw.Canvas) error {
		area := frame(dc, "Event time minus arrival, over arrival time", "negative: late (the usual); far above 0: a bad clock", nil)
		p := newPlot("minutes from start", "event time - arrival (minutes)")
		var xys plotter.XYs
		for _, q := range r.Lateness {
			xys = append(xys, plotter.XY{X: q.X / 60, Y: q.Y / 60})
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		s.Color, s.Shape, s.Radius = cs[0], draw.CircleGlyph{}, vg.Points(1.2)
		p.Add(s)
		lo, hi := xys[0].X, xys[len(xys)-1].X
		tl, err := styledLine(plotter.XYs{{X: lo, Y: r.Tolerance / 60}, {X: hi, Y: r.Tolerance / 60}}, color.RGBA{R: 0xcf, G: 0x22, B: 0x2e, A: 0xff}, 1.2, []vg.Length{vg.Points(5), vg.Points(3)})
		if err != nil {
			return err
		}
		p.Add(tl)
		p.Draw(area)
		return nil
	}}, true
}

func fitCopiesChart(r *fitfile.Report) (drawing, bool) {
	if len(r.Copies) == 0 {
		return drawing{}, false
	}
	cs := seriesColors()
	return drawing{w: 8 * vg.Inch, h: 4 * vg.Inch, draw: func(dc draw.Canvas) error {
		area := frame(dc, "Rows per event", "events followed one by one", nil)
		p := newPlot("rows of the event", "events")
		vals := make(plotter.Values, len(r.Copies))
		for i, c := range r.Copies {
			vals[i] = float64(c)
		}
		b, err := plotter.NewBarChart(vals, vg.Points(20))
		if err != nil {
			return err
		}
		b.Color = cs[0]
		b.LineStyle.Width = 0
		p.Add(b)
		var labels []string
		for i := range r.Copies {
			labels = append(labels, fmt.Sprint(i+1))
		}
		p.NominalX(labels...)
		p.Draw(area)
		return nil
	}}, true
}

func writeFitMarkdown(b *bytes.Buffer, r *fitfile.Report, charts []chartFile) {
	fmt.Fprintf(b, "# Fit of %s\n\n", r.Log)
	fmt.Fprintf(b, "%s rows, about %s events (%s followed one by one); the fitted scenario is `%s`.\n\n", fmtInt(float64(r.Rows)), fmtInt(r.Events), fmtInt(float64(r.SampledEvents)), r.Scenario)
	b.WriteString("## Estimates\n\n| estimate | scenario key | value [95% interval] | method |\n|---|---|---|---|\n")
	for _, e := range r.Estimates {
		fmt.Fprintf(b, "| %s | `%s` | %s | %s |\n", mdCell(e.Name), e.Key, mdCell(e.Text+unitSuffix(e.Unit)), mdCell(e.Method))
	}
	if len(r.Compare) > 0 {
		b.WriteString("\n## The log and the fitted scenario, side by side\n\nThe log's own scenario (workload: events) and the fitted one, run through the same queries:\n\n")
		for _, q := range r.Queries {
			fmt.Fprintf(b, "- %s\n", mdCode(q))
		}
		b.WriteString("\n| query | measure | log | fitted | difference |\n|---|---|---|---|---|\n")
		for _, c := range r.Compare {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdCell(c.Query), c.Metric, num4(c.Log), num4(c.Fitted), pct(c.Diff))
		}
	}
	for _, c := range charts {
		fmt.Fprintf(b, "\n## %s\n\n![%s](%s.png)\n\n%s\n", c.Title, c.Title, c.Name, c.Note)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(b, "- %s\n", n)
		}
	}
	fmt.Fprintf(b, "\nWritten by `%s`; fit.json holds the same numbers.\n", r.Command)
}

func unitSuffix(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}

func num4(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.6g", v), ".") }

func pct(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) }

func writeFitHTML(b *bytes.Buffer, r *fitfile.Report, charts []chartFile) error {
	t, err := template.New("fit").Funcs(template.FuncMap{"num": num4, "pct": pct, "unit": unitSuffix}).Parse(fitTemplate)
	if err != nil {
		return err
	}
	type chart struct {
		Title, Note string
		SVG         template.HTML
	}
	var hc []chart
	for _, c := range charts {
		hc = append(hc, chart{c.Title, c.Note, inlineSVG(c.SVG)})
	}
	return t.Execute(b, map[string]any{"R": r, "Charts": hc, "Rows": fmtInt(float64(r.Rows)), "Events": fmtInt(r.Events), "Sampled": fmtInt(float64(r.SampledEvents))})
}

const fitTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fit of {{.R.Log}}</title>
<style>
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328; margin: 0; }
main { max-width: 1120px; margin: 0 auto; padding: 16px 24px 40px; }
h1 { font-size: 20px; margin: 0 0 8px; }
h2 { font-size: 17px; margin: 26px 0 8px; padding-bottom: 3px; border-bottom: 1px solid #d8dee4; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13.5px; }
th, td { border: 1px solid #d8dee4; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
.why { color: #40464d; font-size: 13px; margin: 8px 0 0; }
figure { margin: 12px 0; } figure svg { max-width: 100%; height: auto; }
figcaption { color: #59636e; font-size: 13px; }
</style>
</head>
<body><main>
<h1>Fit of {{.R.Log}}</h1>
<p>{{.Rows}} rows, about {{.Events}} events ({{.Sampled}} followed one by one); the fitted scenario is <code>{{.R.Scenario}}</code>.</p>
<h2 id="estimates">Estimates</h2>
<table><tr><th>estimate</th><th>scenario key</th><th>value [95% interval]</th><th>method</th></tr>
{{range .R.Estimates}}<tr><td>{{.Name}}</td><td><code>{{.Key}}</code></td><td>{{.Text}}{{unit .Unit}}</td><td>{{.Method}}</td></tr>
{{end}}</table>
{{if .R.Compare}}<h2 id="compare">The log and the fitted scenario, side by side</h2>
<p>The log's own scenario (workload: events) and the fitted one, run through the same queries:</p>
<ul>{{range .R.Queries}}<li><code>{{.}}</code></li>{{end}}</ul>
<table><tr><th>query</th><th>measure</th><th>log</th><th>fitted</th><th>difference</th></tr>
{{range .R.Compare}}<tr><td>{{.Query}}</td><td>{{.Metric}}</td><td>{{num .Log}}</td><td>{{num .Fitted}}</td><td>{{pct .Diff}}</td></tr>
{{end}}</table>{{end}}
{{range .Charts}}<h2>{{.Title}}</h2><figure>{{.SVG}}<figcaption>{{.Note}}</figcaption></figure>
{{end}}
{{if .R.Notes}}<h2 id="notes">Notes</h2><ul>{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p class="why">Written by <code>{{.R.Command}}</code>; fit.json holds the same numbers.</p>
</main></body></html>
`
