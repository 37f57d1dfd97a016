package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// This file holds what a report adds when its run had a spark: block
// (docs/spark-model.md): the cluster table from the summary's spark
// fields, the findings on falling behind and skew, and the rows of
// spark.csv the spark charts draw (sparkcharts.go). A results folder
// without spark.csv and without spark fields renders none of it.

// skewFinding is the skew (peakRowsMax / peakRowsMean) from which a
// finding names it: the fullest partition holds at least twice the mean,
// so the executor holding it needs about twice the memory the even split
// would suggest, and its tasks take twice as long.
const skewFinding = 2.0

// markDowntime adds a marker for each span of the scenario's
// spark.downtime, in which the query did not run, to a copy of the
// summary's markers: charts shade it as they shade a stall. Results
// without one keep their summary as it is.
func (res *results) markDowntime() {
	if res.sc.Spark == nil || len(res.sc.Spark.Downtime) == 0 {
		return
	}
	s := *res.sum
	s.Markers = slices.Clone(s.Markers)
	for _, d := range res.sc.Spark.Downtime {
		at, span := seconds(d.At), seconds(d.For)
		if at <= 0 || span <= 0 {
			continue
		}
		until := at + span
		s.Markers = append(s.Markers, metrics.Marker{Kind: downtimeKind, At: at, Until: &until, Label: "query down (spark.downtime)"})
	}
	res.sum = &s
}

// downtimeKind is the marker kind of a span of spark.downtime.
const downtimeKind = "downtime"

// downtimes returns the spans of spark.downtime, in seconds after the
// start.
func (res *results) downtimes() [][2]float64 {
	var out [][2]float64
	for _, m := range res.sum.Markers {
		if m.Kind == downtimeKind && m.Until != nil {
			out = append(out, [2]float64{m.At, *m.Until})
		}
	}
	return out
}

// holdOverDowntime draws a value that no batch changed during a
// downtime (state rows, say) as a step: the last value before the span
// holds until the first batch after it, rather than a line sloping across
// the span as if it had changed gradually. x is in units of unit seconds.
// Without a downtime, xys is returned as is.
func (res *results) holdOverDowntime(xys plotter.XYs, unit float64) plotter.XYs {
	spans := res.downtimes()
	if len(spans) == 0 {
		return xys
	}
	out := make(plotter.XYs, 0, len(xys)+len(spans))
	for i, p := range xys {
		if i > 0 {
			prev := xys[i-1]
			for _, sp := range spans {
				if end := sp[1] / unit; prev.X < end && p.X >= end && p.X > prev.X {
					out = append(out, plotter.XY{X: p.X, Y: prev.Y})
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// splitAtDowntime cuts a line of per-batch values (x in seconds) where
// it crosses a downtime, in which no batch ran to give one.
func (res *results) splitAtDowntime(xys plotter.XYs) []plotter.XYs {
	spans := res.downtimes()
	var out []plotter.XYs
	start := 0
	for i := 1; i < len(xys); i++ {
		for _, sp := range spans {
			if xys[i-1].X < sp[1] && xys[i].X >= sp[1] && xys[i-1].X <= sp[0] {
				out = append(out, xys[start:i])
				start = i
				break
			}
		}
	}
	return append(out, xys[start:])
}

// readSpark streams dir/spark.csv into the runs, grouped as the
// timeseries is (the same keys, the same rule for a group that repeats;
// rows of a group without a summary entry are ignored); it does
// nothing, and no error, when the folder has none (a run without a
// spark: block).
func (res *results) readSpark(dir string) error {
	a := res.sparkAttacher()
	err := metrics.ScanSparkFile(dir, func(b *metrics.SparkBatch) error {
		a.add(b)
		return nil
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s is not a readable results folder: %w", dir, err)
	}
	a.done()
	return nil
}

// sparkAttacher groups spark.csv's rows one at a time, each run's in a
// series (bounded memory: exactBatches).
type sparkAttacher struct {
	byKey  map[runKey]*run
	ended  map[*run]bool
	series map[*run]*series[metrics.SparkBatch]
}

func (res *results) sparkAttacher() *sparkAttacher {
	a := &sparkAttacher{byKey: make(map[runKey]*run, len(res.runs)), ended: map[*run]bool{}, series: map[*run]*series[metrics.SparkBatch]{}}
	for _, r := range res.runs {
		a.byKey[runKey{r.sum.Name, delayKey(r.sum.Delay)}] = r
		a.series[r] = newSparkSeries()
	}
	return a
}

func (a *sparkAttacher) add(b *metrics.SparkBatch) {
	r := a.byKey[runKey{b.Query, b.Delay}]
	if r == nil || a.ended[r] {
		return
	}
	sr := a.series[r]
	if last, ok := sr.last(); ok && b.StartMs < last.StartMs {
		a.ended[r] = true
		return
	}
	sr.add(b)
}

func (a *sparkAttacher) done() {
	for r, sr := range a.series {
		if recs := sr.records(); len(recs) > 0 {
			r.spark = recs
		}
	}
}

// hasSparkSummary reports whether some query's summary has the spark
// fields.
func (res *results) hasSparkSummary() bool {
	for _, r := range res.runs {
		if r.sum.SparkSummary != nil {
			return true
		}
	}
	return false
}

// sparkHeader names the columns of the cluster table.
func sparkHeader() []string {
	return []string{"query", "delay", "partitions", "batch p50 / p99 / max", "max processing lag",
		"falls behind from", "skew (max/mean rows)", "executor peak memory", "executor peak disk"}
}

// sparkRows returns one row of the cluster table per summary entry with
// spark fields, in the summary's order.
func (res *results) sparkRows() [][]string {
	var rows [][]string
	for _, r := range res.runs {
		q := r.sum
		sp := q.SparkSummary
		if sp == nil {
			continue
		}
		dur := "instantaneous"
		if d := sp.BatchDurationMs; d != nil {
			dur = fmt.Sprintf("%s / %s / %s", formatMs(d.P50), formatMs(d.P99), formatMs(d.Max))
		}
		lag := "no data batch"
		if l := sp.MaxProcessingLagSeconds; l != nil {
			lag = formatMs(*l * 1000)
		}
		behind := "keeps up"
		if b := sp.FallingBehindSinceSeconds; b != nil {
			behind = formatOffset(*b)
		}
		skew := "no state"
		if sp.Partitions.PeakRowsMean > 0 {
			skew = fmt.Sprintf("%.2f (%s / %s)", float64(sp.Partitions.PeakRowsMax)/sp.Partitions.PeakRowsMean,
				interval.Count(sp.Partitions.PeakRowsMax), meanRows(sp.Partitions.PeakRowsMean))
		}
		rows = append(rows, []string{
			q.Name, formatDelay(q.Delay), interval.Count(int64(sp.Partitions.Count)), dur, lag, behind, skew,
			interval.Bytes(sp.ExecutorPeakMemoryBytes), interval.Bytes(sp.ExecutorPeakDiskBytes),
		})
	}
	return rows
}

// sparkNote explains the cluster table.
func (res *results) sparkNote() string {
	return fmt.Sprintf("Modelled, not measured (docs/spark-model.md): batch durations from the scenario's cost block against the %s trigger, "+
		"a processing lag is a batch's end minus the arrival of its oldest row, a query falls behind when a run of batches that overran "+
		"their trigger lasts to the end of the traffic, skew is the fullest partition's peak state rows over the mean's peak, "+
		"and the executor peaks are state memory (heap for hdfs, native for rocksdb) and local disk of the busiest executor. "+
		"The cost defaults are estimates until calibrated from a real job's progress log.", formatSpan(res.triggerSeconds()))
}

// writeSparkMarkdown writes the cluster section of report.md.
func (res *results) writeSparkMarkdown(b *bytes.Buffer) {
	b.WriteString("## Spark cluster (modelled)\n\n")
	b.WriteString("| " + strings.Join(sparkHeader(), " | ") + " |\n")
	b.WriteString("|:--|" + strings.Repeat("--:|", len(sparkHeader())-1) + "\n")
	for _, row := range res.sparkRows() {
		b.WriteString("| " + strings.Join(mdCells(row), " | ") + " |\n")
	}
	fmt.Fprintf(b, "\n%s\n\n", res.sparkNote())
}

// formatMs renders milliseconds for a reader: "420 ms", "4.2 s", "1m30s".
func formatMs(ms float64) string {
	switch {
	case ms < 1000:
		return humanNumber(math.Round(ms*10)/10) + " ms"
	case ms < 60_000:
		return fmt.Sprintf("%.3g s", ms/1000)
	}
	return formatSpan(ms / 1000)
}

// sparkFindings is what the spark fields of one run show: that the
// query falls behind, and from when; that its state is skewed over the
// partitions.
func (res *results) sparkFindings(r *run) []finding {
	sp := r.sum.SparkSummary
	if sp == nil {
		return nil
	}
	var out []finding
	trig := formatSpan(res.triggerSeconds())
	if b := sp.FallingBehindSinceSeconds; b != nil {
		s := fmt.Sprintf("%s falls behind from %s: from then to the end of the traffic every batch overran the %s trigger, the next one starting at once",
			subject, formatOffset(*b), trig)
		if d := sp.BatchDurationMs; d != nil {
			s += fmt.Sprintf(" (batches up to %s", formatMs(d.Max))
			if l := sp.MaxProcessingLagSeconds; l != nil {
				s += fmt.Sprintf(", rows waiting up to %s", formatMs(*l*1000))
			}
			s += ")"
		}
		s += ". " + scanWords(r.sum) + ": shorten the delay, or add cores, with the partitions to use them."
		out = append(out, named(r.sum.Name, s))
	} else if d := sp.BatchDurationMs; d != nil && d.Max > 1000*res.triggerSeconds() {
		out = append(out, named(r.sum.Name, fmt.Sprintf("%s overran its %s trigger at times (its longest batch took %s) but caught up before the traffic ended.",
			subject, trig, formatMs(d.Max))))
	}
	if p := sp.Partitions; p.PeakRowsMean > 0 && float64(p.PeakRowsMax) >= skewFinding*p.PeakRowsMean {
		out = append(out, named(r.sum.Name, fmt.Sprintf("%s's state is skewed over its %s partitions: the fullest held %s rows at its peak, %.1f times the mean's peak of %s; "+
			"the executor holding it needs that much more state memory, and its task is the batch's slowest. A key of few distinct values, such as customer_id, does this: Spark's hash puts every row of one value in one partition.",
			subject, interval.Count(int64(p.Count)), interval.Count(p.PeakRowsMax), float64(p.PeakRowsMax)/p.PeakRowsMean,
			meanRows(p.PeakRowsMean))))
	}
	return out
}

// scanWords says why the query's batches slow as its state grows.
func scanWords(q *metrics.QuerySummary) string {
	if f := flavourOf(q); f == metrics.FlavourWithin || f == metrics.FlavourPairKeyed {
		return "Its eviction scan visits every key of every store on every batch, so its batches slow as its state grows"
	}
	return "Its batches slow as its state and its traffic grow"
}

// meanRows renders a mean number of rows: whole above 100 ("3,024"),
// else with three significant digits ("0.25").
func meanRows(v float64) string {
	if v >= 100 {
		return interval.Count(int64(math.Round(v)))
	}
	return trimFloat(v)
}
