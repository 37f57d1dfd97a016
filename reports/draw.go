package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// This file holds the drawing toolkit the charts share: fonts, colours,
// the title and legend frame, human tick labels, and rendering one drawing
// to both PNG and SVG.

// pngDPI is the resolution of the PNG charts: 8in x 5in becomes 960 x 600
// pixels, sharp enough for a design document without being heavy.
const pngDPI = 120

// sans returns a Liberation Sans text style of the given size. Sans rather
// than gonum's default serif: chart text is small and sans reads better.
func sans(size vg.Length, bold bool) text.Style {
	f := font.Font{Typeface: "Liberation", Variant: "Sans"}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{
		Color:   color.Black,
		Font:    font.From(f, size),
		Handler: plot.DefaultTextHandler,
	}
}

// seriesColors is the Okabe-Ito palette minus its yellow: distinguishable
// with the common colour-vision deficiencies, and legible on white. The
// store comparison draws its backends in it; queries take their
// flavour's colour (style.go).
func seriesColors() []color.Color {
	return []color.Color{
		color.RGBA{0x00, 0x72, 0xB2, 0xFF}, // blue
		color.RGBA{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
		color.RGBA{0x00, 0x9E, 0x73, 0xFF}, // bluish green
		color.RGBA{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
		color.RGBA{0xE6, 0x9F, 0x00, 0xFF}, // orange
		color.RGBA{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
		color.RGBA{0x00, 0x00, 0x00, 0xFF}, // black
	}
}

// newPlot returns a plot styled like every chart of the report: sans
// fonts, a light grid, no title (the frame draws it) and no legend (the
// frame draws it above the data, where it can never cover a line).
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	// Only the fonts change: the alignments plot.New chose stay.
	p.X.Label.TextStyle.Font = sans(10, false).Font
	p.Y.Label.TextStyle.Font = sans(10, false).Font
	p.X.Tick.Label.Font = sans(9, false).Font
	p.Y.Tick.Label.Font = sans(9, false).Font
	p.X.Tick.Marker = humanTicks{n: 8}
	p.Y.Tick.Marker = humanTicks{n: 6}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xE4}
	grid.Horizontal.Color = color.Gray{Y: 0xE4}
	grid.Vertical.Width = vg.Points(0.5)
	grid.Horizontal.Width = vg.Points(0.5)
	p.Add(grid)
	return p
}

// humanTicks places about n round major ticks (steps of 1, 2, 2.5 or 5
// times a power of ten), labelled compactly (1k, 10k, 2.5M), with a minor
// tick between each pair. gonum's default ticker often leaves only three
// labels on an axis, too few to read a value off the chart.
type humanTicks struct{ n int }

// Ticks implements plot.Ticker.
func (t humanTicks) Ticks(lo, hi float64) []plot.Tick {
	n := t.n
	if n <= 0 {
		n = 6
	}
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: humanNumber(lo)}}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if (hi-lo)/(m*mag) <= float64(n) {
			step = m * mag
			break
		}
	}
	minor := step / 2
	if step/mag == 2.5 {
		minor = step // halves of 2.5 would be labelled-looking 1.25s
	}
	var out []plot.Tick
	// Integer multiples, not a running sum, so no rounding error creeps
	// into the values (and the labels).
	for k := math.Ceil(lo/minor - 1e-9); k*minor <= hi+minor*1e-9; k++ {
		v := k * minor
		if math.Abs(v) < minor*1e-9 {
			v = 0
		}
		tk := plot.Tick{Value: v}
		if r := math.Mod(math.Abs(v), step); r < step*1e-6 || step-r < step*1e-6 {
			tk.Label = humanNumber(v)
		}
		out = append(out, tk)
	}
	return out
}

// timeTicks marks a time axis in steps a reader counts in: 15 or 30
// minutes, 6 or 12 hours, a week of days, rather than gonum's 10s and 25s.
type timeTicks struct{ unit string }

// Ticks implements plot.Ticker.
func (t timeTicks) Ticks(lo, hi float64) []plot.Tick {
	steps := map[string][]float64{
		"min": {1, 2, 5, 10, 15, 20, 30, 60, 120, 180},
		"h":   {1, 2, 3, 6, 12, 24, 48},
		"d":   {1, 2, 7, 14, 28},
	}[t.unit]
	const most = 8
	step := 0.0
	for _, s := range steps {
		if (hi-lo)/s <= most {
			step = s
			break
		}
	}
	if step == 0 || !(hi > lo) {
		return humanTicks{n: most}.Ticks(lo, hi)
	}
	minor := step / 2
	if step == 3 || step == 15 {
		minor = step / 3
	}
	var out []plot.Tick
	for k := math.Ceil(lo/minor - 1e-9); k*minor <= hi+minor*1e-9; k++ {
		v := k * minor
		tk := plot.Tick{Value: v}
		if r := math.Mod(math.Abs(v), step); r < step*1e-6 || step-r < step*1e-6 {
			tk.Label = humanNumber(v)
		}
		out = append(out, tk)
	}
	return out
}

// logTicks marks a logarithmic axis drawn as a linear axis of log10
// values (gonum's LogScale centres an axis label on the arithmetic mean of
// the range, far from the middle of a log axis, and pads panels
// unevenly). Ticks sit at the decades, with minor ticks at 2 to 9 times
// each decade (2 and 5 labelled when the axis spans few decades); format labels a tick from its real value. floor,
// when positive, is the real value drawn in place of zero, labelled "0".
type logTicks struct {
	format func(v float64) string
	floor  float64
}

// Ticks implements plot.Ticker; lo and hi are log10 values.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	e0, e1 := int(math.Floor(lo+1e-9)), int(math.Ceil(hi-1e-9))
	step := 1
	if e1-e0 > 6 {
		step = 2 // keep the labels apart on a short panel
	}
	isFloor := func(e float64) bool { return t.floor > 0 && math.Abs(e-math.Log10(t.floor)) < 1e-9 }
	var out []plot.Tick
	for e := e0; e <= e1; e++ {
		fe := float64(e)
		if fe >= lo-1e-9 && fe <= hi+1e-9 {
			tk := plot.Tick{Value: fe}
			switch {
			case isFloor(fe):
				tk.Label = "0"
			case (e-e0)%step == 0:
				tk.Label = t.format(math.Pow(10, fe))
			}
			out = append(out, tk)
		}
		if isFloor(fe) {
			continue
		}
		// Minor ticks at 2 to 9 times the decade, so that a value between
		// decades can be read; 2 and 5 labelled when the axis spans few
		// decades.
		for m := 2.0; m <= 9; m++ {
			v := fe + math.Log10(m)
			if v > lo && v < hi {
				tk := plot.Tick{Value: v}
				if e1-e0 <= 2 && (m == 2 || m == 5) {
					tk.Label = t.format(m * math.Pow(10, fe))
				}
				out = append(out, tk)
			}
		}
	}
	return out
}

// percentLabel labels a rate as a percentage, 1e-4 as "0.01%".
func percentLabel(v float64) string {
	p := v * 100
	if p >= 1 {
		return trimFloat(p) + "%"
	}
	// Decimal notation rather than 1e-05 for small rates.
	dec := int(-math.Floor(math.Log10(p) + 1e-9))
	return fmt.Sprintf("%.*f%%", dec, p)
}

// legendItem is one entry of a chart's legend.
type legendItem struct {
	name   string
	thumbs []plot.Thumbnailer
}

// frame lays out a chart: the title and an optional subtitle at the top,
// then the legend as rows of entries, left to right, then the area left
// for the plots, which it returns. Drawing the legend outside the data
// area means it can never hide a line, whatever the data does.
func frame(dc draw.Canvas, title, subtitle string, items []legendItem) draw.Canvas {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(8)
	y := dc.Max.Y - pad
	ts := sans(13, true)
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
	cx := (dc.Min.X + dc.Max.X) / 2
	dc.FillText(ts, vg.Point{X: cx, Y: y}, title)
	y -= ts.Height(title) + vg.Points(3)
	if subtitle != "" {
		ss := sans(9.5, false)
		ss.Color = color.Gray{Y: 0x50}
		ss.XAlign, ss.YAlign = draw.XCenter, draw.YTop
		dc.FillText(ss, vg.Point{X: cx, Y: y}, subtitle)
		y -= ss.Height(subtitle) + vg.Points(3)
	}
	if len(items) > 0 {
		y -= vg.Points(3)
		y = legendRows(dc, items, cx, y, dc.Max.X-dc.Min.X-2*pad)
	}
	area := dc
	area.Max.Y = y - vg.Points(2)
	area.Min.X += vg.Points(4)
	area.Max.X -= vg.Points(14) // room for the last x tick label
	area.Min.Y += vg.Points(4)
	return area
}

// legendRows draws items as rows of entries, left to right, each row
// centred on cx and no wider than avail, the first row's top at y; it
// returns the y under the last row.
func legendRows(dc draw.Canvas, items []legendItem, cx, y, avail vg.Length) vg.Length {
	ls := sans(9.5, false)
	ls.YAlign = draw.YCenter
	thumbH := vg.Points(10)
	rowH := legendRowHeight()
	for _, row := range layoutLegend(items, avail) {
		var rw vg.Length
		for i, p := range row {
			if i > 0 {
				rw += legendSpacing
			}
			rw += p.w
		}
		x := cx - rw/2
		mid := y - rowH/2
		for _, p := range row {
			thumb := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: mid - thumbH/2},
				Max: vg.Point{X: x + legendThumbW, Y: mid + thumbH/2},
			}}
			for _, t := range p.item.thumbs {
				t.Thumbnail(&thumb)
			}
			tx := x + legendThumbW + legendGap
			if len(p.item.thumbs) == 0 {
				tx = x
			}
			dc.FillText(ls, vg.Point{X: tx, Y: mid}, p.item.name)
			x += p.w + legendSpacing
		}
		y -= rowH
	}
	return y
}

// The legend's sizes: a thumbnail's width, the gap after it, and the
// space between entries.
const (
	legendThumbW  = vg.Length(24)
	legendGap     = vg.Length(4)
	legendSpacing = vg.Length(20)
)

// legendEntry is a legend item laid out, with its width.
type legendEntry struct {
	item legendItem
	w    vg.Length
}

// layoutLegend breaks items into rows no wider than avail.
func layoutLegend(items []legendItem, avail vg.Length) [][]legendEntry {
	ls := sans(9.5, false)
	var rows [][]legendEntry
	var cur []legendEntry
	var curW vg.Length
	for _, it := range items {
		w := ls.Width(it.name)
		if len(it.thumbs) > 0 {
			w += legendThumbW + legendGap
		}
		if len(cur) > 0 && curW+legendSpacing+w > avail {
			rows = append(rows, cur)
			cur, curW = nil, 0
		}
		if len(cur) > 0 {
			curW += legendSpacing
		}
		cur = append(cur, legendEntry{it, w})
		curW += w
	}
	return append(rows, cur)
}

// legendRowHeight is the height of one row of a legend.
func legendRowHeight() vg.Length {
	return max(sans(9.5, false).Height("Mg"), vg.Points(10)) + vg.Points(4)
}

// drawing is a chart before rendering: a size and a function that draws
// it on any canvas, so the same code makes the PNG and the SVG. The
// function builds the chart's plots afresh at each call (a layout changes
// them) and returns the error of any series it cannot draw.
type drawing struct {
	w, h vg.Length
	draw func(dc draw.Canvas) error
}

// renderPNG draws d into a PNG.
func renderPNG(d drawing) ([]byte, error) {
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(d.w, d.h), vgimg.UseDPI(pngDPI))}
	if err := d.draw(draw.New(c)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// renderSVG draws d into an SVG. gonum names the font family alone
// ("Liberation Sans"), which viewers without that font replace with their
// default, often a serif; the fallbacks added here are metric-compatible,
// so text keeps the size the layout measured.
func renderSVG(d drawing) ([]byte, error) {
	c := vgsvg.New(d.w, d.h)
	if err := d.draw(draw.New(c)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(buf.Bytes(),
		[]byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")), nil
}

// stack lays plots out top to bottom in area with equal data heights,
// aligned data columns and gap between one panel's axis and the next
// panel's top. plot.Align equalises the data areas too, but spreads the
// difference in the panels' margins into uneven gaps. A panel's margins
// depend a little on its height (gonum pads for tick labels and glyphs
// that would stick out), so the layout is refined a few times on the
// canvases of the previous pass.
func stack(plots []*plot.Plot, area draw.Canvas, gap vg.Length) []draw.Canvas {
	n := len(plots)
	out := make([]draw.Canvas, n)
	for i := range out {
		out[i] = area
	}
	lefts, rights := make([]vg.Length, n), make([]vg.Length, n)
	tops, bottoms := make([]vg.Length, n), make([]vg.Length, n)
	for range 4 {
		var maxL, maxR, margins vg.Length
		for i, p := range plots {
			c := out[i]
			dc := p.DataCanvas(c)
			lefts[i], rights[i] = dc.Min.X-c.Min.X, c.Max.X-dc.Max.X
			bottoms[i], tops[i] = dc.Min.Y-c.Min.Y, c.Max.Y-dc.Max.Y
			maxL, maxR = max(maxL, lefts[i]), max(maxR, rights[i])
			margins += tops[i] + bottoms[i]
		}
		dataH := (area.Max.Y - area.Min.Y - margins - gap*vg.Length(n-1)) / vg.Length(n)
		y := area.Max.Y
		for i := range plots {
			c := area
			c.Max.Y = y
			c.Min.Y = y - tops[i] - dataH - bottoms[i]
			c.Min.X = area.Min.X + maxL - lefts[i]
			c.Max.X = area.Max.X - (maxR - rights[i])
			out[i] = c
			y = c.Min.Y - gap
		}
	}
	return out
}

// byteTicks places about n round ticks on an axis of bytes, labelled in
// the binary unit of the axis' top (512 MiB, 1.5 GiB).
type byteTicks struct{ n int }

// Ticks implements plot.Ticker.
func (t byteTicks) Ticks(lo, hi float64) []plot.Tick {
	unit, name := 1.0, "B"
	for _, u := range []struct {
		v    float64
		name string
	}{{1 << 10, "KiB"}, {1 << 20, "MiB"}, {1 << 30, "GiB"}, {1 << 40, "TiB"}} {
		if hi >= u.v {
			unit, name = u.v, u.name
		}
	}
	ticks := humanTicks(t).Ticks(lo/unit, hi/unit)
	for i := range ticks {
		ticks[i].Value *= unit
		if ticks[i].Label != "" {
			ticks[i].Label = trimFloat(ticks[i].Value/unit) + " " + name
			if ticks[i].Value == 0 {
				ticks[i].Label = "0"
			}
		}
	}
	return ticks
}
