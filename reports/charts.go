package reports

import (
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/engines/interval"
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
	for _, ts := range []timelineSpec{stateRowsSpec(), stateBytesSpec()} {
		if d, title, note, ok := timelineChart(res, ts); ok {
			specs = append(specs, spec{ts.name, title, note, d})
		}
	}
	if d, title, note, ok := watermarkChart(res); ok {
		specs = append(specs, spec{"watermark", title, note, d})
	}
	if d, title, note, ok := horizonChart(res); ok {
		specs = append(specs, spec{"horizon-tradeoff", title, note, d})
	}
	if d, title, note, ok := enginesChart(res); ok {
		specs = append(specs, spec{"engines-compared", title, note, d})
	}
	for _, sc := range res.sparkCharts() {
		if d, title, note, ok := sparkChart(res, sc); ok {
			specs = append(specs, spec{sc.name, title, note, d})
		}
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
// is too flat to read next to it: such a query calls for a zoomed panel,
// which then shows every query under zoomWith of the largest, so that
// none that is small too is left out of it.
const (
	zoomShare = 0.05
	zoomWith  = 0.25
)

// timelineSpec is one chart of a value over processing time, one line per
// query: state rows or state bytes.
type timelineSpec struct {
	name, title, yLabel string
	value               func(b metrics.BatchRecord) float64
	// ticks labels the y axis.
	ticks plot.Ticker
	// leaveOut, when set, says which queries the chart leaves out, and
	// why, for the caption.
	leaveOut func(q *metrics.QuerySummary) bool
	why      string
}

func stateRowsSpec() timelineSpec {
	return timelineSpec{name: "state-rows", title: "State rows over processing time", yLabel: "state rows",
		value: func(b metrics.BatchRecord) float64 { return float64(b.StateRows) }, ticks: humanTicks{n: 6}}
}

func stateBytesSpec() timelineSpec {
	return timelineSpec{name: "state-bytes", title: "State bytes over processing time (modelled)", yLabel: "state bytes (model)",
		value: func(b metrics.BatchRecord) float64 { return float64(b.StateBytes) }, ticks: byteTicks{n: 6},
		leaveOut: func(q *metrics.QuerySummary) bool { return !bytesModelled(q) }, why: "the models of their engines give no state bytes"}
}

// timeAxis is the processing-time axis of the charts over time: from the
// start to the traffic window plus a short tail of the drain.
type timeAxis struct {
	end  float64 // seconds after the start
	unit timeUnit
	// drain is the drain's span on the chart, nil without one.
	drain *[2]float64
	// note says what the axis leaves out, for the caption.
	note string
}

// newTimeAxis lays out the time axis of a chart of runs.
func (res *results) newTimeAxis(runs []*run) timeAxis {
	a := timeAxis{end: res.axisEnd(runs)}
	a.unit = chooseUnit(a.end)
	te, runEnd := res.durationSeconds(), res.runEnd(runs)
	if !res.drained(runs) || te <= 0 || a.end <= te {
		return a
	}
	a.drain = &[2]float64{te, a.end}
	if runEnd > a.end+1e-6 {
		a.note = fmt.Sprintf("Shaded: the drain, after the traffic ended at %s: no new events, only the last copies of retried events, which a real stream never stops for. "+
			"The axis stops %s into it; the drain runs on to %s (the last copy). Its rows count in the totals only: no finding reads it.",
			formatOffset(te), formatSpan(a.end-te), formatOffset(runEnd))
	} else {
		a.note = fmt.Sprintf("Shaded: the drain, after the traffic ended at %s: no new events, only the last copies of retried events. Its rows count in the totals only: no finding reads it.",
			formatOffset(te))
	}
	return a
}

// points returns a run's values up to the end of the axis, x in the
// axis' unit.
func (res *results) points(r *run, a timeAxis, value func(b metrics.BatchRecord) float64) plotter.XYs {
	var xys plotter.XYs
	for _, b := range r.batches {
		sec := res.offsetSeconds(b.ProcessingTime)
		if sec > a.end+1e-6 {
			break
		}
		xys = append(xys, plotter.XY{X: sec / a.unit.sec, Y: value(b)})
	}
	return res.holdOverDowntime(xys, a.unit.sec)
}

// timelineChart draws spec's value over processing time, one line per
// query, with the run's stalls, faults and drain marked. When some queries
// hold far less state than others (bounded next to unbounded), a second
// panel shows all of those, zoomed, under a legend of its own: on one axis
// they would lie flat on zero.
func timelineChart(res *results, spec timelineSpec) (d drawing, title, note string, ok bool) {
	all, sweepNote := res.timelineRuns()
	runs := slices.DeleteFunc(slices.Clone(all), func(r *run) bool { return len(r.batches) == 0 })
	var leftOut []string
	if spec.leaveOut != nil {
		runs = slices.DeleteFunc(runs, func(r *run) bool {
			if spec.leaveOut(r.sum) {
				leftOut = append(leftOut, r.sum.Name)
				return true
			}
			return false
		})
	}
	if len(runs) == 0 {
		return d, "", "", false
	}
	ax := res.newTimeAxis(runs)
	title = spec.title
	st := newStyles(all)
	var items []legendItem
	for _, r := range runs {
		items = append(items, legendItem{name: legendName(r, r.label(res.isSweep() && r.sum.Delay != nil)), thumbs: []plot.Thumbnailer{lineThumb(st[r])}})
	}
	items = append(items, markerLegend(res.sum.Markers)...)
	lines := make([]plotter.XYs, len(runs))
	peaks := make([]float64, len(runs))
	dataMax := 1.0
	for i, r := range runs {
		lines[i] = res.points(r, ax, spec.value)
		for _, p := range lines[i] {
			peaks[i] = max(peaks[i], p.Y)
		}
		dataMax = max(dataMax, peaks[i])
	}
	var small []int // indexes into runs of the queries to zoom on
	smallMax := 1.0
	flat := false
	for i := range runs {
		flat = flat || peaks[i] < zoomShare*dataMax
		if peaks[i] < zoomWith*dataMax {
			small = append(small, i)
			smallMax = max(smallMax, peaks[i])
		}
	}
	zoom := flat && len(small) < len(runs)
	h := 5 * vg.Inch
	subtitle := res.subtitle(sweepNote)
	if zoom {
		h = 7 * vg.Inch
		note = fmt.Sprintf("The lower panel zooms on the queries whose peak stays under %s of the largest, with a legend of its own.", interval.Percent(zoomWith))
		subtitle = res.subtitle(joinNotes(sweepNote, "lower panel: the small-state queries, zoomed"))
	}
	note = joinSentences(ax.note, note)
	if len(leftOut) > 0 {
		note = joinSentences(note, "Not drawn: "+joinNames(leftOut)+" ("+spec.why+").")
	}
	if sweepNote != "" {
		note = joinSentences(capitalize(sweepNote)+".", note)
	}
	toX := func(s float64) float64 { return s / ax.unit.sec }
	panel := func(idx []int, yLabel string, labels bool, top float64) (*plot.Plot, *markerLayer, error) {
		p := newPlot("processing time since start ("+ax.unit.name+")", yLabel)
		p.X.Tick.Marker = timeTicks{ax.unit.name}
		p.Y.Tick.Marker = spec.ticks
		ml := &markerLayer{markers: res.sum.Markers, toX: toX, coarse: ax.unit.name != "min", labels: labels, drain: ax.drain}
		p.Add(ml)
		for _, i := range idx {
			ls, err := lines1(lines[i], st[runs[i]])
			if err != nil {
				return nil, nil, fmt.Errorf("query %s: %w", runs[i].sum.Name, err)
			}
			p.Add(ls...)
		}
		p.X.Min, p.X.Max = 0, toX(ax.end)
		// A little headroom so the highest line does not run along the
		// top edge.
		p.Y.Min, p.Y.Max = 0, top*1.03
		return p, ml, nil
	}
	every := make([]int, len(runs))
	for i := range every {
		every[i] = i
	}
	// The lower panel's legend: the queries it shows, by label (their
	// API words are in the legend above).
	zoomItems := []legendItem{{name: "zoomed:"}}
	for _, i := range small {
		r := runs[i]
		zoomItems = append(zoomItems, legendItem{name: r.label(res.isSweep() && r.sum.Delay != nil), thumbs: []plot.Thumbnailer{lineThumb(st[r])}})
	}
	d = drawing{w: 8 * vg.Inch, h: h, draw: func(dc draw.Canvas) error {
		area := frame(dc, title, subtitle, items)
		top, ml, err := panel(every, spec.yLabel, true, dataMax)
		if err != nil {
			return err
		}
		if !zoom {
			ml.reserveBand(top, area, dataMax*1.03)
			top.Draw(area)
			return nil
		}
		top.X.Label.Text = ""
		bottom, _, err := panel(small, spec.yLabel+" (zoomed)", false, smallMax)
		if err != nil {
			return err
		}
		// The gap between the panels holds the lower panel's legend.
		zoomRows := len(layoutLegend(zoomItems, area.Max.X-area.Min.X-vg.Points(60)))
		gap := vg.Length(zoomRows)*legendRowHeight() + vg.Points(16)
		ml.reserveBand(top, stack([]*plot.Plot{top, bottom}, area, gap)[0], dataMax*1.03)
		cs := stack([]*plot.Plot{top, bottom}, area, gap)
		top.Draw(cs[0])
		bottom.Draw(cs[1])
		lc := (cs[1].Min.X + cs[1].Max.X) / 2
		legendRows(dc, zoomItems, lc, cs[1].Max.Y+vg.Length(zoomRows)*legendRowHeight()+vg.Points(4), area.Max.X-area.Min.X-vg.Points(60))
		return nil
	}}
	return d, title, note, true
}

// lines1 makes a gonum line of one series.
func lines1(xys plotter.XYs, st draw.LineStyle) ([]plot.Plotter, error) {
	return lines([]plotter.XYs{xys}, st)
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

// spanUnit picks the unit a span of seconds reads best in on an axis:
// minutes up to two hours, hours up to two days, then days, so an axis
// never reads "-8k" minutes.
func spanUnit(sec float64) timeUnit {
	switch a := math.Abs(sec); {
	case a <= 2*3600:
		return timeUnit{"min", 60}
	case a <= 2*86400:
		return timeUnit{"h", 3600}
	}
	return timeUnit{"d", 86400}
}

// watermarkChart draws, per query with a watermark, the watermark (in
// event time since the start) above its lag behind processing time, each
// in the unit its range reads best in.
func watermarkChart(res *results) (d drawing, title, note string, ok bool) {
	all, sweepNote := res.timelineRuns()
	runs := slices.DeleteFunc(slices.Clone(all), func(r *run) bool {
		return !slices.ContainsFunc(r.batches, hasWatermark)
	})
	if len(runs) == 0 {
		return d, "", "", false
	}
	ax := res.newTimeAxis(runs)
	title = "Watermark and watermark lag over processing time"
	st := newStyles(all)
	ref := draw.LineStyle{Color: color.Gray{Y: 0x90}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}
	var items []legendItem
	for _, r := range runs {
		items = append(items, legendItem{name: legendName(r, r.label(res.isSweep())), thumbs: []plot.Thumbnailer{lineThumb(st[r])}})
	}
	items = append(items, legendItem{name: "processing time (lag 0)", thumbs: []plot.Thumbnailer{lineThumb(ref)}})
	items = append(items, markerLegend(res.sum.Markers)...)

	// Watermark and lag in seconds first, to choose their units.
	type pt struct{ x, wm, lag float64 }
	segs := make([][][]pt, len(runs))
	wmMin, wmMax, lagMin, lagMax := 0.0, ax.end, 0.0, 0.0
	for i, r := range runs {
		var cur []pt
		for _, b := range r.batches {
			sec := res.offsetSeconds(b.ProcessingTime)
			if sec > ax.end+1e-6 {
				break
			}
			if !hasWatermark(b) {
				// Unset watermark: end the segment, so no line joins
				// across it.
				if len(cur) > 0 {
					segs[i], cur = append(segs[i], cur), nil
				}
				continue
			}
			p := pt{x: sec, wm: res.offsetSeconds(b.Watermark), lag: float64(b.ProcessingTime-b.Watermark) / 1000}
			cur = append(cur, p)
			wmMin, wmMax = min(wmMin, p.wm), max(wmMax, p.wm)
			lagMin, lagMax = min(lagMin, p.lag), max(lagMax, p.lag)
		}
		if len(cur) > 0 {
			segs[i] = append(segs[i], cur)
		}
	}
	wmUnit := spanUnit(max(math.Abs(wmMin), math.Abs(wmMax)))
	lagUnit := spanUnit(max(math.Abs(lagMin), math.Abs(lagMax)))
	lagMin, lagMax = lagMin/lagUnit.sec, lagMax/lagUnit.sec
	if lagMax == lagMin {
		lagMax = lagMin + 1
	}
	segsWM := make([][]plotter.XYs, len(runs))
	segsLag := make([][]plotter.XYs, len(runs))
	for i := range runs {
		for _, seg := range segs[i] {
			var wm, lag plotter.XYs
			for _, p := range seg {
				wm = append(wm, plotter.XY{X: p.x / ax.unit.sec, Y: p.wm / wmUnit.sec})
				lag = append(lag, plotter.XY{X: p.x / ax.unit.sec, Y: p.lag / lagUnit.sec})
			}
			segsWM[i], segsLag[i] = append(segsWM[i], wm), append(segsLag[i], lag)
		}
	}
	d = drawing{w: 8 * vg.Inch, h: 6 * vg.Inch, draw: func(dc draw.Canvas) error {
		area := frame(dc, title, res.subtitle(sweepNote), items)
		toX := func(s float64) float64 { return s / ax.unit.sec }
		top := newPlot("", "watermark ("+wmUnit.name+" since start)")
		top.X.Tick.Marker = timeTicks{ax.unit.name}
		top.Y.Tick.Marker = timeTicks{wmUnit.name}
		ml := &markerLayer{markers: res.sum.Markers, toX: toX, coarse: ax.unit.name != "min", labels: true, drain: ax.drain}
		top.Add(ml)
		diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: toX(ax.end), Y: ax.end / wmUnit.sec}})
		if err != nil {
			return err
		}
		diag.LineStyle = ref
		top.Add(diag)
		bottom := newPlot("processing time since start ("+ax.unit.name+")", "watermark lag ("+lagUnit.name+")")
		bottom.X.Tick.Marker = timeTicks{ax.unit.name}
		bottom.Y.Tick.Marker = timeTicks{lagUnit.name}
		bottom.Add(&markerLayer{markers: res.sum.Markers, toX: toX, drain: ax.drain})
		zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: toX(ax.end), Y: 0}})
		if err != nil {
			return err
		}
		zero.LineStyle = ref
		bottom.Add(zero)
		for i, r := range runs {
			ls, err := lines(segsWM[i], st[r])
			if err != nil {
				return fmt.Errorf("query %s: %w", r.sum.Name, err)
			}
			top.Add(ls...)
			if ls, err = lines(segsLag[i], st[r]); err != nil {
				return fmt.Errorf("query %s: %w", r.sum.Name, err)
			}
			bottom.Add(ls...)
		}
		for _, p := range []*plot.Plot{top, bottom} {
			p.X.Min, p.X.Max = 0, toX(ax.end)
		}
		top.Y.Min = wmMin / wmUnit.sec
		bottom.Y.Min, bottom.Y.Max = lagMin, lagMax+(lagMax-lagMin)*0.05
		// Reserve the label band on a first layout, then lay out again:
		// the band changes the top panel's y ticks, hence its margin.
		ml.reserveBand(top, stack([]*plot.Plot{top, bottom}, area, vg.Points(12))[0], wmMax/wmUnit.sec)
		cs := stack([]*plot.Plot{top, bottom}, area, vg.Points(12))
		top.Draw(cs[0])
		bottom.Draw(cs[1])
		return nil
	}}
	note = ax.note
	if sweepNote != "" {
		note = joinSentences(capitalize(sweepNote)+".", note)
	}
	return d, title, note, true
}

// hasWatermark reports whether b ran with a watermark that is set (see
// metrics.BatchRecord.WatermarkSet).
func hasWatermark(b metrics.BatchRecord) bool { return b.WatermarkSet() }

// horizonChart draws, when some query was run with several delays, the
// delay against the missed-duplicate rate and the false-drop rate (log
// scales fitted to the data, zeros on a baseline of their own) and peak
// state rows, one series per query, a hollow marker for a saturated run.
func horizonChart(res *results) (d drawing, title, note string, ok bool) {
	h, ok := newHorizon(res)
	if !ok {
		return d, "", "", false
	}
	subtitle := res.subtitle("")
	var notes []string
	if h.miss.zeros || h.fd.zeros {
		notes = append(notes, "Missed duplicates and false drops are on log scales fitted to the data; a rate of 0 sits on the baseline labelled 0, below the break.")
		subtitle = res.subtitle("rates on log scales; 0 on the baseline below the break")
	}
	if s := h.coincideNote(); s != "" {
		notes = append(notes, s)
	}
	if s := res.saturationNote(h); s != "" {
		notes = append(notes, s)
	}
	if s := h.curveNote(); s != "" {
		notes = append(notes, s)
	}
	note = joinSentences(notes...)
	title = "Horizon tradeoff: what each watermark delay costs"
	if otherEngines(h.res.sum) {
		title = "Horizon tradeoff: what each horizon costs"
	}
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

// coincideNote names the queries whose false-drop lines lie on one
// another (the same events lost at every delay: one watermark, one late
// filter), which the chart alone cannot show; "" when none do.
func (h *horizon) coincideNote() string {
	var same []string
	var ref *horizonSeries
	for i := range h.ss {
		s := &h.ss[i]
		if len(s.pts) < 2 {
			continue
		}
		if ref == nil {
			ref = s
			continue
		}
		eq := len(s.pts) == len(ref.pts)
		for k := 0; eq && k < len(s.pts); k++ {
			eq = *s.pts[k].sum.Delay == *ref.pts[k].sum.Delay && s.pts[k].sum.FalseDrops == ref.pts[k].sum.FalseDrops
		}
		if eq {
			same = append(same, s.name)
		}
	}
	if len(same) == 0 || ref.pts[0].sum.FalseDrops == 0 && ref.pts[len(ref.pts)-1].sum.FalseDrops == 0 {
		return ""
	}
	return fmt.Sprintf("%s lose the same events at every delay (one watermark, one late filter): their false-drop lines lie on one another.",
		joinNames(append([]string{ref.name}, same...)))
}

// saturationNote names the saturated points of the horizon chart and the
// run length that would resolve them; "" when there are none.
func (res *results) saturationNote(h *horizon) string {
	var parts []string
	longest := 0.0
	for _, s := range h.ss {
		var ds []string
		for _, r := range s.pts {
			if res.saturated(r.sum) {
				ds = append(ds, formatDelay(r.sum.Delay))
				if hz, ok := res.horizonOf(r.sum); ok {
					longest = max(longest, hz)
				}
			}
		}
		if len(ds) > 0 {
			parts = append(parts, s.name+" at "+joinNames(ds))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Hollow markers: saturated runs (%s), whose key horizon reaches the %s traffic window: they hold every key of the run, "+
		"so they show neither the state of a longer run nor the copies that come back after the horizon. A run of %s (three horizons) would resolve them.",
		strings.Join(parts, "; "), formatSpan(res.durationSeconds()), formatSpan(resolvingDuration(longest)))
}

// horizon is the data of the horizon chart: a series per query, the
// delays of the sweep, and the scales of its three panels.
type horizon struct {
	res    *results
	ss     []horizonSeries
	delays []float64 // minutes, sorted
	// xMin and xMax are the smallest and largest delay; logX puts the
	// delays on a log axis.
	xMin, xMax   float64
	logX         bool
	miss, fd     logScale
	stMin, stMax float64
	logState     bool
	anySaturated bool
	// curves is set when some series has an exact curve.
	curves bool
}

// horizonSeries is one query's points.
type horizonSeries struct {
	name    string
	flavour string
	style   draw.LineStyle
	pts     []*run // sorted by delay, delays set
	flat    *run   // a query without a watermark: a constant reference
	// curve is the query's exact curve (curves.json) over the swept
	// delays' range, nil without one: the line is drawn through it.
	curve []metrics.CurvePoint
}

// logScale is a log10 axis fitted to the positive values it shows, from
// the decade below the smallest to the decade above the largest; zeros,
// which a log axis cannot show, sit on a baseline of their own under a
// break.
type logScale struct {
	lo, hi float64 // log10 of the axis' first and last decade
	zeros  bool
	empty  bool // no positive value at all
}

// newLogScale fits a scale to vs, capped at top (log10).
func newLogScale(vs []float64, top float64) logScale {
	s := logScale{lo: math.Inf(1), hi: math.Inf(-1)}
	for _, v := range vs {
		switch {
		case v > 0:
			s.lo = min(s.lo, math.Floor(math.Log10(v)+1e-9))
			s.hi = max(s.hi, math.Ceil(math.Log10(v)-1e-9))
		default:
			s.zeros = true
		}
	}
	if math.IsInf(s.lo, 1) {
		s.empty, s.lo, s.hi = true, top-2, top
	}
	s.hi = min(s.hi, top)
	if s.hi <= s.lo {
		s.hi = s.lo + 1
	}
	return s
}

// base is where zeros sit, and brk the break between them and the decades.
func (s logScale) base() float64 { return s.lo - 0.6 }
func (s logScale) brk() float64  { return s.lo - 0.3 }

// y places v on the axis.
func (s logScale) y(v float64) float64 {
	if v <= 0 {
		return s.base()
	}
	return math.Log10(v)
}

// min returns the bottom of the axis.
func (s logScale) min() float64 {
	if s.zeros {
		return s.base() - 0.2
	}
	return s.lo
}

// max returns the top of the axis: its last decade, or, with nothing but
// zeros to show, a little room above their baseline for a note.
func (s logScale) max() float64 {
	if s.empty {
		return s.base() + 0.8
	}
	return s.hi
}

// ticks returns the axis' ticks: the decades (labelled by format), with 2
// and 5 between them on a short axis, and the zero baseline labelled 0.
func (s logScale) ticks(format func(v float64) string) plot.Ticker {
	return rateTicks{s: s, format: format}
}

// rateTicks is the ticker of a logScale.
type rateTicks struct {
	s      logScale
	format func(v float64) string
}

// Ticks implements plot.Ticker.
func (t rateTicks) Ticks(_, _ float64) []plot.Tick {
	var out []plot.Tick
	if !t.s.empty {
		out = logTicks{format: t.format}.Ticks(t.s.lo, t.s.hi)
	}
	if t.s.zeros {
		out = append([]plot.Tick{{Value: t.s.base(), Label: "0"}}, out...)
	}
	return out
}

// newHorizon gathers the chart's data; ok is false when no query was run
// with several delays.
func newHorizon(res *results) (h *horizon, ok bool) {
	h = &horizon{res: res, stMin: math.Inf(1)}
	swept := false
	var reps []*run
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
		switch {
		case len(pts) > 0:
			h.ss = append(h.ss, horizonSeries{name: name, flavour: flavourOf(pts[0].sum), pts: pts, curve: res.curveOf(name)})
			reps = append(reps, pts[0])
		case flat != nil:
			h.ss = append(h.ss, horizonSeries{name: name, flavour: flavourOf(flat.sum), flat: flat})
			reps = append(reps, flat)
		}
	}
	if !swept {
		return nil, false
	}
	st := newStyles(reps)
	for i := range h.ss {
		h.ss[i].style = st[reps[i]]
	}
	slices.Sort(h.delays)
	h.xMin, h.xMax = h.delays[0], h.delays[len(h.delays)-1]
	h.logX = h.xMin > 0 && h.xMax/h.xMin >= 20
	var miss, fd []float64
	for i := range h.ss {
		s := &h.ss[i]
		s.curve = slices.DeleteFunc(s.curve, func(p metrics.CurvePoint) bool {
			m := p.DelaySeconds / 60
			return m < h.xMin || m > h.xMax
		})
		for _, p := range s.curve {
			miss, fd = append(miss, 100*p.MissedRate), append(fd, 100*p.FalseDropRate)
			if p.PeakStateRows != nil {
				v := float64(*p.PeakStateRows)
				h.stMin, h.stMax = min(h.stMin, v), max(h.stMax, v)
			}
		}
		h.curves = h.curves || len(s.curve) > 0
	}
	for _, s := range h.ss {
		for _, r := range append(slices.Clone(s.pts), s.flat) {
			if r == nil {
				continue
			}
			miss = append(miss, 100*rate(r.sum.MissedDuplicates, r.sum.TrueDuplicates))
			fd = append(fd, 100*rate(r.sum.FalseDrops, r.sum.LogicalEvents))
			h.stMin, h.stMax = min(h.stMin, float64(r.sum.PeakStateRows)), max(h.stMax, float64(r.sum.PeakStateRows))
			h.anySaturated = h.anySaturated || res.saturated(r.sum)
		}
	}
	h.miss, h.fd = newLogScale(miss, 2), newLogScale(fd, 2)
	h.logState = h.stMin > 0 && h.stMax/h.stMin >= 50
	return h, true
}

// glyph is the point style of a run of series s: hollow when saturated.
func (h *horizon) glyph(s horizonSeries, r *run) draw.GlyphStyle {
	return draw.GlyphStyle{Color: s.style.Color, Radius: vg.Points(3.5), Shape: flavourGlyph(s.flavour, h.res.saturated(r.sum))}
}

// legend names each query's series in API words, and the hollow marker.
func (h *horizon) legend() []legendItem {
	var items []legendItem
	for _, s := range h.ss {
		thumbs := []plot.Thumbnailer{lineThumb(s.style)}
		if s.flat == nil {
			thumbs = append(thumbs, glyphThumb(draw.GlyphStyle{Color: s.style.Color, Radius: vg.Points(3.5), Shape: flavourGlyph(s.flavour, false)}))
		}
		r := s.flat
		if r == nil {
			r = s.pts[0]
		}
		items = append(items, legendItem{name: apiWordsOf(r.sum) + " (" + s.name + ")", thumbs: thumbs})
	}
	if h.anySaturated {
		items = append(items, legendItem{name: "hollow: saturated (key horizon reaches the run's length)",
			thumbs: []plot.Thumbnailer{glyphThumb(draw.GlyphStyle{Color: color.Gray{Y: 0x40}, Radius: vg.Points(3.5), Shape: draw.RingGlyph{}})}})
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
	// curve is a curve point's y value, and false where the panel has
	// none (the state the pass did not track).
	curve func(p metrics.CurvePoint) (float64, bool)
}

// panels returns the three panels, top to bottom.
func (h *horizon) panels() []horizonPanel {
	yState := func(v float64) float64 { return v }
	stateLabel := "peak state rows"
	if h.logState {
		yState, stateLabel = math.Log10, "peak state rows (log)"
	}
	return []horizonPanel{
		{"missed duplicates (%, log)", func(r *run) float64 { return h.miss.y(100 * rate(r.sum.MissedDuplicates, r.sum.TrueDuplicates)) },
			func(p metrics.CurvePoint) (float64, bool) { return h.miss.y(100 * p.MissedRate), true }},
		{"false drops (%, log)", func(r *run) float64 { return h.fd.y(100 * rate(r.sum.FalseDrops, r.sum.LogicalEvents)) },
			func(p metrics.CurvePoint) (float64, bool) { return h.fd.y(100 * p.FalseDropRate), true }},
		{stateLabel, func(r *run) float64 { return yState(max(float64(r.sum.PeakStateRows), 1)) },
			func(p metrics.CurvePoint) (float64, bool) {
				if p.PeakStateRows == nil {
					return 0, false
				}
				return yState(max(float64(*p.PeakStateRows), 1)), true
			}},
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
		if otherEngines(h.res.sum) {
			// A sweep sets each engine's own horizon to the swept value.
			xl = "horizon: watermark delay, TTL, window or duration (min)"
		}
		if h.logX {
			xl = strings.TrimSuffix(xl, ")") + ", log scale)"
		}
	}
	p := newPlot(xl, pn.yLabel)
	var sc logScale
	if k < 2 {
		sc = []logScale{h.miss, h.fd}[k]
		if sc.empty {
			p.Y.Label.Text = strings.TrimSuffix(pn.yLabel, ", log)") + ")"
		}
		if sc.zeros && !sc.empty {
			brk, err := plotter.NewLine(plotter.XYs{{X: h.xOf(h.xMin), Y: sc.brk()}, {X: h.xOf(h.xMax), Y: sc.brk()}})
			if err != nil {
				return nil, err
			}
			brk.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0xA0}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}}
			p.Add(brk)
		}
	}
	for _, s := range h.ss {
		var xys plotter.XYs
		if s.flat != nil {
			v := pn.value(s.flat)
			xys = plotter.XYs{{X: h.xOf(h.xMin), Y: v}, {X: h.xOf(h.xMax), Y: v}}
		}
		var dots plotter.XYs
		for _, r := range s.pts {
			dots = append(dots, plotter.XY{X: h.xOf(*r.sum.Delay / 60), Y: pn.value(r)})
		}
		if s.curve == nil {
			xys = append(xys, dots...)
		}
		for _, cp := range s.curve {
			if y, ok := pn.curve(cp); ok && (!h.logX || cp.DelaySeconds > 0) {
				xys = append(xys, plotter.XY{X: h.xOf(cp.DelaySeconds / 60), Y: y})
			}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", s.name, err)
		}
		l.LineStyle = s.style
		l.LineStyle.Width = max(l.LineStyle.Width-vg.Points(0.6), vg.Points(1))
		p.Add(l)
		for i, r := range s.pts {
			pt, err := plotter.NewScatter(plotter.XYs{dots[i]})
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", s.name, err)
			}
			pt.GlyphStyle = h.glyph(s, r)
			p.Add(pt)
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
	case 0, 1:
		p.Y.Min, p.Y.Max = sc.min(), sc.max()
		p.Y.Tick.Marker = sc.ticks(pctLabel)
		if sc.empty {
			// An empty log panel reads as a drawing fault; say what it
			// shows.
			p.Add(panelNote([]string{"no query missed a duplicate at any delay", "no query lost an event at any delay"}[k]))
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

// pctLabel labels a percentage: "10%", "0.01%".
func pctLabel(p float64) string { return percentLabel(p / 100) }

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

// curveOf returns query name's exact curve from curves.json; nil without.
func (res *results) curveOf(name string) []metrics.CurvePoint {
	if res.curves == nil {
		return nil
	}
	for _, q := range res.curves.Queries {
		if q.Query == name {
			return slices.Clone(q.Points)
		}
	}
	return nil
}

// curveNote says which lines are exact curves and which queries have
// none; "" without curves.
func (h *horizon) curveNote() string {
	if !h.curves {
		return ""
	}
	var with []string
	for _, s := range h.ss {
		if len(s.curve) > 0 {
			with = append(with, s.name)
		}
	}
	out := fmt.Sprintf("The lines of %s are their exact one-pass curves (simulate sweep --curve, curves.json): the rates at every delay of plan's resolution, the peak state at the delays the pass tracked; the markers are the swept runs, which lie on them.", joinNames(with))
	var none []string
	for _, u := range h.res.curves.Unsupported {
		none = append(none, fmt.Sprintf("%s (%s)", u.Query, strings.TrimPrefix(u.Reason, "the query's verdicts do not reduce to thresholds on the delay: ")))
	}
	if len(none) > 0 {
		out += " No curve for " + strings.Join(none, "; ") + ": their lines join the swept runs."
	}
	return out
}

// readCurves reads curves.json from a results folder; nil without one.
func readCurves(dir string) (*metrics.Curves, error) {
	c, err := metrics.ReadCurves(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return c, err
}
