package reports

import (
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// TestQueriesSharingAnAPIGetTheirOwnColour: two, three or five queries of
// one flavour are told apart by colour, far apart, not by a shade or a
// line width; runs of one query (a sweep's delays) keep one colour.
func TestQueriesSharingAnAPIGetTheirOwnColour(t *testing.T) {
	dist := func(a, b color.Color) float64 {
		ar, ag, ab, _ := a.RGBA()
		br, bg, bb, _ := b.RGBA()
		d := func(x, y uint32) float64 { return float64(x>>8) - float64(y>>8) }
		return math.Sqrt(d(ar, br)*d(ar, br) + d(ag, bg)*d(ag, bg) + d(ab, bb)*d(ab, bb))
	}
	for _, n := range []int{2, 3, 5} {
		var runs []*run
		for i := range n {
			runs = append(runs, &run{sum: &metrics.QuerySummary{Name: string(rune('a' + i)), Flavour: metrics.FlavourWithin}})
		}
		st := newStyles(runs)
		for i := range runs {
			for j := range i {
				if d := dist(st[runs[i]].Color, st[runs[j]].Color); d < 100 {
					t.Errorf("%d within-watermark queries: %s and %s drawn in colours %.0f apart (%v, %v), want 100 or more",
						n, runs[i].sum.Name, runs[j].sum.Name, d, st[runs[i]].Color, st[runs[j]].Color)
				}
			}
		}
	}
	d1, d2 := 60.0, 600.0
	x := &run{sum: &metrics.QuerySummary{Name: "x", Flavour: metrics.FlavourWithin, Delay: &d1}}
	y := &run{sum: &metrics.QuerySummary{Name: "y", Flavour: metrics.FlavourWithin, Delay: &d1}}
	y2 := &run{sum: &metrics.QuerySummary{Name: "y", Flavour: metrics.FlavourWithin, Delay: &d2}}
	st := newStyles([]*run{x, y, y2})
	if st[y].Color != st[y2].Color || st[x].Color == st[y].Color {
		t.Errorf("query y at two delays %v and %v, query x %v", st[y].Color, st[y2].Color, st[x].Color)
	}
}

// TestBadClockCapIsSaid: the runner marks at most 20 bad-clock rows (a
// bad-clock fault's row among them); when it reached that many, the
// legend and the list of markers say only the first are marked.
func TestBadClockCapIsSaid(t *testing.T) {
	markers := func(rows, faults int) []metrics.Marker {
		var ms []metrics.Marker
		for i := range faults {
			ms = append(ms, metrics.Marker{Kind: "bad-clock", At: float64(i), Label: "bad-clock fault: one row stamped 1h ahead"})
		}
		for i := range rows {
			ms = append(ms, metrics.Marker{Kind: "bad-clock", At: float64(100 + i), Label: "bad clock row, stamped 5m ahead"})
		}
		return ms
	}
	for _, c := range []struct {
		rows, faults int
		capped       bool
	}{{19, 0, false}, {20, 0, true}, {18, 2, true}, {0, 20, false}, {5, 1, false}} {
		ms := markers(c.rows, c.faults)
		legend := markerLegend(ms)[0].name
		note := markersNote(ms)
		said := strings.Contains(legend, "first 20 only") && strings.Contains(note, "Only the first 20 bad-clock rows are marked")
		quiet := legend == "bad clock" && !strings.Contains(note, "first 20")
		if c.capped && !said || !c.capped && !quiet {
			t.Errorf("%d rows and %d faults: legend %q, note %q; capped %v", c.rows, c.faults, legend, note, c.capped)
		}
	}
}
