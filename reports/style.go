package reports

import (
	"image/color"
	"regexp"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/metrics"
)

// One look per API: every chart and report draws a query in the colour and
// dash of its dedup flavour (metrics.Flavour*), so that within-watermark
// reads the same on the state chart, the watermark chart and the horizon
// chart, in every report. Several queries of one flavour share its dash;
// the first has the flavour's colour and each other one a colour of its
// own (extraColors), so that two queries of one API never differ by
// line width or shade alone.

// flavourColor is the colour of a flavour, from the Okabe-Ito palette
// (distinguishable with the common colour-vision deficiencies).
func flavourColor(f string) color.RGBA {
	switch f {
	case metrics.FlavourWithin:
		return color.RGBA{0x00, 0x72, 0xB2, 0xFF} // blue
	case metrics.FlavourPairKeyed:
		return color.RGBA{0xD5, 0x5E, 0x00, 0xFF} // vermillion
	case metrics.FlavourUnbounded:
		return color.RGBA{0x00, 0x9E, 0x73, 0xFF} // bluish green
	}
	return color.RGBA{0xCC, 0x79, 0xA7, 0xFF} // reddish purple
}

// flavourDashes is the dash pattern of a flavour: solid, dashed, dotted,
// dash-dot.
func flavourDashes(f string) []vg.Length {
	switch f {
	case metrics.FlavourWithin:
		return nil
	case metrics.FlavourPairKeyed:
		return []vg.Length{vg.Points(7), vg.Points(3)}
	case metrics.FlavourUnbounded:
		return []vg.Length{vg.Points(2), vg.Points(2)}
	}
	return []vg.Length{vg.Points(7), vg.Points(2), vg.Points(2), vg.Points(2)}
}

// flavourGlyph is the point shape of a flavour on the horizon chart,
// filled; hollow marks a saturated point (see glyphOf).
func flavourGlyph(f string, hollow bool) draw.GlyphDrawer {
	switch f {
	case metrics.FlavourWithin:
		if hollow {
			return draw.RingGlyph{}
		}
		return draw.CircleGlyph{}
	case metrics.FlavourPairKeyed:
		if hollow {
			return draw.SquareGlyph{}
		}
		return draw.BoxGlyph{}
	case metrics.FlavourUnbounded:
		if hollow {
			return draw.TriangleGlyph{}
		}
		return draw.PyramidGlyph{}
	}
	if hollow {
		return draw.CrossGlyph{}
	}
	return draw.PlusGlyph{}
}

// apiWords names a flavour in the words of Spark's API, for legends.
func apiWords(f string) string {
	switch f {
	case metrics.FlavourWithin:
		return "dropDuplicatesWithinWatermark"
	case metrics.FlavourPairKeyed:
		return "dropDuplicates, event time a key"
	case metrics.FlavourUnbounded:
		return "dropDuplicates, unbounded"
	}
	return "other dedup"
}

// flavourOf returns the flavour of a query: the summary's, or, for results
// written before it was recorded, one read off the query text.
func flavourOf(q *metrics.QuerySummary) string {
	if q.Flavour != "" {
		return q.Flavour
	}
	text := q.Query
	dedups := regexp.MustCompile(`\b(dropDuplicates|drop_duplicates|distinct|dropDuplicatesWithinWatermark)\s*\(`).FindAllStringIndex(text, -1)
	wm := strings.Index(text, "withWatermark")
	switch {
	case len(dedups) != 1:
		return metrics.FlavourOther
	case strings.Contains(text, "dropDuplicatesWithinWatermark"):
		return metrics.FlavourWithin
	case wm < 0 || wm > dedups[0][0]:
		return metrics.FlavourUnbounded
	}
	cols, all, ok := keyColumns(text)
	if ok && (all || strings.Contains(strings.Join(cols, ","), "event_time")) {
		return metrics.FlavourPairKeyed
	}
	return metrics.FlavourOther
}

// extraColors are the colours of the second and later queries of a
// flavour, in order: the rest of the Okabe-Ito palette, which no flavour
// uses (orange, sky blue, black), and indigo, then shades of them.
func extraColors() []color.RGBA {
	return []color.RGBA{
		{0xE6, 0x9F, 0x00, 0xFF}, // orange
		{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
		{0x00, 0x00, 0x00, 0xFF}, // black
		{0x4B, 0x00, 0x82, 0xFF}, // indigo (Okabe-Ito's yellow fades on white)
	}
}

// styles assigns each run its line style: its flavour's dash, and its
// flavour's colour for the first run of the flavour (in the order given)
// and the next of extraColors for every other (runs of the same query at
// several delays keep their query's colour), so that queries sharing an
// API stay apart by colour. Lines are drawn in that
// order, earlier ones wider: queries often draw the very same line (two
// queries whose watermarks move together), and a line hidden under
// another still shows along its edges.
type styles map[*run]draw.LineStyle

// newStyles styles runs, in order.
func newStyles(runs []*run) styles {
	out := styles{}
	seen := map[string]bool{}
	byName := map[string]color.RGBA{}
	extra := 0
	for i, r := range runs {
		f := flavourOf(r.sum)
		c, ok := byName[r.sum.Name]
		switch {
		case ok:
		case !seen[f]:
			c = flavourColor(f)
		default:
			xs := extraColors()
			c = shade(xs[extra%len(xs)], extra/len(xs))
			extra++
		}
		seen[f], byName[r.sum.Name] = true, c
		w := 2.8 - 1.4*float64(i)/float64(max(len(runs)-1, 1))
		out[r] = draw.LineStyle{Color: c, Width: vg.Points(w), Dashes: flavourDashes(f)}
	}
	return out
}

// shade returns the k-th shade of c: c itself, then alternately lighter
// and darker.
func shade(c color.RGBA, k int) color.RGBA {
	if k == 0 {
		return c
	}
	mix := func(v, to uint8, t float64) uint8 { return uint8(float64(v) + (float64(to)-float64(v))*t) }
	t := min(0.25*float64((k+1)/2), 0.6)
	to := uint8(0xFF)
	if k%2 == 0 {
		to = 0
	}
	return color.RGBA{mix(c.R, to, t), mix(c.G, to, t), mix(c.B, to, t), 0xFF}
}

// legendName names a run in a legend: its API words and its label.
func legendName(r *run, label string) string {
	return apiWordsOf(r.sum) + " (" + label + ")"
}

// apiWordsOf names a query's API: for an engine other than Spark, its
// engine's name (the reports know no engine's rules); else its flavour's
// words, and for the other flavour what the query text shows of it.
func apiWordsOf(q *metrics.QuerySummary) string {
	if q.Engine != "" {
		return q.Engine + " dedup"
	}
	f := flavourOf(q)
	if f != metrics.FlavourOther {
		return apiWords(f)
	}
	n := len(regexp.MustCompile(`\b(dropDuplicates|drop_duplicates|distinct|dropDuplicatesWithinWatermark)\s*\(`).FindAllStringIndex(q.Query, -1))
	switch {
	case n > 1:
		return "several dedups"
	case n == 1 && strings.Contains(q.Query, "withWatermark"):
		return "dropDuplicates, event time not a key"
	}
	return apiWords(f)
}
