// Package reports turns a results folder (summary.json and timeseries.csv,
// see metrics) into what a design review reads: charts drawn with
// gonum/plot as PNG and SVG, the per-query summary table (terminal and
// Markdown), findings written from the numbers, and report.md and a
// self-contained report.html.
//
// It only reads results files, never reruns anything, so `simulate report`
// can redraw a committed experiment. Findings read the traffic window only
// (metrics.Windows), name the cause of every loss and the saturation of
// every saturated query, and flag as unexpected only what the semantics
// cannot explain; every chart draws a query in its flavour's colour and
// dash (style.go). Every output is a pure function of
// those files: rendering the same folder twice writes byte-identical files.
//
// The charts of a results folder:
//
//	state-rows.{png,svg}        state rows over processing time, one line per query
//	state-bytes.{png,svg}       the same in modelled bytes
//	watermark.{png,svg}         the watermark and the watermark lag over processing time
//	horizon-tradeoff.{png,svg}  with a sweep: delay against missed duplicates,
//	                            false drops and peak state
//
// With spark.csv (a scenario with a spark: block) it adds the Spark
// cluster table and the charts of sparkcharts.go: batch-duration,
// processing-lag and partition-rows.
package reports
