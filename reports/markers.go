package reports

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/metrics"
)

// markerKinds lists the marker kinds of metrics.Marker in legend order.
func markerKinds() []string {
	return []string{"stall", downtimeKind, "restart", "lose-checkpoint", "bad-clock"}
}

// isSpan reports whether a marker is drawn as a shaded span: a stall or
// a downtime with its end.
func isSpan(mk metrics.Marker) bool {
	return (mk.Kind == "stall" || mk.Kind == downtimeKind) && mk.Until != nil
}

// spanFill is the shading of a span marker of the kind.
func spanFill(kind string) color.Color {
	if kind == downtimeKind {
		return downtimeFill()
	}
	return stallFill()
}

// downtimeFill is the shading of a downtime: a light red, apart from a
// stall's orange.
func downtimeFill() color.Color { return color.NRGBA{R: 0xE0, G: 0x6C, B: 0x75, A: 0x40} }

// markerName is how a chart names a marker kind.
func markerName(kind string) string {
	switch kind {
	case "stall":
		return "stall"
	case downtimeKind:
		return "query down"
	case "restart":
		return "restart"
	case "lose-checkpoint":
		return "checkpoint lost"
	case "bad-clock":
		return "bad clock"
	}
	return kind
}

// stallFill is the shading of a stall: light enough that lines stay
// readable across it.
func stallFill() color.Color { return color.NRGBA{R: 0xF2, G: 0xB7, B: 0x6B, A: 0x55} }

// markerLine is the style of the vertical line of a moment marker.
func markerLine(kind string) draw.LineStyle {
	switch kind {
	case "restart":
		return draw.LineStyle{Color: color.Gray{Y: 0x40}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	case "lose-checkpoint":
		return draw.LineStyle{Color: color.RGBA{R: 0xC0, A: 0xFF}, Width: vg.Points(1.4), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	case "bad-clock":
		return draw.LineStyle{Color: color.RGBA{R: 0x7B, G: 0x1F, B: 0xA2, A: 0xFF}, Width: vg.Points(1.4), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2)}}
	}
	return draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
}

// markerThumb draws a marker kind in the legend.
type markerThumb struct{ kind string }

// Thumbnail implements plot.Thumbnailer.
func (m markerThumb) Thumbnail(c *draw.Canvas) {
	if m.kind == "stall" || m.kind == downtimeKind {
		c.FillPolygon(spanFill(m.kind), []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
		return
	}
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(markerLine(m.kind), x, c.Min.Y, x, c.Max.Y)
}

// maxBadClockMarkers is how many of the stream's bad-clock rows the
// runner marks at most (sim/runner's maxBadClockMarkers, which counts the
// bad-clock faults' rows among them): a run with more has the first ones
// marked only.
const maxBadClockMarkers = 20

// badClockRowLabel starts the label the runner gives the marker of a
// bad-clock row of the stream (as opposed to a bad-clock fault's).
const badClockRowLabel = "bad clock row"

// badClockCapped reports whether the runner may have stopped marking
// bad-clock rows: it marked as many as it marks at most (a fault's row
// counts towards the cap but is marked as the fault).
func badClockCapped(ms []metrics.Marker) bool {
	rows, faults := 0, 0
	for _, m := range ms {
		switch {
		case m.Kind != "bad-clock":
		case strings.HasPrefix(m.Label, badClockRowLabel):
			rows++
		default:
			faults++
		}
	}
	return rows > 0 && rows+faults >= maxBadClockMarkers
}

// badClockCapNote says that only the first bad-clock rows are marked, for
// chart notes and the markers list; "" when they all are.
func badClockCapNote(ms []metrics.Marker) string {
	if !badClockCapped(ms) {
		return ""
	}
	return fmt.Sprintf("Only the first %d bad-clock rows are marked; the run may have had more after them.", maxBadClockMarkers)
}

// markerLegend returns legend entries for the kinds present in ms.
// Kinds this package does not know yet still get an entry, after the
// known ones, so no line on a chart goes unexplained.
func markerLegend(ms []metrics.Marker) []legendItem {
	kinds := markerKinds()
	for _, m := range ms {
		if !slices.Contains(kinds, m.Kind) {
			kinds = append(kinds, m.Kind)
		}
	}
	var out []legendItem
	for _, k := range kinds {
		if slices.ContainsFunc(ms, func(m metrics.Marker) bool { return m.Kind == k }) {
			name := markerName(k)
			if k == "bad-clock" && badClockCapped(ms) {
				name = fmt.Sprintf("bad clock (first %d only)", maxBadClockMarkers)
			}
			out = append(out, legendItem{name: name, thumbs: []plot.Thumbnailer{markerThumb{k}}})
		}
	}
	return out
}

// markerLayer draws the markers of a run on a chart over processing time:
// stalls as shaded spans, other moments as vertical lines, and, when
// labels is set, a short label for each ("bad clock 01:20") in a band at
// the top of the data area that the chart keeps free of data.
type markerLayer struct {
	markers []metrics.Marker
	// toX converts seconds after the start to the x axis' unit.
	toX func(sec float64) float64
	// coarse labels moments to the minute, for runs long enough that
	// seconds are noise.
	coarse bool
	labels bool
	// drain, when set, is the span of the drain shown (seconds after the
	// start): shaded, and labelled with the other markers.
	drain *[2]float64
}

// drainLabel labels the drain on charts.
const drainLabel = "drain: no new events"

// drainFill is the shading of the drain: a light grey that reads as
// "outside the traffic".
func drainFill() color.Color { return color.NRGBA{R: 0x9A, G: 0xA0, B: 0xA6, A: 0x38} }

// clock renders a moment for a label.
func (m *markerLayer) clock(sec float64) string {
	if m.coarse {
		sec = 60 * math.Round(sec/60)
	}
	return formatOffset(sec)
}

// labelStyle is the style of marker labels.
func labelStyle() text.Style {
	s := sans(8.5, false)
	s.Color = color.Gray{Y: 0x30}
	s.YAlign = draw.YTop
	return s
}

// maxLabelRows bounds the rows of marker labels; a label that fits in
// none is left out (the legend still names the kind).
const maxLabelRows = 3

// placedLabel is a marker label laid out in the top band.
type placedLabel struct {
	text string
	x    vg.Length // left edge
	row  int
}

// labelGroup is one label: a stall, or a run of moments of one kind close
// enough on the chart to share a label ("bad clock ×4, 27:47–28:37").
type labelGroup struct {
	// label, when set, is the group's text (the drain's).
	label   string
	kind    string
	x       vg.Length // where the label attaches: the first line
	first   float64   // seconds after the start
	last    float64
	until   *float64 // a stall's end
	n       int
	lastX   vg.Length
	isStall bool
}

// groups merges moments of one kind that sit within a label's width of
// each other, so a burst of bad clocks gets one label, not a pile.
func (m *markerLayer) groups(c draw.Canvas, trX func(float64) vg.Length) []labelGroup {
	ms := slices.Clone(m.markers)
	slices.SortStableFunc(ms, func(a, b metrics.Marker) int { return cmp.Compare(a.At, b.At) })
	near := vg.Points(40)
	var out []labelGroup
	if m.drain != nil {
		if x := trX(m.toX(m.drain[0])); x >= c.Min.X && x < c.Max.X {
			until := m.drain[1]
			out = append(out, labelGroup{label: drainLabel, kind: "drain", x: x, first: m.drain[0], last: m.drain[0], until: &until, n: 1, isStall: true})
		}
	}
	open := map[string]int{} // kind -> index in out of its last group
	for _, mk := range ms {
		x := trX(m.toX(mk.At))
		if x < c.Min.X || x > c.Max.X {
			continue
		}
		if isSpan(mk) {
			out = append(out, labelGroup{kind: mk.Kind, x: x, first: mk.At, last: mk.At, until: mk.Until, n: 1, isStall: true})
			continue
		}
		if i, ok := open[mk.Kind]; ok && x-out[i].lastX <= near {
			out[i].n++
			out[i].last, out[i].lastX = mk.At, x
			continue
		}
		open[mk.Kind] = len(out)
		out = append(out, labelGroup{kind: mk.Kind, x: x, first: mk.At, last: mk.At, n: 1, lastX: x})
	}
	return out
}

// text is the label of g.
func (m *markerLayer) text(g labelGroup) string {
	switch {
	case g.label != "":
		return g.label
	case g.isStall:
		return markerName(g.kind) + " " + m.clock(g.first) + "–" + m.clock(*g.until)
	case g.n > 1:
		return fmt.Sprintf("%s ×%d, %s–%s", markerName(g.kind), g.n, m.clock(g.first), m.clock(g.last))
	}
	return markerName(g.kind) + " " + m.clock(g.first)
}

// layout places the labels in rows from the top of c, each just right of
// its line (or left of it near the right edge), moving a label down a row
// when it would overlap one already placed. It returns the labels and the
// number of rows used.
func (m *markerLayer) layout(c draw.Canvas, trX func(float64) vg.Length) ([]placedLabel, int) {
	if !m.labels {
		return nil, 0
	}
	st := labelStyle()
	gap := vg.Points(3)
	type span struct{ lo, hi vg.Length }
	rows := make([][]span, maxLabelRows)
	var out []placedLabel
	used := 0
	gs := m.groups(c, trX)
	var lineXs []vg.Length
	type spanX struct{ lo, hi vg.Length }
	var spans []spanX
	for _, mk := range m.markers {
		if !isSpan(mk) {
			lineXs = append(lineXs, trX(m.toX(mk.At)))
		} else {
			spans = append(spans, spanX{trX(m.toX(mk.At)), trX(m.toX(*mk.Until))})
		}
	}
	if m.drain != nil {
		spans = append(spans, spanX{trX(m.toX(m.drain[0])), trX(m.toX(m.drain[1]))})
	}
	// crosses reports whether a label over [lo, hi] would cross a line of
	// another group, or, for a moment's label, sit over a span (a stall,
	// the drain) it would seem to name.
	crosses := func(g labelGroup, lo, hi vg.Length) bool {
		for _, x := range lineXs {
			own := !g.isStall && x >= g.x-vg.Points(0.5) && x <= g.lastX+vg.Points(0.5)
			if !own && x > lo-vg.Points(1) && x < hi+vg.Points(1) {
				return true
			}
		}
		if g.isStall {
			return false
		}
		for _, sp := range spans {
			if lo < sp.hi && hi > sp.lo {
				return true
			}
		}
		return false
	}
	for _, g := range gs {
		txt := m.text(g)
		w := st.Width(txt)
		// Right of the group's last line, so the label crosses none of
		// its own lines, else left of its first line, preferring a side
		// where it crosses no other marker's line either.
		right := g.lastX + gap
		if g.isStall {
			right = g.x + gap
		}
		left := g.x - gap - w
		// Against the right edge, over the group's own lines: for a burst
		// near the end of the chart.
		edge := c.Max.X - w
		fitsR, fitsL := right+w <= c.Max.X, left >= c.Min.X
		fitsE := !g.isStall && edge >= c.Min.X && edge <= g.x
		var lo vg.Length
		switch {
		case fitsR && !crosses(g, right, right+w):
			lo = right
		case fitsL && !crosses(g, left, left+w):
			lo = left
		case fitsE && !crosses(g, edge, edge+w):
			lo = edge
		case fitsR:
			lo = right
		case fitsE:
			lo = edge
		case fitsL:
			lo = left
		default:
			continue
		}
		for r := range rows {
			free := true
			for _, s := range rows[r] {
				if lo < s.hi+gap && lo+w+gap > s.lo {
					free = false
					break
				}
			}
			if free {
				rows[r] = append(rows[r], span{lo, lo + w})
				out = append(out, placedLabel{txt, lo, r})
				used = max(used, r+1)
				break
			}
		}
	}
	return out, used
}

// rowHeight is the height of one row of marker labels.
func rowHeight() vg.Length { return labelStyle().Height("Mg") + vg.Points(3) }

// Plot implements plot.Plotter.
func (m *markerLayer) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	if m.drain != nil {
		x0 := max(trX(m.toX(m.drain[0])), c.Min.X)
		x1 := min(trX(m.toX(m.drain[1])), c.Max.X)
		if x1 > x0 {
			c.FillPolygon(drainFill(), []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
			// Light diagonal hatching, so the span reads as set apart in
			// print and in grey scale too.
			hatch := draw.LineStyle{Color: color.NRGBA{R: 0x80, G: 0x86, B: 0x8C, A: 0x50}, Width: vg.Points(0.5)}
			step := vg.Points(9)
			h := c.Max.Y - c.Min.Y
			for x := x0 - h; x < x1; x += step {
				a := vg.Point{X: x, Y: c.Min.Y}
				b := vg.Point{X: x + h, Y: c.Max.Y}
				// Clip the segment to [x0, x1].
				if a.X < x0 {
					a = vg.Point{X: x0, Y: c.Min.Y + (x0 - a.X)}
				}
				if b.X > x1 {
					b = vg.Point{X: x1, Y: c.Max.Y - (b.X - x1)}
				}
				if b.X > a.X {
					c.StrokeLine2(hatch, a.X, a.Y, b.X, b.Y)
				}
			}
		}
	}
	for _, mk := range m.markers {
		if !isSpan(mk) {
			continue
		}
		x0 := max(trX(m.toX(mk.At)), c.Min.X)
		x1 := min(trX(m.toX(*mk.Until)), c.Max.X)
		if x1-x0 < vg.Points(1) {
			x1 = x0 + vg.Points(1) // a short stall still shows
		}
		if x0 >= c.Max.X || x1 <= c.Min.X {
			continue
		}
		c.FillPolygon(spanFill(mk.Kind), []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
	for _, mk := range m.markers {
		if isSpan(mk) {
			continue
		}
		x := trX(m.toX(mk.At))
		if x < c.Min.X || x > c.Max.X {
			continue
		}
		c.StrokeLine2(markerLine(mk.Kind), x, c.Min.Y, x, c.Max.Y)
	}
	labels, _ := m.layout(c, trX)
	st := labelStyle()
	rh := rowHeight()
	for _, l := range labels {
		// A light backing keeps a label readable where it must cross
		// another marker's line or a grid line.
		y := c.Max.Y - vg.Points(2) - vg.Length(l.row)*rh
		w, h := st.Width(l.text), st.Height(l.text)
		pad := vg.Points(1.5)
		c.FillPolygon(color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xD0}, []vg.Point{
			{X: l.x - pad, Y: y - h - pad}, {X: l.x + w + pad, Y: y - h - pad},
			{X: l.x + w + pad, Y: y + pad}, {X: l.x - pad, Y: y + pad},
		})
		c.FillText(st, vg.Point{X: l.x, Y: y}, l.text)
	}
}

// reserveBand raises p's y maximum so that the top rows of the data area,
// where m's labels go, hold no data. dataMax is the largest y value
// drawn; area is the canvas the plot will be drawn in. It must run after
// both axes' ranges are otherwise final.
func (m *markerLayer) reserveBand(p *plot.Plot, area draw.Canvas, dataMax float64) {
	if !m.labels || len(m.markers) == 0 && m.drain == nil {
		return
	}
	p.Y.Max = dataMax
	dc := p.DataCanvas(area)
	trX, _ := p.Transforms(&dc)
	_, rows := m.layout(dc, trX)
	if rows == 0 {
		return
	}
	h := float64(dc.Max.Y - dc.Min.Y)
	band := float64(vg.Length(rows)*rowHeight() + vg.Points(4))
	if band >= h/2 {
		band = h / 2 // never give more than half the chart to labels
	}
	if _, log := p.Y.Scale.(plot.LogScale); log && p.Y.Min > 0 {
		p.Y.Max = p.Y.Min * math.Pow(dataMax/p.Y.Min, h/(h-band))
		return
	}
	p.Y.Max = p.Y.Min + (dataMax-p.Y.Min)*h/(h-band)
}
