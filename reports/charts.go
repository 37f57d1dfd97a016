package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/metrics"
)

// chartFile is one chart of a report, rendered in both formats.
type chartFile struct {
	// Name is the base file name: Name+".png" and Name+".svg".
	Name string
	// Title says what the chart shows; it captions the chart in reports.
	Title string
	// Note, when set, tells the reader something the chart leaves out.
	Note     string
	PNG, SVG []byte
}

// maxPoints bounds the points of one line. A week at a 10 s trigger is
// 60,480 batches per query; thinning keeps charts (and the SVG embedded in
// report.html) light without changing their shape.
const maxPoints = 1600

// buildCharts draws every chart the results call for, in report order.
func buildCharts(res *results) ([]chartFile, error) {
	type spec struct {
		name, title, note string
		d                 drawing
	}
	var specs []spec
	if d, title, note, ok := stateRowsChart(res); ok {
		specs = append(specs, spec{"state-rows", title, note, d})
	}
	if d, title, note, ok := watermarkChart(res); ok {
		specs = append(specs, spec{"watermark", title, note, d})
	}
	if d, title, note, ok := horizonChart(res); ok {
		specs = append(specs, spec{"horizon-tradeoff", title, note, d})
	}
	out := make([]chartFile, 0, len(specs))
	for _, s := range specs {
		png, err := renderPNG(s.d)
		if err != nil {
			return nil, fmt.Errorf("chart %s.png: %w", s.name, err)
		}
		svg, err := renderSVG(s.d)
		if err != nil {
			return nil, fmt.Errorf("chart %s.svg: %w", s.name, err)
		}
		out = append(out, chartFile{Name: s.name, Title: s.title, Note: s.note, PNG: png, SVG: svg})
	}
	return out, nil
}

// timeUnit is the unit of a processing-time axis.
type timeUnit struct {
	name string  // "min", "h" or "d"
	sec  float64 // seconds per unit
}

// chooseUnit picks minutes up to three hours, hours up to three days, then
// days, so the axis reads in small round numbers.
func chooseUnit(spanSec float64) timeUnit {
	switch {
	case spanSec <= 3*3600:
		return timeUnit{"min", 60}
	case spanSec <= 3*86400:
		return timeUnit{"h", 3600}
	}
	return timeUnit{"d", 86400}
}

// timeSpan returns the seconds after the start that a chart over
// processing time must show: the last batch of runs, or the end of the
// last marker if later.
func (res *results) timeSpan(runs []*run) float64 {
	span := 0.0
	for _, r := range runs {
		if n := len(r.batches); n > 0 {
			span = max(span, res.offsetSeconds(r.batches[n-1].ProcessingTime))
		}
	}
	for _, m := range res.sum.Markers {
		span = max(span, m.At)
		if m.Until != nil {
			span = max(span, *m.Until)
		}
	}
	return span
}

// thin reduces a line to about n points, keeping each bucket's lowest and
// highest point in x order, so peaks and drops survive.
func thin(xys plotter.XYs, n int) plotter.XYs {
	if len(xys) <= n || n < 4 {
		return xys
	}
	size := int(math.Ceil(float64(len(xys)) / float64(n/2)))
	out := make(plotter.XYs, 0, n+2)
	for lo := 0; lo < len(xys); lo += size {
		hi := min(lo+size, len(xys))
		iMin, iMax := lo, lo
		for i := lo; i < hi; i++ {
			if xys[i].Y < xys[iMin].Y {
				iMin = i
			}
			if xys[i].Y > xys[iMax].Y {
				iMax = i
			}
		}
		a, b := min(iMin, iMax), max(iMin, iMax)
		if lo == 0 && a != 0 {
			out = append(out, xys[0])
		}
		out = append(out, xys[a])
		if b != a {
			out = append(out, xys[b])
		}
		if hi == len(xys) && b != hi-1 {
			out = append(out, xys[hi-1])
		}
	}
	return out
}

// lines makes one gonum line per segment, all in one style.
func lines(segs []plotter.XYs, st draw.LineStyle) ([]plot.Plotter, error) {
	var out []plot.Plotter
	for _, s := range segs {
		if len(s) == 0 {
			continue
		}
		l, err := plotter.NewLine(thin(s, maxPoints))
		if err != nil {
			return nil, err
		}
		l.LineStyle = st
		out = append(out, l)
	}
	return out, nil
}

// subtitle joins the scenario's name and seed with a note.
func (res *results) subtitle(note string) string {
	s := fmt.Sprintf("seed %d", res.sum.Seed)
	if res.sc.Name != "" {
		s = res.sc.Name + ", " + s
	}
	if note != "" {
		s += "; " + note
	}
	return s
}

// lineThumb draws a legend entry for a line style.
func lineThumb(st draw.LineStyle) plot.Thumbnailer {
	return &plotter.Line{LineStyle: st}
}

// zoomShare is the share of the largest peak under which a query's state
// is too flat to read next to it; such queries get a zoomed panel.
const zoomShare = 0.05

// stateRowsChart draws state rows over processing time, one line per
// query, with the run's stalls and faults marked. When some queries hold
// far less state than others (bounded next to unbounded), a second panel
// shows those alone, zoomed: on one axis they would lie flat on zero.
func stateRowsChart(res *results) (d drawing, title, note string, ok bool) {
	all, sweepNote := res.timelineRuns()
	runs := slices.DeleteFunc(slices.Clone(all), func(r *run) bool { return len(r.batches) == 0 })
	if len(runs) == 0 {
		return d, "", "", false
	}
	span := res.timeSpan(runs)
	unit := chooseUnit(span)
	title = "State rows over processing time"
	// A query's style comes from its place among all the queries, so it
	// is the same on every chart over processing time.
	styleOf := func(r *run) draw.LineStyle { return seriesStyle(slices.Index(all, r), len(all)) }
	var items []legendItem
	for _, r := range runs {
		items = append(items, legendItem{name: r.label(res.isSweep() && r.sum.Delay != nil), thumbs: []plot.Thumbnailer{lineThumb(styleOf(r))}})
	}
	items = append(items, markerLegend(res.sum.Markers)...)
	peak := func(r *run) float64 {
		m := 0.0
		for _, b := range r.batches {
			m = max(m, float64(b.StateRows))
		}
		return m
	}
	dataMax := 1.0
	for _, r := range runs {
		dataMax = max(dataMax, peak(r))
	}
	var small []int // indexes into runs of the queries to zoom on
	smallMax := 1.0
	for i, r := range runs {
		if p := peak(r); p < zoomShare*dataMax {
			small = append(small, i)
			smallMax = max(smallMax, p)
		}
	}
	zoom := len(small) > 0 && len(small) < len(runs)
	h := 5 * vg.Inch
	subtitle := res.subtitle(sweepNote)
	if zoom {
		h = 7 * vg.Inch
		note = fmt.Sprintf("The lower panel zooms on the queries whose state stays under %s of the largest.", metrics.FormatPercent(zoomShare))
		subtitle = res.subtitle(joinNotes(sweepNote, "lower panel: small-state queries, zoomed"))
	}
	if sweepNote != "" {
		note = joinSentences(capitalize(sweepNote)+".", note)
	}
	toX := func(s float64) float64 { return s / unit.sec }
	panel := func(idx []int, yLabel string, labels bool, top float64) (*plot.Plot, *markerLayer, error) {
		p := newPlot("processing time since start ("+unit.name+")", yLabel)
		p.X.Tick.Marker = timeTicks{unit.name}
		ml := &markerLayer{markers: res.sum.Markers, toX: toX, coarse: unit.name != "min", labels: labels}
		p.Add(ml)
		for _, i := range idx {
			r := runs[i]
			xys := make(plotter.XYs, len(r.batches))
			for j, b := range r.batches {
				xys[j] = plotter.XY{X: toX(res.offsetSeconds(b.ProcessingTime)), Y: float64(b.StateRows)}
			}
			ls, err := lines([]plotter.XYs{xys}, styleOf(r))
			if err != nil {
				return nil, nil, fmt.Errorf("query %s: %w", r.sum.Name, err)
			}
			p.Add(ls...)
		}
		p.X.Min, p.X.Max = 0, toX(span)
		// A little headroom so the highest line does not run along the
		// top edge.
		p.Y.Min, p.Y.Max = 0, top*1.03
		return p, ml, nil
	}
	every := make([]int, len(runs))
	for i := range every {
		every[i] = i
	}
	d = drawing{w: 8 * vg.Inch, h: h, draw: func(dc draw.Canvas) error {
		area := frame(dc, title, subtitle, items)
		top, ml, err := panel(every, "state rows", true, dataMax)
		if err != nil {
			return err
		}
		if !zoom {
			ml.reserveBand(top, area, dataMax*1.03)
			top.Draw(area)
			return nil
		}
		top.X.Label.Text = ""
		bottom, _, err := panel(small, "state rows (zoomed)", false, smallMax)
		if err != nil {
			return err
		}
		ml.reserveBand(top, stack([]*plot.Plot{top, bottom}, area, vg.Points(12))[0], dataMax*1.03)
		cs := stack([]*plot.Plot{top, bottom}, area, vg.Points(12))
		top.Draw(cs[0])
		bottom.Draw(cs[1])
		return nil
	}}
	return d, title, note, true
}

// joinNotes joins the non-empty notes with "; ".
func joinNotes(notes ...string) string {
	return strings.Join(slices.DeleteFunc(slices.Clone(notes), func(s string) bool { return s == "" }), "; ")
}

// joinSentences joins the non-empty sentences with a space.
func joinSentences(ss ...string) string {
	return strings.Join(slices.DeleteFunc(slices.Clone(ss), func(s string) bool { return s == "" }), " ")
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// watermarkChart draws, per query with a watermark, the watermark (in
// event time since the start) above its lag behind processing time.
func watermarkChart(res *results) (d drawing, title, note string, ok bool) {
	all, sweepNote := res.timelineRuns()
	runs := slices.DeleteFunc(slices.Clone(all), func(r *run) bool {
		return !slices.ContainsFunc(r.batches, hasWatermark)
	})
	if len(runs) == 0 {
		return d, "", "", false
	}
	span := res.timeSpan(runs)
	unit := chooseUnit(span)
	title = "Watermark and watermark lag over processing time"
	// Series keep the style they have on the state chart, so a query
	// reads the same on both.
	styleOf := func(r *run) draw.LineStyle { return seriesStyle(slices.Index(all, r), len(all)) }
	ref := draw.LineStyle{Color: color.Gray{Y: 0x90}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}
	var items []legendItem
	for _, r := range runs {
		items = append(items, legendItem{name: r.label(res.isSweep()), thumbs: []plot.Thumbnailer{lineThumb(styleOf(r))}})
	}
	items = append(items, legendItem{name: "processing time (lag 0)", thumbs: []plot.Thumbnailer{lineThumb(ref)}})
	items = append(items, markerLegend(res.sum.Markers)...)

	var wmMin, wmMax, lagMin, lagMax = 0.0, span / unit.sec, 0.0, 0.0
	segsWM := make([][]plotter.XYs, len(runs))
	segsLag := make([][]plotter.XYs, len(runs))
	for i, r := range runs {
		var wm, lag plotter.XYs
		for _, b := range r.batches {
			if !hasWatermark(b) {
				// Unset watermark: end the segment, so no line joins
				// across it.
				if len(wm) > 0 {
					segsWM[i], segsLag[i] = append(segsWM[i], wm), append(segsLag[i], lag)
					wm, lag = nil, nil
				}
				continue
			}
			x := res.offsetSeconds(b.ProcessingTime) / unit.sec
			w := res.offsetSeconds(b.Watermark) / unit.sec
			l := float64(b.ProcessingTime-b.Watermark) / 60000
			wm = append(wm, plotter.XY{X: x, Y: w})
			lag = append(lag, plotter.XY{X: x, Y: l})
			wmMin, wmMax = min(wmMin, w), max(wmMax, w)
			lagMin, lagMax = min(lagMin, l), max(lagMax, l)
		}
		if len(wm) > 0 {
			segsWM[i], segsLag[i] = append(segsWM[i], wm), append(segsLag[i], lag)
		}
	}
	if lagMax == lagMin {
		lagMax = lagMin + 1
	}
	d = drawing{w: 8 * vg.Inch, h: 6 * vg.Inch, draw: func(dc draw.Canvas) error {
		area := frame(dc, title, res.subtitle(sweepNote), items)
		toX := func(s float64) float64 { return s / unit.sec }
		top := newPlot("", "watermark ("+unit.name+" since start)")
		top.X.Tick.Marker = timeTicks{unit.name}
		ml := &markerLayer{markers: res.sum.Markers, toX: toX, coarse: unit.name != "min", labels: true}
		top.Add(ml)
		diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: span / unit.sec, Y: span / unit.sec}})
		if err != nil {
			return err
		}
		diag.LineStyle = ref
		top.Add(diag)
		bottom := newPlot("processing time since start ("+unit.name+")", "watermark lag (min)")
		bottom.X.Tick.Marker = timeTicks{unit.name}
		bottom.Add(&markerLayer{markers: res.sum.Markers, toX: toX})
		zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: span / unit.sec, Y: 0}})
		if err != nil {
			return err
		}
		zero.LineStyle = ref
		bottom.Add(zero)
		for i, r := range runs {
			ls, err := lines(segsWM[i], styleOf(r))
			if err != nil {
				return fmt.Errorf("query %s: %w", r.sum.Name, err)
			}
			top.Add(ls...)
			if ls, err = lines(segsLag[i], styleOf(r)); err != nil {
				return fmt.Errorf("query %s: %w", r.sum.Name, err)
			}
			bottom.Add(ls...)
		}
		for _, p := range []*plot.Plot{top, bottom} {
			p.X.Min, p.X.Max = 0, span/unit.sec
		}
		top.Y.Min = wmMin
		bottom.Y.Min, bottom.Y.Max = lagMin, lagMax+(lagMax-lagMin)*0.05
		// Reserve the label band on a first layout, then lay out again:
		// the band changes the top panel's y ticks, hence its margin.
		ml.reserveBand(top, stack([]*plot.Plot{top, bottom}, area, vg.Points(12))[0], wmMax)
		cs := stack([]*plot.Plot{top, bottom}, area, vg.Points(12))
		top.Draw(cs[0])
		bottom.Draw(cs[1])
		return nil
	}}
	if sweepNote != "" {
		note = capitalize(sweepNote) + "."
	}
	return d, title, note, true
}

// hasWatermark reports whether b ran with a watermark that is set (see
// metrics.BatchRecord.WatermarkSet).
func hasWatermark(b metrics.BatchRecord) bool { return b.WatermarkSet() }

// horizonChart draws, when some query was run with several delays, the
// delay against the missed-duplicate rate, the false-drop rate (log) and
// peak state rows, one series per query.
func horizonChart(res *results) (d drawing, title, note string, ok bool) {
	h, ok := newHorizon(res)
	if !ok {
		return d, "", "", false
	}
	subtitle := res.subtitle("")
	if h.anyZeroFD {
		note = "A false-drop rate of 0 cannot sit on a log axis: it is drawn at the bottom of that panel, labelled 0."
		subtitle = res.subtitle("false-drop rate 0 drawn at the log axis floor, labelled 0")
	}
	title = "Horizon tradeoff: what each watermark delay costs"
	items := h.legend()
	d = drawing{w: 8 * vg.Inch, h: 7 * vg.Inch, draw: func(dc draw.Canvas) error {
		area := frame(dc, title, subtitle, items)
		plots := make([]*plot.Plot, len(h.panels()))
		for k := range plots {
			p, err := h.panel(k)
			if err != nil {
				return err
			}
			plots[k] = p
		}
		for k, c := range stack(plots, area, vg.Points(10)) {
			plots[k].Draw(c)
		}
		return nil
	}}
	return d, title, note, true
}

// horizon is the data of the horizon chart: a series per query, the
// delays of the sweep, and the scales of its three panels.
type horizon struct {
	ss     []horizonSeries
	delays []float64 // minutes, sorted
	// xMin and xMax are the smallest and largest delay; logX puts the
	// delays on a log axis.
	xMin, xMax float64
	logX       bool
	// floor is the false-drop panel's floor: below the smallest rate a
	// run could show (one event of the largest run), so a zero is never
	// confused with a real rate.
	floor        float64
	fdMax        float64
	missMax      float64
	stMin, stMax float64
	logState     bool
	anyZeroFD    bool
}

// horizonSeries is one query's points.
type horizonSeries struct {
	name string
	pts  []*run // sorted by delay, delays set
	flat *run   // a query without a watermark: a constant reference
}

// newHorizon gathers the chart's data; ok is false when no query was run
// with several delays.
func newHorizon(res *results) (h *horizon, ok bool) {
	h = &horizon{stMin: math.Inf(1)}
	swept := false
	for _, name := range res.queryNames() {
		var pts []*run
		var flat *run
		for _, r := range res.runsOf(name) {
			if r.sum.Delay == nil {
				if flat == nil {
					flat = r
				}
				continue
			}
			pts = append(pts, r)
			if m := *r.sum.Delay / 60; !slices.Contains(h.delays, m) {
				h.delays = append(h.delays, m)
			}
		}
		slices.SortStableFunc(pts, func(a, b *run) int { return compareDelay(a.sum.Delay, b.sum.Delay) })
		if len(pts) >= 2 {
			swept = true
		}
		if len(pts) > 0 {
			h.ss = append(h.ss, horizonSeries{name: name, pts: pts})
		} else if flat != nil {
			h.ss = append(h.ss, horizonSeries{name: name, flat: flat})
		}
	}
	if !swept {
		return nil, false
	}
	slices.Sort(h.delays)
	h.xMin, h.xMax = h.delays[0], h.delays[len(h.delays)-1]
	h.logX = h.xMin > 0 && h.xMax/h.xMin >= 20
	var maxLogical int64 = 1
	for _, s := range h.ss {
		for _, r := range append(slices.Clone(s.pts), s.flat) {
			if r == nil {
				continue
			}
			maxLogical = max(maxLogical, r.sum.LogicalEvents)
			fd := rate(r.sum.FalseDrops, r.sum.LogicalEvents)
			h.fdMax = max(h.fdMax, fd)
			h.anyZeroFD = h.anyZeroFD || fd == 0
			h.missMax = max(h.missMax, 100*rate(r.sum.MissedDuplicates, r.sum.TrueDuplicates))
			h.stMin, h.stMax = min(h.stMin, float64(r.sum.PeakStateRows)), max(h.stMax, float64(r.sum.PeakStateRows))
		}
	}
	h.floor = math.Pow(10, math.Floor(math.Log10(0.5/float64(maxLogical))))
	h.logState = h.stMin > 0 && h.stMax/h.stMin >= 50
	return h, true
}

// legend names each query's series.
func (h *horizon) legend() []legendItem {
	var items []legendItem
	for i, s := range h.ss {
		name := s.name
		if s.flat != nil {
			name += " (no watermark)"
		}
		thumbs := []plot.Thumbnailer{lineThumb(seriesStyle(i, len(h.ss)))}
		if s.flat == nil {
			thumbs = append(thumbs, glyphThumb(glyphStyle(i)))
		}
		items = append(items, legendItem{name: name, thumbs: thumbs})
	}
	return items
}

// xOf places a delay in minutes on the x axis; log axes are drawn as
// linear axes of log10 values (see logTicks).
func (h *horizon) xOf(m float64) float64 {
	if h.logX {
		return math.Log10(m)
	}
	return m
}

// horizonPanel is one of the stacked charts: its y label and a run's y
// value, already on the axis' scale.
type horizonPanel struct {
	yLabel string
	value  func(r *run) float64
}

// panels returns the three panels, top to bottom.
func (h *horizon) panels() []horizonPanel {
	yState := func(v float64) float64 { return v }
	stateLabel := "peak state rows"
	if h.logState {
		yState, stateLabel = math.Log10, "peak state rows (log)"
	}
	return []horizonPanel{
		{"missed duplicates (%)", func(r *run) float64 { return 100 * rate(r.sum.MissedDuplicates, r.sum.TrueDuplicates) }},
		{"false drops (%, log)", func(r *run) float64 { return math.Log10(max(rate(r.sum.FalseDrops, r.sum.LogicalEvents), h.floor)) }},
		{stateLabel, func(r *run) float64 { return yState(max(float64(r.sum.PeakStateRows), 1)) }},
	}
}

// panel builds panel k: a line per query (with a point per delay), the
// shared x axis (labelled on the bottom panel only, so the panels sit
// close and read as one chart) and the panel's own y scale.
func (h *horizon) panel(k int) (*plot.Plot, error) {
	pn := h.panels()[k]
	bottomPanel := k == len(h.panels())-1
	xl := ""
	if bottomPanel {
		xl = "watermark delay (min)"
		if h.logX {
			xl = "watermark delay (min, log scale)"
		}
	}
	p := newPlot(xl, pn.yLabel)
	for i, s := range h.ss {
		var xys plotter.XYs
		if s.flat != nil {
			v := pn.value(s.flat)
			xys = plotter.XYs{{X: h.xOf(h.xMin), Y: v}, {X: h.xOf(h.xMax), Y: v}}
		}
		for _, r := range s.pts {
			xys = append(xys, plotter.XY{X: h.xOf(*r.sum.Delay / 60), Y: pn.value(r)})
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", s.name, err)
		}
		l.LineStyle = seriesStyle(i, len(h.ss))
		l.LineStyle.Width = max(l.LineStyle.Width-vg.Points(0.6), vg.Points(1))
		sc.GlyphStyle = glyphStyle(i)
		p.Add(l)
		if s.flat == nil {
			p.Add(sc)
		}
	}
	p.X.Min, p.X.Max = h.xOf(h.xMin), h.xOf(h.xMax)
	switch {
	case len(h.delays) <= 12:
		// A tick at each delay of the sweep, labelled in minutes.
		var ticks plot.ConstantTicks
		for _, m := range h.delays {
			tk := plot.Tick{Value: h.xOf(m)}
			if bottomPanel {
				tk.Label = humanNumber(m)
			}
			ticks = append(ticks, tk)
		}
		p.X.Tick.Marker = ticks
	case h.logX:
		p.X.Tick.Marker = logTicks{format: humanNumber}
	}
	if !bottomPanel {
		p.X.Tick.Label.Font.Size = 0
	}
	switch k {
	case 0:
		p.Y.Min, p.Y.Max = 0, max(h.missMax*1.08, 1)
	case 1:
		p.Y.Min = math.Log10(h.floor)
		p.Y.Max = math.Ceil(math.Log10(max(h.fdMax, h.floor*10)) - 1e-9)
		p.Y.Tick.Marker = logTicks{format: percentLabel, floor: h.floor}
		if h.fdMax == 0 {
			// An empty log panel reads as a drawing fault; say what it
			// shows.
			p.Add(panelNote("no query lost an event at any delay"))
		}
	case 2:
		if h.logState {
			p.Y.Min = math.Floor(math.Log10(h.stMin))
			p.Y.Max = math.Ceil(math.Log10(h.stMax))
			p.Y.Tick.Marker = logTicks{format: humanNumber}
		} else {
			p.Y.Min, p.Y.Max = 0, max(h.stMax*1.08, 1)
		}
	}
	return p, nil
}

// glyphThumb draws a glyph in a legend entry.
func glyphThumb(g draw.GlyphStyle) plot.Thumbnailer {
	return &plotter.Scatter{GlyphStyle: g}
}

// panelNote writes a short note in the middle of a plot's data area.
type panelNote string

// Plot implements plot.Plotter.
func (n panelNote) Plot(c draw.Canvas, _ *plot.Plot) {
	st := sans(10, false)
	st.Color = color.Gray{Y: 0x50}
	st.XAlign, st.YAlign = draw.XCenter, draw.YCenter
	c.FillText(st, c.Center(), string(n))
}
