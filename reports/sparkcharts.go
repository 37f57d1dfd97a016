package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// The charts of a run with a spark: block, drawn from spark.csv:
//
//	batch-duration.{png,svg}  each batch's modelled duration at its start, the
//	                          trigger as a line: a batch above it overran
//	processing-lag.{png,svg}  each data batch's end minus its oldest row's arrival
//	partition-rows.{png,svg}  state rows of the fullest partition and of the
//	                          mean partition after each batch: the gap is the skew
//	executor-memory.{png,svg} the busiest executor's state memory per batch
//	executor-disk.{png,svg}   the busiest executor's local disk per batch, when
//	                          any (rocksdb): disk in a chart of its own, never
//	                          beside memory

// sparkSeries is one line of a spark chart: a run's values over batch
// start, in seconds after the start.
type sparkSeries struct {
	r     *run
	name  string
	style draw.LineStyle
	xys   plotter.XYs // x in seconds, y in the chart's unit
	// segs are the lines drawn: xys cut at downtimes, x in the axis' unit.
	segs []plotter.XYs
}

// sparkChartSpec is one spark chart.
type sparkChartSpec struct {
	name, title, yLabel string
	ticks               plot.Ticker
	// series returns the lines of a run; none to leave it out.
	series func(r *run, st draw.LineStyle, label string) []sparkSeries
	// ref, when set, is a horizontal reference line and its legend name.
	ref     *float64
	refName string
	// behind marks each query's fallingBehindSinceSeconds.
	behind bool
	// hold draws a value across a downtime as a step (state, which no
	// batch changed); otherwise the line breaks there (per-batch values).
	hold bool
	// perRun draws each query on a panel of its own.
	perRun bool
	// logWhenSmall draws the y axis on a log scale when every value stays
	// under a tenth of the reference line: batches of 2% of the trigger
	// would otherwise lie flat along zero under it.
	logWhenSmall bool
	note         string
}

// sparkCharts returns the spark charts the results call for: none
// without spark.csv.
func (res *results) sparkCharts() []sparkChartSpec {
	all, _ := res.timelineRuns()
	if !slices.ContainsFunc(all, func(r *run) bool { return len(r.spark) > 0 }) {
		return nil
	}
	trig := res.triggerSeconds()
	var out []sparkChartSpec
	hasDur := slices.ContainsFunc(all, func(r *run) bool {
		return slices.ContainsFunc(r.spark, func(b metrics.SparkBatch) bool { return b.DurationMs != nil })
	})
	if hasDur {
		out = append(out, sparkChartSpec{
			name: "batch-duration", title: "Batch duration against the trigger (modelled)", yLabel: "batch duration (s)",
			ticks: humanTicks{n: 6}, ref: &trig, refName: "trigger " + formatSpan(trig) + ": above it a batch overran", behind: true, logWhenSmall: true,
			series: func(r *run, st draw.LineStyle, label string) []sparkSeries {
				var xys plotter.XYs
				for _, b := range r.spark {
					if b.DurationMs != nil {
						xys = append(xys, plotter.XY{X: res.offsetSeconds(b.StartMs), Y: *b.DurationMs / 1000})
					}
				}
				return []sparkSeries{{r: r, name: label, style: st, xys: xys}}
			},
			note: "Each batch at the time it started. A batch above the trigger line overran: the next starts at its end, with the rows that arrived meanwhile. " +
				"A query falls behind when overruns last to the end of the traffic (marked where it begins).",
		})
	}
	out = append(out, sparkChartSpec{
		name: "processing-lag", title: "Processing lag over processing time (modelled)", yLabel: "processing lag (s)",
		ticks: humanTicks{n: 6}, behind: true,
		series: func(r *run, st draw.LineStyle, label string) []sparkSeries {
			var xys plotter.XYs
			for _, b := range r.spark {
				if b.ProcessingLagSeconds != nil {
					xys = append(xys, plotter.XY{X: res.offsetSeconds(b.StartMs), Y: *b.ProcessingLagSeconds})
				}
			}
			return []sparkSeries{{r: r, name: label, style: st, xys: xys}}
		},
		note: "A data batch's end minus the arrival of its oldest row: how long a row waits for its result. It stays under two triggers while the query keeps up.",
	})
	out = append(out, sparkChartSpec{
		name: "partition-rows", title: "State rows per shuffle partition (modelled split)", yLabel: "state rows in one partition",
		ticks: humanTicks{n: 6}, hold: true, perRun: true,
		series: func(r *run, st draw.LineStyle, label string) []sparkSeries {
			var mx, mean plotter.XYs
			for _, b := range r.spark {
				x := res.offsetSeconds(b.StartMs)
				mx = append(mx, plotter.XY{X: x, Y: float64(b.MaxPartitionRows)})
				mean = append(mean, plotter.XY{X: x, Y: b.MeanPartitionRows})
			}
			ms := draw.LineStyle{Color: st.Color, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
			return []sparkSeries{{r: r, name: "fullest partition: " + label, style: st, xys: mx}, {r: r, name: "mean partition: " + label, style: ms, xys: mean}}
		},
		note: "After each batch, the state rows of the fullest partition (solid) and of the mean partition (dotted), all dedup operators' stores of a partition together. " +
			"Keys go to partitions by Spark's hash: the lines part when a few keys hold many rows (skew); the fullest partition sizes its executor.",
	})
	perBatch := func(value func(b *metrics.SparkBatch) float64) func(r *run, st draw.LineStyle, label string) []sparkSeries {
		return func(r *run, st draw.LineStyle, label string) []sparkSeries {
			var xys plotter.XYs
			for i := range r.spark {
				xys = append(xys, plotter.XY{X: res.offsetSeconds(r.spark[i].StartMs), Y: value(&r.spark[i])})
			}
			return []sparkSeries{{r: r, name: label, style: st, xys: xys}}
		}
	}
	kind := "JVM heap (hdfs)"
	if res.sc.Spark != nil && res.sc.Spark.Provider == "rocksdb" {
		kind = "native memory (rocksdb)"
	}
	out = append(out, sparkChartSpec{
		name: "executor-memory", title: "Executor state memory over processing time (modelled)", yLabel: "state memory of the busiest executor",
		ticks: byteTicks{n: 6}, hold: true,
		series: perBatch(func(b *metrics.SparkBatch) float64 { return float64(b.ExecutorMemoryBytes) }),
		note:   "During each batch, the state memory of the busiest executor: " + kind + ", as the Spark cluster table's executor peak. Disk is never drawn here.",
	})
	hasDisk := slices.ContainsFunc(all, func(r *run) bool {
		return slices.ContainsFunc(r.spark, func(b metrics.SparkBatch) bool { return b.ExecutorDiskBytes > 0 })
	})
	if hasDisk {
		out = append(out, sparkChartSpec{
			name: "executor-disk", title: "Executor local disk over processing time (modelled)", yLabel: "local disk of the busiest executor",
			ticks: byteTicks{n: 6}, hold: true,
			series: perBatch(func(b *metrics.SparkBatch) float64 { return float64(b.ExecutorDiskBytes) }),
			note:   "During each batch, the local disk of the busiest executor's state stores (RocksDB's SST files), in a chart of its own: bytes on disk are not memory.",
		})
	}
	return out
}

// sparkChart draws spec over processing time, one line (or two) per
// query, with the run's markers: it gathers the series, picks the y axis
// (linear, or logarithmic when every value lies flat under the
// reference), adds the legend's reference and falling-behind lines,
// writes the note, and draws one panel per group of series.
func sparkChart(res *results, spec sparkChartSpec) (d drawing, title, note string, ok bool) {
	all, sweepNote := res.timelineRuns()
	runs := slices.DeleteFunc(slices.Clone(all), func(r *run) bool { return len(r.spark) == 0 })
	if len(runs) == 0 {
		return d, "", "", false
	}
	ax := res.newTimeAxis(runs)
	st := newStyles(all)
	series, items, yMax := sparkChartSeries(res, spec, runs, ax, st)
	if len(series) == 0 {
		return d, "", "", false
	}
	dataMax := yMax
	logMin := sparkLogMin(spec, series, yMax)
	if logMin > 0 {
		// Log scales take positive values only.
		for i := range series {
			for k, seg := range series[i].segs {
				series[i].segs[k] = slices.DeleteFunc(seg, func(p plotter.XY) bool { return p.Y <= 0 })
			}
		}
	}
	l := sparkLayout{res: res, spec: spec, ax: ax, logMin: logMin, st: st,
		refStyle: draw.LineStyle{Color: color.RGBA{0xB0, 0x20, 0x20, 0xFF}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}}
	if spec.ref != nil {
		yMax = max(yMax, *spec.ref)
		items = append(items, legendItem{name: spec.refName, thumbs: []plot.Thumbnailer{lineThumb(l.refStyle)}})
	}
	if spec.behind {
		for _, r := range runs {
			if sp := r.sum.SparkSummary; sp != nil && sp.FallingBehindSinceSeconds != nil && *sp.FallingBehindSinceSeconds <= ax.end {
				l.behind = append(l.behind, r)
				items = append(items, legendItem{name: "falls behind: " + r.label(res.isSweep() && r.sum.Delay != nil), thumbs: []plot.Thumbnailer{lineThumb(l.behindStyle(r))}})
			}
		}
	}
	items = append(items, markerLegend(res.sum.Markers)...)
	if yMax <= 0 {
		yMax = 1
	}
	l.yMax = yMax
	title = spec.title
	note = joinSentences(spec.note, ax.note)
	if logMin > 0 {
		note = joinSentences(fmt.Sprintf("The y axis is logarithmic: every batch took at most %s of the %s trigger (%s), which a linear axis would draw flat along zero.",
			interval.Percent(dataMax / *spec.ref), formatSpan(*spec.ref), formatMs(dataMax*1000)), note)
	}
	if sweepNote != "" {
		note = joinSentences(capitalize(sweepNote)+".", note)
	}
	groups := sparkGroups(spec, runs, series)
	h := 5 * vg.Inch
	if len(groups) > 1 {
		h = 2*vg.Inch + vg.Length(len(groups))*2*vg.Inch
		note = joinSentences("One panel per query, each on its own scale.", note)
	}
	d = drawing{w: 8 * vg.Inch, h: h, draw: func(dc draw.Canvas) error {
		area := frame(dc, title, res.subtitle(sweepNote), items)
		plots := make([]*plot.Plot, len(groups))
		layers := make([]*markerLayer, len(groups))
		tops := make([]float64, len(groups))
		for k, g := range groups {
			p, ml, err := l.panel(g, k == 0, k == len(groups)-1, len(groups) > 1)
			if err != nil {
				return err
			}
			plots[k], layers[k], tops[k] = p, ml, p.Y.Max
		}
		gap := vg.Points(10)
		layers[0].reserveBand(plots[0], stack(plots, area, gap)[0], tops[0])
		for k, c := range stack(plots, area, gap) {
			plots[k].Draw(c)
		}
		return nil
	}}
	return d, title, note, true
}

// sparkChartSeries returns the lines spec draws for runs, cut at the
// time axis' end and at downtimes (or held over them), x in the axis'
// unit, with their legend items and the largest value drawn.
func sparkChartSeries(res *results, spec sparkChartSpec, runs []*run, ax timeAxis, st styles) ([]sparkSeries, []legendItem, float64) {
	var series []sparkSeries
	var items []legendItem
	yMax := 0.0
	for _, r := range runs {
		for _, s := range spec.series(r, st[r], r.label(res.isSweep() && r.sum.Delay != nil)) {
			var xys plotter.XYs
			for _, p := range s.xys {
				if p.X > ax.end+1e-6 {
					break
				}
				xys = append(xys, p)
				yMax = max(yMax, p.Y)
			}
			if len(xys) == 0 {
				continue
			}
			segs := res.splitAtDowntime(xys)
			if spec.hold {
				segs = []plotter.XYs{res.holdOverDowntime(xys, 1)}
			}
			for _, seg := range segs {
				for k := range seg {
					seg[k].X /= ax.unit.sec
				}
			}
			s.segs = segs
			series = append(series, s)
			items = append(items, legendItem{name: s.name, thumbs: []plot.Thumbnailer{lineThumb(s.style)}})
		}
	}
	return series, items, yMax
}

// sparkLogMin returns the bottom of a log y axis, a little under the
// shortest positive value, when spec asks for one and the values (at
// most yMax) would otherwise lie flat under the reference; 0 for a
// linear axis.
func sparkLogMin(spec sparkChartSpec, series []sparkSeries, yMax float64) float64 {
	if !spec.logWhenSmall || spec.ref == nil || yMax <= 0 || yMax >= 0.1**spec.ref {
		return 0
	}
	logMin := math.Inf(1)
	for _, s := range series {
		for _, seg := range s.segs {
			for _, p := range seg {
				if p.Y > 0 {
					logMin = min(logMin, p.Y)
				}
			}
		}
	}
	if math.IsInf(logMin, 1) {
		return 0
	}
	return logMin
}

// sparkGroups returns the panels: every series on one, or, for a chart
// per query, each query's series on its own with its own y scale (a
// small state would lie flat on zero beside a large one).
func sparkGroups(spec sparkChartSpec, runs []*run, series []sparkSeries) [][]sparkSeries {
	if !spec.perRun || len(runs) <= 1 {
		return [][]sparkSeries{series}
	}
	var groups [][]sparkSeries
	for _, r := range runs {
		var g []sparkSeries
		for _, s := range series {
			if s.r == r {
				g = append(g, s)
			}
		}
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

// sparkLayout is what the panels of a spark chart share.
type sparkLayout struct {
	res  *results
	spec sparkChartSpec
	ax   timeAxis
	st   styles
	// yMax is the top of a shared y scale; logMin, when positive, the
	// bottom of a log axis.
	yMax, logMin float64
	refStyle     draw.LineStyle
	// behind are the runs whose falling-behind time is marked.
	behind []*run
}

// behindStyle is the dashed line marking when run r falls behind.
func (l *sparkLayout) behindStyle(r *run) draw.LineStyle {
	return draw.LineStyle{Color: l.st[r].Color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
}

// panel draws the series g on a plot of its own: first says the panel
// carries the markers' labels, last its x axis label, and several that
// each panel has its own y scale and names its query.
func (l *sparkLayout) panel(g []sparkSeries, first, last, several bool) (*plot.Plot, *markerLayer, error) {
	res, spec, ax := l.res, l.spec, l.ax
	toX := func(s float64) float64 { return s / ax.unit.sec }
	xl := ""
	if last {
		xl = "processing time since start (" + ax.unit.name + ")"
	}
	yl := spec.yLabel
	if several {
		yl = g[0].r.label(res.isSweep() && g[0].r.sum.Delay != nil) + ": rows"
	}
	p := newPlot(xl, yl)
	p.X.Tick.Marker = timeTicks{ax.unit.name}
	p.Y.Tick.Marker = spec.ticks
	ml := &markerLayer{markers: res.sum.Markers, toX: toX, coarse: ax.unit.name != "min", labels: first, drain: ax.drain}
	p.Add(ml)
	top := l.yMax
	if several {
		top = 0
		for _, s := range g {
			for _, seg := range s.segs {
				for _, pt := range seg {
					top = max(top, pt.Y)
				}
			}
		}
		top = max(top, 1)
	}
	if spec.ref != nil {
		ln, err := plotter.NewLine(plotter.XYs{{X: 0, Y: *spec.ref}, {X: toX(ax.end), Y: *spec.ref}})
		if err != nil {
			return nil, nil, err
		}
		ln.LineStyle = l.refStyle
		p.Add(ln)
	}
	for _, r := range l.behind {
		if several && r != g[0].r {
			continue
		}
		x := toX(*r.sum.SparkSummary.FallingBehindSinceSeconds)
		ln, err := plotter.NewLine(plotter.XYs{{X: x, Y: max(0, math.Pow(10, math.Floor(math.Log10(l.logMin))))}, {X: x, Y: top * 1.03}})
		if err != nil {
			return nil, nil, err
		}
		ln.LineStyle = l.behindStyle(r)
		p.Add(ln)
	}
	for _, s := range g {
		ls, err := lines(s.segs, s.style)
		if err != nil {
			return nil, nil, fmt.Errorf("query %s: %w", s.r.sum.Name, err)
		}
		p.Add(ls...)
	}
	p.X.Min, p.X.Max = 0, toX(ax.end)
	p.Y.Min, p.Y.Max = 0, top*1.03
	if l.logMin > 0 {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		// From the power of ten under the shortest batch, so the axis
		// has a labelled tick under the line.
		p.Y.Min, p.Y.Max = math.Pow(10, math.Floor(math.Log10(l.logMin))), top*1.5
	}
	return p, ml, nil
}
