package reports

import (
	"bytes"
	"encoding/json"
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

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// ReviewFormat versions plan.json.
const ReviewFormat = "dedupsim-plan/1"

// Review is a capacity plan as a design review reads it: the answer, then
// every number at the production rate, the delays tried and the
// assumptions. `simulate plan --out DIR` fills it from sim/plan's result;
// RenderReview writes it as plan.json, report.md, report.html and
// charts. It holds plain values only, so that reports stays a reader.
type Review struct {
	Format string `json:"format"`
	// Scenario is the scenario file, Query the query's name and
	// QueryText its chain at the recommended delay.
	Scenario  string `json:"scenario"`
	Query     string `json:"query"`
	QueryText string `json:"queryText"`
	// RecommendedDelaySeconds is null without a recommendation; Reason
	// says why either way.
	RecommendedDelaySeconds *float64 `json:"recommendedDelaySeconds"`
	Reason                  string   `json:"reason"`
	// Binding is the target that decides the delay ("missedRate",
	// "falseDropRate", "memoryBudget" or ""); BindingText and Margins
	// say it in words.
	Binding     string `json:"bindingTarget"`
	BindingText string `json:"bindingText"`
	Margins     string `json:"margins"`
	// Targets are the targets planned for.
	MaxMissedRate     float64 `json:"maxMissedRate"`
	MaxFalseDropRate  float64 `json:"maxFalseDropRate"`
	MemoryBudgetBytes int64   `json:"memoryBudgetBytes"`
	// ScenarioRate is the scenario's peak rate of originals as written,
	// PlannedRate the production rate every value below is simulated at.
	ScenarioRate float64 `json:"scenarioRatePerSecond"`
	PlannedRate  float64 `json:"plannedRatePerSecond"`
	// Seeds are the seeds planned over, each with its own smallest delay
	// (null: none); Quantile the share they must meet the targets on.
	Seeds    []ReviewSeed `json:"seeds"`
	Quantile float64      `json:"quantile"`
	// Spread is over the seeds at the recommended delay; TriggerSeconds
	// the scenario's trigger.
	Spread         ReviewSpread `json:"spread"`
	TriggerSeconds float64      `json:"triggerSeconds"`
	// Cluster is the cluster sized, one entry per provider; absent
	// without a spark: block or cluster flags.
	Cluster *ReviewCluster `json:"cluster,omitempty"`
	// Points are every delay simulated for the first seed, in increasing
	// order: the horizon tradeoff.
	Points []ReviewPoint `json:"points"`
	// Curve is the first seed's exact one-pass curve (sim/curve) at the
	// planned rate, when plan read one: report.html draws it as an
	// interactive chart. CurveMemory says how its executor memory is
	// estimated ("" without a cluster).
	Curve       []ReviewCurvePoint `json:"curve,omitempty"`
	CurveMemory string             `json:"curveMemory,omitempty"`
	// RunDir is the folder, relative to the review's, of the direct run
	// at the recommended delay and the production rate ("" without one).
	RunDir string `json:"runDir,omitempty"`
	// Notes are the plan's caveats; Assumptions what the numbers rest on.
	Notes       []string `json:"notes"`
	Assumptions []string `json:"assumptions"`
	// Command is the command that wrote the review.
	Command string `json:"command"`
}

// ReviewSeed is one seed's smallest delay meeting the targets.
type ReviewSeed struct {
	Seed         uint64   `json:"seed"`
	DelaySeconds *float64 `json:"delaySeconds"`
}

// ReviewSpread is min, median and max over the seeds.
type ReviewSpread struct {
	MissedRate     [3]float64 `json:"missedRate"`
	FalseDropRate  [3]float64 `json:"falseDropRate"`
	PeakStateRows  [3]float64 `json:"peakStateRows"`
	PeakStateBytes [3]float64 `json:"peakStateBytes"`
}

// ReviewCluster is the Spark cluster sized at the recommended delay and
// the production rate.
type ReviewCluster struct {
	Partitions       int64            `json:"partitions"`
	Executors        int64            `json:"executors"`
	CoresPerExecutor int64            `json:"coresPerExecutor"`
	Providers        []ReviewProvider `json:"providers"`
}

// ReviewProvider is one state store provider's sizing.
type ReviewProvider struct {
	Provider string `json:"provider"`
	// MemoryKind is "JVM heap" or "native memory".
	MemoryKind              string  `json:"memoryKind"`
	ExecutorPeakMemoryBytes int64   `json:"executorPeakMemoryBytes"`
	ExecutorPeakDiskBytes   int64   `json:"executorPeakDiskBytes"`
	BatchP50Ms              float64 `json:"batchP50Ms"`
	BatchP99Ms              float64 `json:"batchP99Ms"`
	KeepsUp                 bool    `json:"keepsUp"`
	MaxSustainableRate      float64 `json:"maxSustainableRate"`
	// MaxSustainableRateBounded is true when it kept up at every rate
	// tried (MaxSustainableRate is then a lower bound).
	MaxSustainableRateBounded bool `json:"maxSustainableRateBounded"`
	// Costs says where the cost terms come from.
	Costs   string `json:"costs"`
	Verdict string `json:"verdict"`
	// ExecutorMemoryBytes is the memory each executor's state may use,
	// ExecutorMemorySource where it came from; FitsMemory is true when
	// the state at the planned rate fits in it.
	ExecutorMemoryBytes  int64  `json:"executorMemoryBytes"`
	ExecutorMemorySource string `json:"executorMemorySource"`
	FitsMemory           bool   `json:"fitsMemory"`
	// BatchLimited is true when a batch at the planned rate reached
	// dedupsim's limit on a batch's rows: the query falls behind, and its
	// memory and batch durations there are not measured.
	BatchLimited bool `json:"batchLimited"`
	// MemoryAtMaxRateBytes is the state memory at MaxSustainableRate;
	// RateBound names what bounded that rate (sim/plan's Bound*), and
	// RateBoundText says it in words.
	MemoryAtMaxRateBytes int64  `json:"memoryAtMaxRateBytes"`
	RateBound            string `json:"rateBound"`
	RateBoundText        string `json:"rateBoundText"`
	// MemoryHint suggests executor memory settings, with the overhead
	// Spark adds.
	MemoryHint string `json:"memoryHint"`
	// SimulationsAtBatchLimit counts the rate search's simulations in
	// which a batch met dedupsim's limit on its rows.
	SimulationsAtBatchLimit int `json:"simulationsAtBatchLimit"`
}

// sustainable returns the provider's largest sustainable rate as the
// review shows it, and false when it cannot be shown: a rate is shown
// only beside state memory that fits in a stated executor memory.
func (p ReviewProvider) sustainable() (string, bool) {
	switch {
	case p.ExecutorMemoryBytes <= 0:
		return "not shown: no executor memory was stated, so whether its state fits is unknown", false
	case p.MaxSustainableRate == 0:
		return "none: " + orDash(p.RateBoundText), false
	case p.MemoryAtMaxRateBytes > p.ExecutorMemoryBytes:
		return fmt.Sprintf("not shown: its state, %s, does not fit in the %s executor memory", interval.Bytes(p.MemoryAtMaxRateBytes), interval.Bytes(p.ExecutorMemoryBytes)), false
	}
	r := fmtRate(p.MaxSustainableRate) + "/s"
	if p.MaxSustainableRateBounded {
		r = "above " + r
	}
	return fmt.Sprintf("%s, with %s of %s there (of the %s executor memory): %s", r, interval.Bytes(p.MemoryAtMaxRateBytes), p.MemoryKind, interval.Bytes(p.ExecutorMemoryBytes), orDash(p.RateBoundText)), true
}

// ReviewPoint is one simulated delay of the first seed.
type ReviewPoint struct {
	DelaySeconds   float64 `json:"delaySeconds"`
	MissedRate     float64 `json:"missedRate"`
	FalseDropRate  float64 `json:"falseDropRate"`
	PeakStateBytes float64 `json:"peakStateBytes"`
}

// RenderReview writes the review into dir: plan.json, report.md,
// report.html, tradeoff.png/.svg and, when rv.RunDir holds the direct
// run's results, growth.png/.svg (its state rows over time, drawn by the
// results report's own chart). Every file is written atomically.
func RenderReview(dir string, rv *Review) error {
	rv.Format = ReviewFormat
	write := func(name string, data []byte) error {
		if err := metrics.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	js, err := json.MarshalIndent(rv, "", "  ")
	if err != nil {
		return fmt.Errorf("plan.json: %w", err)
	}
	if err := write("plan.json", append(js, '\n')); err != nil {
		return err
	}
	var charts []chartFile
	if d, ok := tradeoffChart(rv); ok {
		c, err := chartOf("tradeoff", "Delays tried against the targets", tradeoffNote(rv), d)
		if err != nil {
			return err
		}
		charts = append(charts, c)
	}
	if rv.RunDir != "" {
		s, ts, err := ReadResults(filepath.Join(dir, rv.RunDir))
		if err != nil {
			return err
		}
		if d, _, note, ok := timelineChart(newResults(s, ts), stateRowsSpec()); ok {
			c, err := chartOf("growth", "State growth at the recommended delay", note, d)
			if err != nil {
				return err
			}
			charts = append(charts, c)
		}
	}
	for _, c := range charts {
		if err := write(c.Name+".png", c.PNG); err != nil {
			return err
		}
		if err := write(c.Name+".svg", c.SVG); err != nil {
			return err
		}
	}
	var md bytes.Buffer
	writeReviewMarkdown(&md, rv, charts)
	if err := write("report.md", md.Bytes()); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := writeReviewHTML(&page, rv, charts); err != nil {
		return err
	}
	return write("report.html", page.Bytes())
}

// chartOf renders d as a chart file.
func chartOf(name, title, note string, d drawing) (chartFile, error) {
	png, err := renderPNG(d)
	if err != nil {
		return chartFile{}, fmt.Errorf("%s.png: %w", name, err)
	}
	svg, err := renderSVG(d)
	if err != nil {
		return chartFile{}, fmt.Errorf("%s.svg: %w", name, err)
	}
	return chartFile{Name: name, Title: title, Note: note, PNG: png, SVG: svg}, nil
}

// answer is the review's first line: the delay, or why there is none.
func (rv *Review) answer() string {
	if rv.RecommendedDelaySeconds == nil {
		return "No recommended delay"
	}
	return "Recommended watermark delay: " + fmtSecs(*rv.RecommendedDelaySeconds)
}

// spreadText is the seeds' own delays: "5m4s to 5m31s over 5 seeds".
func (rv *Review) spreadText() string {
	lo, hi, none := math.Inf(1), math.Inf(-1), 0
	for _, s := range rv.Seeds {
		if s.DelaySeconds == nil {
			none++
			continue
		}
		lo, hi = math.Min(lo, *s.DelaySeconds), math.Max(hi, *s.DelaySeconds)
	}
	var per []string
	for _, s := range rv.Seeds {
		v := "none"
		if s.DelaySeconds != nil {
			v = fmtSecs(*s.DelaySeconds)
		}
		per = append(per, fmt.Sprintf("%d: %s", s.Seed, v))
	}
	out := fmt.Sprintf("each of %d seeds' smallest delay: %s", len(rv.Seeds), strings.Join(per, ", "))
	if none == 0 && len(rv.Seeds) > 1 {
		out = fmt.Sprintf("the seeds' own smallest delays run from %s to %s (%s)", fmtSecs(lo), fmtSecs(hi), strings.Join(per, ", "))
	}
	return out
}

// keyRows are the answer's table: what a reviewer checks first.
func (rv *Review) keyRows() [][2]string {
	rows := [][2]string{
		{"Recommended delay", strings.TrimSpace(rv.answer()[strings.LastIndex(rv.answer(), ":")+1:])},
		{"Spread over seeds", rv.spreadText()},
		{"Binding target", orDash(rv.BindingText)},
		{"Margin (worst seed)", orDash(rv.Margins)},
		{"Planned rate", fmt.Sprintf("%s/s of originals (the scenario's %s/s multiplied %.4g times; every value simulated at it)",
			fmtRate(rv.PlannedRate), fmtRate(rv.ScenarioRate), rv.PlannedRate/rv.ScenarioRate)},
	}
	if rv.RecommendedDelaySeconds == nil {
		rows[0][1] = "none"
	}
	return rows
}

// answerRows are the answer box's rows, the same in report.md and
// report.html: keyRows, then the cluster's verdict rows (the executor's
// peak state memory and whether the cluster keeps up), one cell per
// provider.
func (rv *Review) answerRows() [][2]string {
	rows := rv.keyRows()
	if rv.Cluster == nil {
		return rows
	}
	head, prov := rv.providerTable()
	for _, r := range prov {
		if r[0] != "Executor peak state memory" && r[0] != "Keeps up at the planned rate" {
			continue
		}
		var cells []string
		for i := 1; i < len(r) && i < len(head); i++ {
			cells = append(cells, head[i]+": "+r[i])
		}
		rows = append(rows, [2]string{r[0], strings.Join(cells, "; ")})
	}
	return rows
}

// stateRows are the production-rate table's first rows.
func (rv *Review) stateRows() [][2]string {
	s := rv.Spread
	return [][2]string{
		{"Missed duplicates (min / median / max)", fmt.Sprintf("%s / %s / %s (target %s)", interval.Percent(s.MissedRate[0]), interval.Percent(s.MissedRate[1]), interval.Percent(s.MissedRate[2]), interval.Percent(rv.MaxMissedRate))},
		{"False drops (min / median / max)", fmt.Sprintf("%s / %s / %s (target %s)", interval.Percent(s.FalseDropRate[0]), interval.Percent(s.FalseDropRate[1]), interval.Percent(s.FalseDropRate[2]), interval.Percent(rv.MaxFalseDropRate))},
		{"Peak state rows (min / median / max)", fmt.Sprintf("%s / %s / %s", fmtInt(s.PeakStateRows[0]), fmtInt(s.PeakStateRows[1]), fmtInt(s.PeakStateRows[2]))},
		{"Peak state bytes, one store version (min / median / max)", fmt.Sprintf("%s / %s / %s", fmtB(s.PeakStateBytes[0]), fmtB(s.PeakStateBytes[1]), fmtB(s.PeakStateBytes[2]))},
	}
}

// providerTable is the cluster table: one row per measure, one column per
// provider.
func (rv *Review) providerTable() (head []string, rows [][]string) {
	c := rv.Cluster
	head = []string{fmt.Sprintf("at %s/s, %d partitions, %d executors x %d cores", fmtRate(rv.PlannedRate), c.Partitions, c.Executors, c.CoresPerExecutor)}
	for _, p := range c.Providers {
		head = append(head, p.Provider)
	}
	add := func(name string, f func(p ReviewProvider) string) {
		r := []string{name}
		for _, p := range c.Providers {
			r = append(r, f(p))
		}
		rows = append(rows, r)
	}
	add("Executor memory for the state", func(p ReviewProvider) string {
		if p.ExecutorMemoryBytes <= 0 {
			return "not stated"
		}
		return fmt.Sprintf("%s (%s); the state stores' memory only: JVM headroom and everything outside the state store are not counted", interval.Bytes(p.ExecutorMemoryBytes), orDash(p.ExecutorMemorySource))
	})
	add("Executor peak state memory", func(p ReviewProvider) string {
		switch {
		case p.BatchLimited:
			return "not measured: a batch reached dedupsim's limit on its rows"
		case p.ExecutorMemoryBytes > 0 && !p.FitsMemory:
			return interval.Bytes(p.ExecutorPeakMemoryBytes) + " " + p.MemoryKind + ": does NOT fit in the executor memory"
		}
		return interval.Bytes(p.ExecutorPeakMemoryBytes) + " " + p.MemoryKind
	})
	add("Executor peak local disk", func(p ReviewProvider) string {
		if p.ExecutorPeakDiskBytes == 0 {
			return "0 (files on the checkpoint location)"
		}
		return interval.Bytes(p.ExecutorPeakDiskBytes)
	})
	trig := fmtSecs(rv.TriggerSeconds)
	add("Batch p50 during traffic", func(p ReviewProvider) string { return fmtMsText(p.BatchP50Ms) + " of a " + trig + " trigger" })
	add("Batch p99 during traffic", func(p ReviewProvider) string { return fmtMsText(p.BatchP99Ms) + " of a " + trig + " trigger" })
	add("Keeps up at the planned rate", func(p ReviewProvider) string {
		switch {
		case p.BatchLimited:
			return "NO: falls behind (a batch reached dedupsim's limit on its rows)"
		case p.KeepsUp:
			return "yes"
		}
		return "NO: falls behind"
	})
	add("Max sustainable rate", func(p ReviewProvider) string {
		s, _ := p.sustainable()
		return s
	})
	add("Suggested executor memory", func(p ReviewProvider) string { return orDash(p.MemoryHint) })
	add("Costs", func(p ReviewProvider) string { return p.Costs })
	return head, rows
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fmtSecs renders seconds as a delay ("5m4s").
func fmtSecs(s float64) string {
	d := int64(math.Round(s))
	h, m, sec := d/3600, d/60%60, d%60
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if sec > 0 || d == 0 {
		fmt.Fprintf(&b, "%ds", sec)
	}
	return b.String()
}

// fmtInt renders a count with thousands separators.
func fmtInt(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0 && s[i-1] >= '0' && s[i-1] <= '9'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtRate renders a rate per second, three significant digits.
func fmtRate(r float64) string {
	if r >= 1000 {
		p := math.Pow(10, math.Floor(math.Log10(r))-2)
		return fmtInt(math.Floor(r/p) * p)
	}
	return trimFloat(r)
}

func fmtB(v float64) string { return interval.Bytes(int64(math.Round(v))) }

// fmtMsText renders milliseconds ("390 ms", "4.2 s").
func fmtMsText(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.3g s", ms/1000)
	}
	return fmt.Sprintf("%.3g ms", ms)
}

// tradeoffNote says what the tradeoff chart shows.
func tradeoffNote(rv *Review) string {
	return fmt.Sprintf("Every delay the search simulated for seed %d at %s/s: the missed-duplicate and false-drop rates against their targets (dashed), and the peak state; the recommended delay is the vertical line. Rates of 0 sit on the floor of the log scale.",
		rv.Seeds[0].Seed, fmtRate(rv.PlannedRate))
}

// tradeoffChart draws the delays simulated against the two rate targets
// and the peak state, the pick marked; ok is false with fewer than two
// delays.
func tradeoffChart(rv *Review) (drawing, bool) {
	if len(rv.Points) < 2 || len(rv.Seeds) == 0 {
		return drawing{}, false
	}
	minutes := func(s float64) float64 { return s / 60 }
	floorOf := func(vs []float64, target float64) float64 {
		lo := target
		for _, v := range vs {
			if v > 0 && v < lo {
				lo = v
			}
		}
		return math.Pow(10, math.Floor(math.Log10(lo))-1)
	}
	ratePanel := func(label string, value func(ReviewPoint) float64, target float64, c color.Color) (*plot.Plot, error) {
		var vs []float64
		for _, p := range rv.Points {
			vs = append(vs, value(p))
		}
		fl := floorOf(vs, math.Max(target, 1e-9))
		p := newPlot("watermark delay (minutes)", label)
		var xys plotter.XYs
		for _, pt := range rv.Points {
			xys = append(xys, plotter.XY{X: minutes(pt.DelaySeconds), Y: math.Log10(math.Max(value(pt), fl))})
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		l.Color, s.Color = c, c
		l.Width = vg.Points(1.5)
		s.Shape = draw.CircleGlyph{}
		s.Radius = vg.Points(2.5)
		p.Add(l, s)
		if target > 0 {
			tl, err := plotter.NewLine(plotter.XYs{{X: minutes(rv.Points[0].DelaySeconds), Y: math.Log10(target)}, {X: minutes(rv.Points[len(rv.Points)-1].DelaySeconds), Y: math.Log10(target)}})
			if err != nil {
				return nil, err
			}
			tl.Color, tl.Dashes, tl.Width = color.RGBA{R: 0xcf, G: 0x22, B: 0x2e, A: 0xff}, []vg.Length{vg.Points(5), vg.Points(3)}, vg.Points(1.2)
			p.Add(tl)
		}
		p.Y.Tick.Marker = logTicks{format: percentLabel, floor: fl}
		return p, nil
	}
	pick := func(p *plot.Plot) error {
		if rv.RecommendedDelaySeconds == nil {
			return nil
		}
		x := minutes(*rv.RecommendedDelaySeconds)
		vl, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		vl.Color, vl.Width = color.RGBA{R: 0x1a, G: 0x7f, B: 0x37, A: 0xff}, vg.Points(1.5)
		p.Add(vl)
		return nil
	}
	colors := seriesColors()
	d := drawing{w: 8 * vg.Inch, h: 7 * vg.Inch, draw: func(dc draw.Canvas) error {
		items := []legendItem{}
		title := "Horizon tradeoff at " + fmtRate(rv.PlannedRate) + "/s: each delay against the targets"
		sub := fmt.Sprintf("seed %d; dashed: the targets; green: the recommended delay", rv.Seeds[0].Seed)
		area := frame(dc, title, sub, items)
		m, err := ratePanel("missed duplicates", func(p ReviewPoint) float64 { return p.MissedRate }, rv.MaxMissedRate, colors[0])
		if err != nil {
			return err
		}
		f, err := ratePanel("false drops", func(p ReviewPoint) float64 { return p.FalseDropRate }, rv.MaxFalseDropRate, colors[1])
		if err != nil {
			return err
		}
		st := newPlot("watermark delay (minutes)", "peak state bytes")
		var xys plotter.XYs
		for _, pt := range rv.Points {
			xys = append(xys, plotter.XY{X: minutes(pt.DelaySeconds), Y: pt.PeakStateBytes})
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color, s.Color, l.Width, s.Shape = colors[2], colors[2], vg.Points(1.5), draw.CircleGlyph{}
		st.Add(l, s)
		st.Y.Tick.Marker = byteTicks{n: 5}
		if rv.MemoryBudgetBytes > 0 {
			bl, err := plotter.NewLine(plotter.XYs{{X: xys[0].X, Y: float64(rv.MemoryBudgetBytes)}, {X: xys[len(xys)-1].X, Y: float64(rv.MemoryBudgetBytes)}})
			if err != nil {
				return err
			}
			bl.Color, bl.Dashes = color.RGBA{R: 0xcf, G: 0x22, B: 0x2e, A: 0xff}, []vg.Length{vg.Points(5), vg.Points(3)}
			st.Add(bl)
		}
		plots := []*plot.Plot{m, f, st}
		for _, p := range plots {
			if err := pick(p); err != nil {
				return err
			}
		}
		for k, c := range stack(plots, area, vg.Points(10)) {
			plots[k].Draw(c)
		}
		return nil
	}}
	return d, true
}

// writeReviewMarkdown writes report.md: the answer first.
func writeReviewMarkdown(b *bytes.Buffer, rv *Review, charts []chartFile) {
	fmt.Fprintf(b, "# Capacity plan: %s in %s\n\n", rv.Query, rv.Scenario)
	fmt.Fprintf(b, "**%s** for `%s`, at %s/s.\n\n", rv.answer(), rv.QueryText, fmtRate(rv.PlannedRate))
	b.WriteString("| | |\n|---|---|\n")
	for _, r := range rv.answerRows() {
		fmt.Fprintf(b, "| %s | %s |\n", r[0], mdCell(r[1]))
	}
	fmt.Fprintf(b, "\nWhy: %s\n\n", rv.Reason)
	fmt.Fprintf(b, "## At the production rate, %s/s\n\n", fmtRate(rv.PlannedRate))
	b.WriteString("| | |\n|---|---|\n")
	for _, r := range rv.stateRows() {
		fmt.Fprintf(b, "| %s | %s |\n", r[0], mdCell(r[1]))
	}
	if rv.Cluster != nil {
		head, rows := rv.providerTable()
		fmt.Fprintf(b, "\n| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			for i := range r {
				r[i] = mdCell(r[i])
			}
			fmt.Fprintf(b, "| %s |\n", strings.Join(r, " | "))
		}
	}
	for _, c := range charts {
		fmt.Fprintf(b, "\n## %s\n\n![%s](%s.png)\n\n%s\n", c.Title, c.Title, c.Name, c.Note)
	}
	b.WriteString("\n## Assumptions\n\n")
	for _, a := range rv.Assumptions {
		fmt.Fprintf(b, "- %s\n", a)
	}
	if len(rv.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range rv.Notes {
			fmt.Fprintf(b, "- %s\n", n)
		}
	}
	fmt.Fprintf(b, "\nWritten by `%s`; plan.json holds the same numbers.\n", rv.Command)
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// writeReviewHTML writes report.html: one page, the answer in a box at the
// top, above the fold; with a curve, its interactive chart (reviewcurve.go),
// the page's only script.
func writeReviewHTML(b *bytes.Buffer, rv *Review, charts []chartFile) error {
	t, err := template.New("review").Parse(reviewTemplate)
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
	data := map[string]any{"R": rv, "Answer": rv.answer(), "Key": rv.answerRows(), "State": rv.stateRows(), "Rate": fmtRate(rv.PlannedRate), "Charts": hc}
	if len(rv.Curve) > 1 {
		c, err := rv.curveSection()
		if err != nil {
			return err
		}
		data["Curve"] = c
	}
	if rv.Cluster != nil {
		head, rows := rv.providerTable()
		data["Head"], data["Rows"] = head, rows
	}
	return t.Execute(b, data)
}

const reviewTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Capacity plan: {{.R.Query}}</title>
<style>
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328; margin: 0; }
main { max-width: 1120px; margin: 0 auto; padding: 16px 24px 40px; }
h1 { font-size: 20px; margin: 0 0 8px; }
h2 { font-size: 17px; margin: 26px 0 8px; padding-bottom: 3px; border-bottom: 1px solid #d8dee4; }
.answer { border: 2px solid #1a7f37; background: #f0fff4; border-radius: 8px; padding: 10px 16px; }
.answer .big { font-size: 24px; font-weight: 700; margin: 0 0 6px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 13.5px; }
th, td { border: 1px solid #d8dee4; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.answer table th { width: 190px; background: #e6f6ea; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
.why { color: #40464d; font-size: 13px; margin: 8px 0 0; }
figure { margin: 12px 0; } figure svg { max-width: 100%; height: auto; }
figcaption { color: #59636e; font-size: 13px; }
</style>
</head>
<body><main>
<h1>Capacity plan: {{.R.Query}} in {{.R.Scenario}}</h1>
<div class="answer" id="answer">
<p class="big">{{.Answer}} <span style="font-weight:400;font-size:15px">at {{.Rate}}/s</span></p>
<table>{{range .Key}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}
</table>
<p class="why"><code>{{.R.QueryText}}</code>. Why: {{.R.Reason}}</p>
</div>
<h2 id="production">At the production rate, {{.Rate}}/s</h2>
<table>{{range .State}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
{{if .Head}}<p></p><table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $v := .}}{{if $i}}<td>{{$v}}</td>{{else}}<th>{{$v}}</th>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{with .Curve}}<h2 id="curve">Every delay, exact: the one-pass curve</h2>
<p class="why">{{.Intro}}</p>
<p><label for="cv-slider">Watermark delay</label> <input type="range" id="cv-slider" min="0" max="{{.Last}}" step="1" value="0" style="width:60%;vertical-align:middle"> <b id="cv-delay-big"></b></p>
<table id="cv-readout">
<tr><th>Watermark delay</th><td><span id="cv-delay" data-value=""></span></td></tr>
<tr><th>Missed duplicates</th><td><span id="cv-missed" data-value=""></span> <span id="cv-missed-vs"></span></td></tr>
<tr><th>False drops</th><td><span id="cv-fd" data-value=""></span> <span id="cv-fd-vs"></span>: <span id="cv-fd-causes"></span></td></tr>
<tr><th>Peak state, one store version</th><td><span id="cv-rows" data-value=""></span> rows, <span id="cv-bytes" data-value=""></span> <span id="cv-state-how"></span></td></tr>
{{range $i, $p := .Providers}}<tr><th>Executor peak state memory, {{$p.Provider}}</th><td><span id="cv-mem-{{$i}}" data-value=""></span> {{$p.MemoryKind}} <span id="cv-mem-vs-{{$i}}"></span></td></tr>
{{end}}</table>
<figure><svg id="cv-svg" viewBox="0 0 960 600" width="960" height="600" role="img" aria-label="the tradeoff curve: delay against missed duplicates, false drops and state"></svg>
<figcaption>{{.Caption}}</figcaption></figure>
<script type="application/json" id="curve-data">{{.JSON}}</script>
<script>{{.Script}}</script>
{{end}}{{range .Charts}}<h2>{{.Title}}</h2><figure>{{.SVG}}<figcaption>{{.Note}}</figcaption></figure>
{{end}}
<h2 id="assumptions">Assumptions</h2>
<ul>{{range .R.Assumptions}}<li>{{.}}</li>{{end}}</ul>
{{if .R.Notes}}<h2 id="notes">Notes</h2><ul>{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p class="why">Written by <code>{{.R.Command}}</code>; plan.json holds the same numbers.</p>
</main></body></html>
`
