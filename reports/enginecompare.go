package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// This file renders the comparison of engines that a run gets when its
// queries ran on more than one engine: a table ranking the queries by
// what they lose (missed duplicates, lost events) and hold (peak state,
// logical and physical), each with its mechanism in a sentence made from
// its own numbers, and a bar chart of the three per query.

// enginesComparedTitle is the section's title.
const enginesComparedTitle = "Engines compared"

// enginesCompared reports whether s ran queries on more than one engine.
func enginesCompared(s *metrics.Summary) bool {
	seen := map[string]bool{}
	for i := range s.Queries {
		seen[engineName(&s.Queries[i])] = true
	}
	return len(seen) > 1
}

// physicalPeak is q's peak physical state rows: the engine's own counter
// when it keeps expired entries (Flink, Kafka Streams), else the logical
// peak (Spark evicts what it forgets; Beam clears a key when its timer
// fires).
func physicalPeak(q *metrics.QuerySummary) int64 {
	if v, ok := q.EngineCounters["peakPhysicalStateRows"]; ok {
		return v
	}
	return q.PeakStateRows
}

// comparedOrder returns the indexes of s's queries, best first: fewest
// events lost, then fewest duplicates missed, then the smallest state.
func comparedOrder(s *metrics.Summary) []int {
	idx := make([]int, len(s.Queries))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		qa, qb := &s.Queries[a], &s.Queries[b]
		return cmp.Or(
			cmp.Compare(rate(qa.FalseDrops, qa.LogicalEvents), rate(qb.FalseDrops, qb.LogicalEvents)),
			cmp.Compare(rate(qa.MissedDuplicates, qa.TrueDuplicates), rate(qb.MissedDuplicates, qb.TrueDuplicates)),
			cmp.Compare(qa.PeakStateRows, qb.PeakStateRows))
	})
	return idx
}

// rankOf returns each query's rank (1 = best, ties share a rank) by v,
// smaller better.
func rankOf(s *metrics.Summary, v func(q *metrics.QuerySummary) float64) []int {
	ranks := make([]int, len(s.Queries))
	for i := range s.Queries {
		r := 1
		for j := range s.Queries {
			if v(&s.Queries[j]) < v(&s.Queries[i]) {
				r++
			}
		}
		ranks[i] = r
	}
	return ranks
}

// enginesComparedHeader names the columns of the comparison table.
func enginesComparedHeader() []string {
	return []string{"query", "engine", "horizon", "missed duplicates (rank)", "lost events (rank)", "peak state rows, logical / physical (rank)", "mechanism, from this run"}
}

// enginesComparedRows returns the comparison table's rows, best first.
func enginesComparedRows(s *metrics.Summary) [][]string {
	missed := rankOf(s, func(q *metrics.QuerySummary) float64 { return rate(q.MissedDuplicates, q.TrueDuplicates) })
	lost := rankOf(s, func(q *metrics.QuerySummary) float64 { return rate(q.FalseDrops, q.LogicalEvents) })
	state := rankOf(s, func(q *metrics.QuerySummary) float64 { return float64(q.PeakStateRows) })
	var rows [][]string
	for _, i := range comparedOrder(s) {
		q := &s.Queries[i]
		rows = append(rows, []string{
			q.Name, engineName(q), formatHorizon(q),
			fmt.Sprintf("%s (%s) #%d", interval.Count(q.MissedDuplicates), interval.Percent(rate(q.MissedDuplicates, q.TrueDuplicates)), missed[i]),
			fmt.Sprintf("%s (%s) #%d", interval.Count(q.FalseDrops), interval.Percent(rate(q.FalseDrops, q.LogicalEvents)), lost[i]),
			fmt.Sprintf("%s / %s #%d", interval.Count(q.PeakStateRows), interval.Count(physicalPeak(q)), state[i]),
			mechanism(q),
		})
	}
	return rows
}

// mechanism says in a sentence how q forgets and what that cost in this
// run: its horizon and flavour, then its own numbers (copies emitted
// again, events lost by cause, what its state kept past expiry, the
// engine's drops).
func mechanism(q *metrics.QuerySummary) string {
	var how string
	switch {
	case q.Mechanism != "":
		how = q.Mechanism
		if q.Horizon != nil && q.Horizon.Seconds != nil {
			how += " (" + formatHorizon(q) + ")"
		}
	case q.Engine != "":
		how = "forgets a key by the horizon in its query (see Scenario as run)"
	case q.Flavour == metrics.FlavourWithin && q.Delay != nil:
		how = fmt.Sprintf("keeps a key until the watermark passes its first event time + %s", formatDelay(q.Delay))
	case q.Flavour == metrics.FlavourUnbounded || q.Delay == nil:
		how = "never evicts a key"
	case q.Flavour == metrics.FlavourPairKeyed:
		how = fmt.Sprintf("keys on the event time too, so a copy re-stamped on resend is a new key, and evicts a key once the watermark (%s delay) passes its event time", formatDelay(q.Delay))
	default:
		how = fmt.Sprintf("evicts a key once the watermark (%s delay) passes it", formatDelay(q.Delay))
	}
	if q.KeyHorizonSeconds != nil && q.Horizon == nil {
		// A watermark's horizon, in event time; a horizon by its own name
		// (a TTL, a window) is said by the mechanism already.
		how += fmt.Sprintf(" (about %s of event time)", formatSpan(*q.KeyHorizonSeconds))
	}
	var parts []string
	if q.TrueDuplicates > 0 && q.MissedDuplicates == q.TrueDuplicates {
		parts = append(parts, "emitted every copy again")
	} else if q.MissedDuplicates > 0 {
		parts = append(parts, fmt.Sprintf("emitted %s %s again", interval.Count(q.MissedDuplicates), plural(int(q.MissedDuplicates), "copy", "copies")))
	}
	if v := q.EngineCounters["updatesEmitted"]; v > 0 {
		parts = append(parts, fmt.Sprintf("%s of its rows were updates (+U) of a key already emitted", interval.Count(v)))
	}
	c := q.FalseDropsByCause
	var causes []string
	for _, k := range []struct {
		n    int64
		what string
	}{{c.Late, "as late"}, {c.BadClock, "behind a bad clock's watermark"}, {c.Collision, "as another event's duplicate"}} {
		if k.n > 0 {
			causes = append(causes, interval.Count(k.n)+" "+k.what)
		}
	}
	if len(causes) > 0 {
		parts = append(parts, "lost "+strings.Join(causes, ", "))
	}
	if v := q.EngineCounters["droppedRecordsTotal"]; v > 0 {
		parts = append(parts, fmt.Sprintf("dropped %s records into expired segments", interval.Count(v)))
	}
	if v := q.EngineCounters["numLateRecordsDropped"]; v > 0 {
		parts = append(parts, fmt.Sprintf("dropped %s rows behind its watermark", interval.Count(v)))
	}
	if p := physicalPeak(q); p > q.PeakStateRows {
		parts = append(parts, fmt.Sprintf("held up to %s expired entries beyond the live ones", interval.Count(p-q.PeakStateRows)))
	}
	if len(parts) == 0 {
		parts = append(parts, "lost nothing and emitted no copy again")
	}
	return how + "; here it " + strings.Join(parts, "; ") + "."
}

// enginesComparedNote explains the comparison table.
func enginesComparedNote() string {
	return "The queries best first: fewest events lost, then fewest duplicates missed, then the smallest state; #N is each measure's rank (1 the best, ties share one). " +
		"Logical state is what decides the verdicts; physical is what memory holds (expired entries an engine keeps until a read, a cleanup or a segment's expiry). " +
		"The mechanism is the query's rule for forgetting a key, followed by what it did in this run."
}

// writeEnginesComparedMarkdown writes the section, when s compares engines.
func writeEnginesComparedMarkdown(b *bytes.Buffer, s *metrics.Summary) {
	if !enginesCompared(s) {
		return
	}
	h := enginesComparedHeader()
	b.WriteString("## " + enginesComparedTitle + "\n\n")
	b.WriteString("| " + strings.Join(h, " | ") + " |\n")
	b.WriteString("|:--|:--|:--|--:|--:|--:|:--|\n")
	for _, row := range enginesComparedRows(s) {
		b.WriteString("| " + strings.Join(mdCells(row), " | ") + " |\n")
	}
	fmt.Fprintf(b, "\n%s See the chart [%s](#%s).\n\n", enginesComparedNote(), enginesChartTitle, slug(enginesChartTitle))
}

// enginesChartTitle is the comparison chart's title.
const enginesChartTitle = "Missed duplicates, lost events and peak state per query"

// enginesChart draws, when s compares engines, the three measures of the
// comparison as bars per query, one panel each, the queries in the
// table's order: missed and lost as percentages, state as logical rows
// with the physical rows as a paler bar beside them.
func enginesChart(res *results) (drawing, string, string, bool) {
	s := res.sum
	if !enginesCompared(s) {
		return drawing{}, "", "", false
	}
	order := comparedOrder(s)
	cs := seriesColors()
	names := make([]string, len(order))
	for k, i := range order {
		names[k] = s.Queries[i].Name
	}
	bars := func(v func(q *metrics.QuerySummary) float64, fill color.Color, offset, width float64, label func(float64) string) *barSeries {
		b := &barSeries{width: width, fill: fill}
		for k, i := range order {
			y := v(&s.Queries[i])
			b.xs, b.ys = append(b.xs, float64(k)+offset), append(b.ys, y)
			b.labels = append(b.labels, label(y))
		}
		return b
	}
	pct := func(y float64) string { return trimFloat(y) + "%" }
	panel := func(yLabel string, series ...*barSeries) *plot.Plot {
		p := newPlot("", yLabel)
		top := 0.0
		for _, b := range series {
			p.Add(b)
			for _, y := range b.ys {
				top = max(top, y)
			}
		}
		var ticks plot.ConstantTicks
		for k, n := range names {
			ticks = append(ticks, plot.Tick{Value: float64(k), Label: n})
		}
		p.X.Tick.Marker = ticks
		p.X.Tick.Width, p.X.Tick.Length = 0, 0
		p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
		p.Y.Min, p.Y.Max = 0, max(top*1.18, 1e-9)
		return p
	}
	missed := panel("missed duplicates (%)", bars(func(q *metrics.QuerySummary) float64 {
		return 100 * rate(q.MissedDuplicates, q.TrueDuplicates)
	}, cs[0], 0, 0.6, pct))
	lost := panel("lost events (%)", bars(func(q *metrics.QuerySummary) float64 {
		return 100 * rate(q.FalseDrops, q.LogicalEvents)
	}, cs[1], 0, 0.6, pct))
	pale := color.NRGBA{R: 0x9e, G: 0xc9, B: 0xe2, A: 0xff}
	state := panel("peak state rows", bars(func(q *metrics.QuerySummary) float64 { return float64(q.PeakStateRows) }, cs[2], -0.17, 0.32, humanNumber),
		bars(func(q *metrics.QuerySummary) float64 { return float64(physicalPeak(q)) }, pale, 0.17, 0.32, humanNumber))
	items := []legendItem{
		{name: "missed duplicates, % of duplicate copies", thumbs: []plot.Thumbnailer{barThumb{cs[0]}}},
		{name: "lost events, % of events", thumbs: []plot.Thumbnailer{barThumb{cs[1]}}},
		{name: "peak state rows: logical", thumbs: []plot.Thumbnailer{barThumb{cs[2]}}},
		{name: "physical (expired entries kept)", thumbs: []plot.Thumbnailer{barThumb{pale}}},
	}
	subtitle := res.subtitle("the queries best first, as in the table " + enginesComparedTitle)
	h := vg.Length(2.6*3+1.2) * vg.Inch
	d := drawing{w: 10 * vg.Inch, h: h, draw: func(dc draw.Canvas) error {
		area := frame(dc, enginesChartTitle, subtitle, items)
		cs := stack([]*plot.Plot{missed, lost, state}, area, vg.Points(14))
		missed.Draw(cs[0])
		lost.Draw(cs[1])
		state.Draw(cs[2])
		return nil
	}}
	note := "Each engine's three measures side by side, in the comparison table's order; the state rows are over the traffic window."
	return d, enginesChartTitle, note, true
}
