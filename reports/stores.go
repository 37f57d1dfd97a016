package reports

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// This file renders the state-store comparison of `simulate bench-stores`
// (stores.json, metrics.StoreBench): its table, its chart, stores.md and
// the section Render adds to report.md and report.html when a results
// folder holds a stores.json. The measuring itself lives in
// sim/storebench; like the rest of reports, this file only reads results.

// storesHeader names the columns of the store table.
func storesHeader() []string {
	return []string{
		"query", "sim backend", "sim speed (rows/s)", "peak state (model)", "peak Go heap", "peak on disk",
		"peak memtable", "checkpoint/batch", "of it compacted", "recovery",
	}
}

// storesRows returns one row per run, in the file's order.
func storesRows(sb *metrics.StoreBench) [][]string {
	opt := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return interval.Bytes(*p)
	}
	rows := make([][]string, 0, len(sb.Runs))
	for _, r := range sb.Runs {
		count := func(v float64) string { return interval.Count(int64(math.Round(v))) }
		speed := count(r.EventsPerSecond) + spread(r.EventsPerSecondRuns, count)
		recovery := formatSeconds(r.RecoverySeconds) + spread(r.RecoverySecondsRuns, formatSeconds)
		rows = append(rows, []string{
			r.Query, r.Store, speed,
			interval.Bytes(r.ModelPeakBytes),
			opt(r.GoHeapPeakBytes), opt(r.DiskPeakBytes), opt(r.MemTablePeakBytes),
			interval.Bytes(int64(math.Round(r.CheckpointBytesPerBatch))),
			compacted(r), recovery,
		})
	}
	return rows
}

// storesRowsMedians is storesRows without the runs' ranges.
func storesRowsMedians(sb *metrics.StoreBench) [][]string {
	c := *sb
	c.Runs = make([]metrics.StoreRun, len(sb.Runs))
	for i, r := range sb.Runs {
		r.EventsPerSecondRuns, r.RecoverySecondsRuns = nil, nil
		c.Runs[i] = r
	}
	return storesRows(&c)
}

// spread renders the range of several runs' measurements after their
// median: " (min-max)"; "" for one run or none (the intro says how
// many runs).
func spread(runs []float64, format func(float64) string) string {
	if len(runs) < 2 {
		return ""
	}
	return fmt.Sprintf(" (%s-%s)", format(slices.Min(runs)), format(slices.Max(runs)))
}

// compacted renders the compacted part of a run's checkpoint per batch:
// the memory store's snapshots, Pebble's flushed sstables, saying so
// when Pebble never flushed (its checkpoint is then changelogs only).
func compacted(r metrics.StoreRun) string {
	if r.CompactBytes == nil {
		return "-"
	}
	per := interval.Bytes(int64(math.Round(float64(*r.CompactBytes) / math.Max(float64(r.Batches), 1))))
	switch {
	case r.Flushes != nil && *r.Flushes == 0:
		return "0 B (never flushed)"
	case r.Flushes != nil:
		return fmt.Sprintf("%s (%s %s)", per, interval.Count(*r.Flushes), plural(int(*r.Flushes), "flush", "flushes"))
	}
	return per + " (snapshots)"
}

// formatSeconds renders a wall-clock duration: "850 us", "12.3 ms", "1.42 s".
func formatSeconds(s float64) string {
	switch {
	case s < 1e-3:
		return fmt.Sprintf("%.0f us", s*1e6)
	case s < 10e-3:
		return fmt.Sprintf("%.2f ms", s*1e3)
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1e3)
	case s < 100:
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.0f s", s)
}

// StoreTable writes the store comparison of sb to w, one row per query and
// backend: engine throughput, peak state (the model, the memory backend's
// measured Go heap, Pebble's disk and memtable), checkpoint bytes per batch
// and recovery time; for a comparison of Spark's providers, their
// modelled executor memory and disk and batch durations. With markdown it
// writes a GitHub-flavoured Markdown table, otherwise a boxed table for
// the terminal.
func StoreTable(w io.Writer, sb *metrics.StoreBench, markdown bool) error {
	if len(sb.Spark) > 0 {
		return providersTable(w, sb, markdown)
	}
	rows := storesRows(sb)
	if !markdown {
		// On a terminal the medians alone: the runs' ranges (stores.md,
		// the chart's whiskers, the verdict line) would double its width.
		rows = storesRowsMedians(sb)
	}
	return alignedTable(w, "store table", storesHeader(), rows, 2, markdown)
}

// alignedTable writes header and rows as one table, Markdown or boxed for
// a terminal: the first left columns aligned left, the rest (numbers)
// right, headers kept as written, nothing wrapped. what names the table
// in errors.
func alignedTable(w io.Writer, what string, header []string, rows [][]string, left int, markdown bool) error {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
		if i < left {
			align[i] = tw.AlignLeft
		}
	}
	opts := []tablewriter.Option{
		// Keep the headers as written ("events/s" would be mangled).
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	if !markdown {
		// For a terminal, each header word on a line of its own: the
		// columns are then as wide as their numbers, not their titles.
		header = slices.Clone(header)
		for i, h := range header {
			header[i] = strings.ReplaceAll(h, " ", "\n")
		}
	}
	t.Header(header)
	for _, row := range rows {
		if markdown {
			row = mdCells(row)
		}
		if err := t.Append(row); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// storesIntro is the paragraph above the store table.
func storesIntro(sb *metrics.StoreBench) string {
	var queries []string
	for _, r := range sb.Runs {
		if len(queries) == 0 || queries[len(queries)-1] != r.Query {
			queries = append(queries, r.Query)
		}
	}
	agree := "Both backends produced identical results: every summary counter and every timeseries row and progress line (wall-clock fields aside)."
	if !sb.Identical {
		agree = "The file says the backends did NOT produce identical results; its numbers compare different computations."
	}
	runs := ""
	if n := repetitions(sb); n > 1 {
		runs = fmt.Sprintf(" Each backend ran the scenario %d times, taking turns with the other; wall-clock numbers are the median, with the range of the runs.", n)
	}
	return fmt.Sprintf("`simulate bench-stores` ran the %d %s of scenario %s (seed %d) on both of the simulator's own state store backends, "+
		"one query at a time: memory, checkpointed every batch like Spark's HDFS-backed store, and Pebble, "+
		"which stands in for RocksDB. These measure the simulator's Go stores on this machine, not Spark's: "+
		"a scenario with a spark: block gets Spark's providers compared, as modelled. %s%s",
		len(queries), plural(len(queries), "query", "queries"), sb.Scenario, sb.Seed, agree, runs)
}

// repetitions is how many runs each backend's wall-clock numbers rest on.
func repetitions(sb *metrics.StoreBench) int {
	n := 1
	for _, r := range sb.Runs {
		n = max(n, len(r.EventsPerSecondRuns))
	}
	return n
}

// StoresVerdict is the line on whether the backends' speeds differ
// beyond the machine's noise: "" when, for every query, the ranges of the
// two backends' runs are apart; otherwise which queries' ranges overlap
// (or that one run each gives no range), and what to do about it.
func StoresVerdict(sb *metrics.StoreBench) string {
	if len(sb.Runs) == 0 {
		return ""
	}
	if repetitions(sb) < 2 {
		return "One run per backend: no range tells a speed difference from this machine's noise; rerun with --repeat 5 on an idle machine before claiming one."
	}
	ranges := map[string]map[string][2]float64{}
	var order []string
	for _, r := range sb.Runs {
		runs := r.EventsPerSecondRuns
		if len(runs) == 0 {
			runs = []float64{r.EventsPerSecond}
		}
		if ranges[r.Query] == nil {
			ranges[r.Query] = map[string][2]float64{}
			order = append(order, r.Query)
		}
		ranges[r.Query][r.Store] = [2]float64{slices.Min(runs), slices.Max(runs)}
	}
	var overlap []string
	for _, q := range order {
		m, okM := ranges[q]["memory"]
		p, okP := ranges[q]["pebble"]
		if okM && okP && m[0] <= p[1] && p[0] <= m[1] {
			overlap = append(overlap, q)
		}
	}
	if len(overlap) == 0 {
		return ""
	}
	return fmt.Sprintf("The speed ranges of the two backends overlap for %s: no speed difference can be claimed on this machine; rerun with --repeat 5 on an idle one.", strings.Join(overlap, ", "))
}

// StoresTimes is the line on the whole runs' CPU time beside their wall
// time; "" for a file without them.
func StoresTimes(sb *metrics.StoreBench) string {
	if len(sb.Backends) == 0 {
		return ""
	}
	var parts []string
	for _, b := range sb.Backends {
		parts = append(parts, fmt.Sprintf("%s %s CPU%s in %s wall%s", b.Store,
			formatSeconds(b.CPUSeconds), spread(b.CPUSecondsRuns, formatSeconds),
			formatSeconds(b.WallSeconds), spread(b.WallSecondsRuns, formatSeconds)))
	}
	return "CPU beside wall time, whole runs (every query, the generator and the accounting too; CPU time is user plus system of the process, less disturbed than wall time by what else the machine runs): " +
		strings.Join(parts, "; ") + "."
}

// storesNotes says how each number of the store table was measured.
func storesNotes(sb *metrics.StoreBench) []string {
	var first []string
	if v := StoresVerdict(sb); v != "" {
		first = append(first, v)
	}
	if t := StoresTimes(sb); t != "" {
		first = append(first, t)
	}
	return append(first, storesMeasureNotes(sb)...)
}

// storesMeasureNotes says how each number of the store table was measured.
func storesMeasureNotes(sb *metrics.StoreBench) []string {
	m := sb.Machine
	return []string{
		fmt.Sprintf("sim speed: the simulator's own speed with that backend, input rows divided by the engine's wall-clock time (micro-batches and their checkpoint commits; not the generator or the ground-truth accounting), "+
			"minus the time the bench's own measurements took inside it. Wall clock, so machine-dependent: measured on %s/%s, %d CPUs, GOMAXPROCS %d, %s, "+
			"with whatever else the machine ran at the time. Compare the backends with each other, not with another machine.",
			m.GOOS, m.GOARCH, m.CPUs, m.GOMAXPROCS, m.GoVersion),
		"One query at a time: the jobs of each run ran one after the other (one worker), the backends taking turns (memory, pebble, memory, ...), so that no other job's heap or CPU mixes into a measurement and a slow spell of the machine falls on both.",
		"peak state (model): the largest state of the run in Spark's UnsafeRow bytes per entry (metrics.EntryBytes) times the keys held; the same for both backends, since both hold the same keys.",
		"peak Go heap (memory backend): the Go heap after a forced garbage collection, minus the same measured when the job opened its store, sampled at every batch commit where the job's state had grown 5% past the last sample, and at the end. " +
			"It is the memory the in-memory store really takes (hash table, key arena, expiry index, the batch's change log), plus the job's small bookkeeping (rows in flight, timeseries rows).",
		"peak on disk, peak memtable (Pebble): the store's metrics, sampled after every commit: on disk, Pebble's own files (DiskSpaceUsage: sstables, MANIFEST; its WAL is off) plus the changelogs since the last flush; memtable, the keys held in memory until the next flush (the overlay) plus Pebble's memtable (range deletions only). " +
			"Bytes on disk are not memory: the chart draws them in a panel of their own.",
		"checkpoint/batch: every byte the stores wrote to their checkpoint, divided by the batches, counted alike for both: the log of every batch plus the compacted state (the column after it). " +
			"Memory: a delta per batch (a put per key added, one record per eviction: the watermark it ran with, not the keys it removed), appended as a framed record to a delta log that a new snapshot starts afresh, and full snapshots, written by a background goroutine from a frozen view of the store, " +
			"at least 10 versions apart (Spark's minDeltasForSnapshot) and only once the deltas since the last one hold as many bytes as it did. " +
			"Pebble: Pebble's WAL is off; a changelog file per batch (the keys added and the evictions), and the sstables of its flushes, which run in the background once the keys held in memory reach the memtable size or 1000 batches passed. " +
			"A Pebble that never flushed in the run has written changelogs only: its keys are still in memory, and a longer run writes them again as sstables.",
		"recovery: after the run, the query's stores were reopened from their last checkpoint, timed: the memory store rebuilds its state from the newest snapshot and the deltas after it, Pebble reopens its database at its last flush and replays the changelogs after it. " +
			"Each reopened store was checked to hold the rows and version of the end of the run. The files were in the OS page cache; a cold start reads them from disk.",
		"Both stores write their compacted state off the batch's critical path, as Spark's maintenance task does for the HDFS-backed store; Commit writes the batch's delta or changelog (and, for memory, freezes the view a snapshot starts from), and the commit share (stores.md, under Where the engine time went) shows what that costs here.",
	}
}

// storesTimeRows breaks each run's engine time down, for stores.md.
func storesTimeRows(sb *metrics.StoreBench) [][]string {
	var rows [][]string
	for _, r := range sb.Runs {
		rows = append(rows, []string{
			r.Query, r.Store, interval.Count(r.InputRows), interval.Count(r.Batches),
			formatSeconds(r.EngineSeconds), formatSeconds(r.CommitSeconds),
			interval.Percent(r.CommitSeconds / math.Max(r.EngineSeconds, 1e-9)),
			formatSeconds(r.MeasureSeconds), interval.Bytes(r.CheckpointBytes),
			interval.Count(r.RecoveredRows),
		})
	}
	return rows
}

// storesMarkdown writes stores.md.
func storesMarkdown(b *bytes.Buffer, sb *metrics.StoreBench) error {
	fmt.Fprintf(b, "# State store backends: %s\n\n%s\n\n", mdText(sb.Scenario), mdText(storesIntro(sb)))
	if err := StoreTable(b, sb, true); err != nil {
		return err
	}
	b.WriteString("\n![State store backends](stores.png)\n\nAlso as [stores.svg](stores.svg); every number is in [stores.json](stores.json).\n\n")
	b.WriteString("## Where the engine time went\n\n")
	b.WriteString("| query | store | input rows | batches | engine time | in commit | commit share | measurement (subtracted) | checkpoint bytes | recovered rows |\n")
	b.WriteString("|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, row := range storesTimeRows(sb) {
		fmt.Fprintf(b, "| %s |\n", strings.Join(mdCells(row), " | "))
	}
	b.WriteString("\n## How each number was measured\n\n")
	for _, n := range storesNotes(sb) {
		fmt.Fprintf(b, "- %s\n", mdText(n))
	}
	return nil
}

// readStores reads dir/stores.json; nil, and no error, without one.
func readStores(dir string) (*metrics.StoreBench, error) {
	sb, err := metrics.ReadStoreBench(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return sb, err
}

// storesSection is the title of the section a stores.json adds; "" for
// none.
func storesSection(sb *metrics.StoreBench) string {
	switch {
	case sb == nil:
		return ""
	case len(sb.Spark) > 0:
		return providersTitle
	}
	return "State store backends"
}

// renderStores adds the store comparison sb (stores.json; nil for none)
// to a report: for the simulator's backends it writes stores.png,
// stores.svg and stores.md, and inserts a section into report.md (md)
// and report.html (page) before their charts; for Spark's providers, the
// section only.
func renderStores(dir string, sb *metrics.StoreBench, md, page *bytes.Buffer) error {
	if sb == nil {
		return nil
	}
	if len(sb.Spark) > 0 {
		return renderProviders(sb, md, page)
	}
	d := storesChart(sb)
	png, err := renderPNG(d)
	if err != nil {
		return fmt.Errorf("%s: chart stores.png: %w", dir, err)
	}
	svg, err := renderSVG(d)
	if err != nil {
		return fmt.Errorf("%s: chart stores.svg: %w", dir, err)
	}
	var smd bytes.Buffer
	if err := storesMarkdown(&smd, sb); err != nil {
		return fmt.Errorf("%s: stores.md: %w", dir, err)
	}
	for name, data := range map[string][]byte{"stores.png": png, "stores.svg": svg, "stores.md": smd.Bytes()} {
		if err := metrics.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("writing report: %w", err)
		}
	}

	var sec bytes.Buffer
	fmt.Fprintf(&sec, "## State store backends\n\n%s\n\n", mdText(storesIntro(sb)))
	if err := StoreTable(&sec, sb, true); err != nil {
		return err
	}
	sec.WriteString("\n![State store backends](stores.png)\n\n")
	sec.WriteString("sim speed is the simulator's own, wall clock, machine-dependent. How each number was measured, and where the engine time went: [stores.md](stores.md).\n\n")
	insertBefore(md, "## Charts\n", sec.Bytes())

	var h bytes.Buffer
	t, err := template.New("stores").Parse(storesHTML())
	if err != nil {
		return err
	}
	err = t.Execute(&h, map[string]any{
		"Intro":  strings.ReplaceAll(storesIntro(sb), "`", ""),
		"Header": storesHeader(),
		"Rows":   storesRows(sb),
		"SVG":    inlineSVG(svg),
		"Notes":  storesNotes(sb),
	})
	if err != nil {
		return fmt.Errorf("%s: report.html: %w", dir, err)
	}
	insertBefore(page, `<h2 id="charts">Charts</h2>`, h.Bytes())
	return nil
}

// insertBefore inserts sec into b before the first occurrence of mark, or
// at the end when mark is missing.
func insertBefore(b *bytes.Buffer, mark string, sec []byte) {
	s := b.Bytes()
	i := bytes.Index(s, []byte(mark))
	if i < 0 {
		b.Write(sec)
		return
	}
	out := make([]byte, 0, len(s)+len(sec))
	out = append(append(append(out, s[:i]...), sec...), s[i:]...)
	b.Reset()
	b.Write(out)
}

// storesHTML is the store section of report.html, in its styles.
func storesHTML() string {
	return `<h2 id="state-store-backends">State store backends</h2>
<p>{{.Intro}}</p>
<div class="table-wrap">
<table>
<thead><tr>{{range $i, $h := .Header}}<th class="{{if lt $i 2}}text{{else}}num{{end}}">{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range $i, $c := .}}<td class="{{if lt $i 2}}text{{else}}num{{end}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</div>
<figure aria-label="State store backends">
{{.SVG}}
<figcaption>sim speed is the simulator's own, wall clock, machine-dependent. Details in stores.md.</figcaption>
</figure>
<ul class="findings">
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>

`
}

// barSeries is one series of a grouped bar chart, drawn in data units (a
// gonum BarChart takes its width in canvas units, which would have to be
// guessed before the layout is known).
type barSeries struct {
	xs, ys []float64
	// width is the bar width in x data units.
	width  float64
	fill   color.Color
	labels []string
	// lo and hi, when set, are each bar's range (the runs' min and max),
	// drawn as a whisker over it.
	lo, hi []float64
}

// Plot implements plot.Plotter.
func (s *barSeries) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	st := sans(7.5, false)
	st.XAlign, st.YAlign = draw.XCenter, draw.YBottom
	for i, y := range s.ys {
		x0, x1 := trX(s.xs[i]-s.width/2), trX(s.xs[i]+s.width/2)
		top := trY(y)
		if y > 0 {
			r := vg.Rectangle{Min: vg.Point{X: x0, Y: trY(0)}, Max: vg.Point{X: x1, Y: top}}
			c.SetColor(s.fill)
			c.Fill(r.Path())
		}
		if i < len(s.hi) && s.hi[i] > s.lo[i] {
			mid, cap := (x0+x1)/2, (x1-x0)/4
			ls := draw.LineStyle{Color: color.Black, Width: vg.Points(0.9)}
			lo, hi := trY(s.lo[i]), trY(s.hi[i])
			c.StrokeLine2(ls, mid, lo, mid, hi)
			c.StrokeLine2(ls, mid-cap, lo, mid+cap, lo)
			c.StrokeLine2(ls, mid-cap, hi, mid+cap, hi)
			top = max(top, hi)
		}
		if i < len(s.labels) && s.labels[i] != "" {
			c.FillText(st, vg.Point{X: (x0 + x1) / 2, Y: top + vg.Points(1.5)}, s.labels[i])
		}
	}
}

// DataRange implements plot.DataRanger.
func (s *barSeries) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for i, x := range s.xs {
		xmin, xmax = min(xmin, x-s.width/2), max(xmax, x+s.width/2)
		ymax = max(ymax, s.ys[i])
		if i < len(s.hi) {
			ymax = max(ymax, s.hi[i])
		}
	}
	return xmin, xmax, 0, ymax
}

// hLine is a horizontal line segment in data units,
// with an optional label above its left end.
type hLine struct {
	x0, x1, y float64
	style     draw.LineStyle
	label     string
}

// Plot implements plot.Plotter.
func (l *hLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	c.StrokeLine2(l.style, trX(l.x0), trY(l.y), trX(l.x1), trY(l.y))
	if l.label != "" {
		st := sans(7.5, false)
		st.XAlign, st.YAlign = draw.XLeft, draw.YBottom
		c.FillText(st, vg.Point{X: trX(l.x0), Y: trY(l.y) + vg.Points(1.5)}, l.label)
	}
}

// barThumb is a legend entry for a bar colour.
type barThumb struct{ fill color.Color }

// Thumbnail implements plot.Thumbnailer.
func (t barThumb) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	r.Min.X += vg.Points(4)
	r.Max.X -= vg.Points(4)
	c.SetColor(t.fill)
	c.Fill(r.Path())
}

// byteUnit picks the unit of a bytes axis from its largest value.
func byteUnit(maxBytes float64) (name string, size float64) {
	switch {
	case maxBytes >= 1<<30:
		return "GiB", 1 << 30
	case maxBytes >= 1<<20:
		return "MiB", 1 << 20
	}
	return "KiB", 1 << 10
}

// storesChart draws, per query, the simulator's speed with each of its
// backends (top), the memory each held at its peak (middle: the memory
// backend's measured Go heap beside Pebble's memtable, and the model) and,
// in a panel and a colour of their own, Pebble's bytes on disk (bottom):
// disk is never drawn beside memory as if the two compared.
func storesChart(sb *metrics.StoreBench) drawing {
	var queries []string
	mem, peb := map[string]metrics.StoreRun{}, map[string]metrics.StoreRun{}
	for _, r := range sb.Runs {
		if _, ok := mem[r.Query]; !ok {
			if _, ok := peb[r.Query]; !ok {
				queries = append(queries, r.Query)
			}
		}
		if r.Store == "pebble" {
			peb[r.Query] = r
		} else {
			mem[r.Query] = r
		}
	}
	cs := seriesColors()
	blue, vermillion, green := cs[0], cs[1], cs[2]
	val := func(p *int64) float64 {
		if p == nil {
			return 0
		}
		return float64(*p)
	}
	type series struct {
		name  string
		fill  color.Color
		value func(q string) float64
		// runs, when set, are the repetitions' values: a whisker.
		runs func(q string) []float64
	}
	rate := []series{
		{"memory", blue, func(q string) float64 { return mem[q].EventsPerSecond }, func(q string) []float64 { return mem[q].EventsPerSecondRuns }},
		{"pebble", vermillion, func(q string) float64 { return peb[q].EventsPerSecond }, func(q string) []float64 { return peb[q].EventsPerSecondRuns }},
	}
	size := []series{
		{"memory: Go heap", blue, func(q string) float64 { return val(mem[q].GoHeapPeakBytes) }, nil},
		{"pebble: memtable", vermillion, func(q string) float64 { return val(peb[q].MemTablePeakBytes) }, nil},
	}
	disk := []series{
		{"pebble: on disk", green, func(q string) float64 { return val(peb[q].DiskPeakBytes) }, nil},
	}
	// The model is the same for both backends (they hold the same keys):
	// a line across each query's group, not a bar of either backend.
	model := func(q string) float64 { return float64(max(mem[q].ModelPeakBytes, peb[q].ModelPeakBytes)) }
	maxBytes := 1.0
	for _, q := range queries {
		maxBytes = max(maxBytes, model(q))
		for _, s := range size {
			maxBytes = max(maxBytes, s.value(q))
		}
	}
	unit, div := byteUnit(maxBytes)
	maxDisk := 1.0
	for _, q := range queries {
		maxDisk = max(maxDisk, disk[0].value(q))
	}
	diskUnit, diskDiv := byteUnit(maxDisk)
	modelStyle := draw.LineStyle{Color: color.Black, Width: vg.Points(1.3), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	items := []legendItem{
		{name: "memory backend (sim speed; Go heap)", thumbs: []plot.Thumbnailer{barThumb{blue}}},
		{name: "pebble backend (sim speed; memtable)", thumbs: []plot.Thumbnailer{barThumb{vermillion}}},
		{name: "pebble on disk (not memory)", thumbs: []plot.Thumbnailer{barThumb{green}}},
		{name: "modelled state (UnsafeRow bytes, both)", thumbs: []plot.Thumbnailer{lineThumb(modelStyle)}},
	}
	title := "The simulator's state store backends: speed and peak state per query"
	speedNote := "median of the runs, whisker their range"
	if repetitions(sb) < 2 {
		speedNote = "one run each"
	}
	subtitle := fmt.Sprintf("%s, seed %d; sim speed: wall clock on %d CPUs, %s", sb.Scenario, sb.Seed, sb.Machine.CPUs, speedNote)
	panel := func(ss []series, yLabel string, scale float64, label func(v float64) string, xLabel bool) *plot.Plot {
		xl := ""
		if xLabel {
			xl = "query"
		}
		p := newPlot(xl, yLabel)
		// A group of bars per query, 80% of the slot wide.
		w := 0.8 / float64(len(ss))
		top := 0.0
		for k, s := range ss {
			b := &barSeries{width: w * 0.92, fill: s.fill}
			for i, q := range queries {
				v := s.value(q) / scale
				b.xs = append(b.xs, float64(i)+(float64(k)-float64(len(ss)-1)/2)*w)
				b.ys = append(b.ys, v)
				b.labels = append(b.labels, label(v))
				top = max(top, v)
				if s.runs != nil {
					lo, hi := v, v
					if runs := s.runs(q); len(runs) > 1 {
						lo, hi = slices.Min(runs)/scale, slices.Max(runs)/scale
					}
					b.lo, b.hi = append(b.lo, lo), append(b.hi, hi)
					top = max(top, hi)
				}
			}
			p.Add(b)
		}
		var ticks plot.ConstantTicks
		for i, q := range queries {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: q})
		}
		p.X.Tick.Marker = ticks
		p.X.Tick.Width = 0
		p.X.Tick.Length = 0
		p.X.Min, p.X.Max = -0.5, float64(len(queries))-0.5
		// Headroom for the value labels above the bars.
		p.Y.Min, p.Y.Max = 0, max(top*1.15, 1e-9)
		return p
	}
	bytesLabel := func(v float64) string {
		if v == 0 {
			return ""
		}
		return trimFloat(v)
	}
	return drawing{w: 8 * vg.Inch, h: 8 * vg.Inch, draw: func(dc draw.Canvas) error {
		area := frame(dc, title, subtitle, items)
		top := panel(rate, "sim speed (rows/s)", 1, humanNumber, false)
		middle := panel(size, "peak memory ("+unit+")", div, bytesLabel, false)
		for i, q := range queries {
			y := model(q) / div
			l := &hLine{x0: float64(i) - 0.42, x1: float64(i) + 0.42, y: y, style: modelStyle, label: "model " + trimFloat(y)}
			middle.Add(l)
			middle.Y.Max = max(middle.Y.Max, l.y*1.08)
		}
		bottom := panel(disk, "pebble on disk ("+diskUnit+")", diskDiv, bytesLabel, true)
		cs := stack([]*plot.Plot{top, middle, bottom}, area, vg.Points(14))
		top.Draw(cs[0])
		middle.Draw(cs[1])
		bottom.Draw(cs[2])
		return nil
	}}
}
