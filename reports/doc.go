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
// Its memory is bounded by what it draws, never by the length of the run:
// it streams timeseries.csv and spark.csv, keeps every batch of a query up
// to 8,192 and past that, per bucket of processing time (1,024 buckets
// at most), the first and last batch and those holding the least and the
// greatest value of everything drawn (series.go), so peaks survive and a
// finding places a moment to within a bucket.
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
// cluster table and the charts of sparkcharts.go: batch-duration (on a log
// axis when batches stay far under the trigger), processing-lag,
// partition-rows, executor-memory and, with RocksDB, executor-disk.
package reports
