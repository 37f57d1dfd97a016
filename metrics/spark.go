package metrics

import (
	"fmt"
	"strconv"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// SparkSummary is what a job's summary gains when its scenario has a
// spark: block (docs/results-format.md): the query in a Spark cluster's
// terms, from the model of sim/spark/sparkmodel. QuerySummary embeds it, so its
// fields sit beside the others in summary.json, and are absent without a
// spark: block.
type SparkSummary struct {
	// BatchDurationMs are the modelled durations of the batches that
	// start in the traffic window (see Windows: the drain's batches are
	// left out); null without a cost block (batches are then
	// instantaneous).
	BatchDurationMs *DurationPercentiles `json:"batchDurationMs"`
	// MaxProcessingLagSeconds is the largest batch end minus the arrival
	// of the batch's oldest row, over the data batches; null when no data
	// batch ran.
	MaxProcessingLagSeconds *float64 `json:"maxProcessingLagSeconds"`
	// FallingBehindSinceSeconds is the processing time, in seconds after
	// the start, at which a run of overrunning batches begins that lasts
	// to the end of the traffic window (through the last batch that
	// starts within it); null when the query keeps up.
	FallingBehindSinceSeconds *float64 `json:"fallingBehindSinceSeconds"`
	// Partitions describes the state's split over shuffle partitions.
	Partitions PartitionSummary `json:"partitions"`
	// ExecutorPeakMemoryBytes is the largest modelled state memory of one
	// executor over the run: JVM heap for the hdfs provider, native
	// memory for rocksdb.
	ExecutorPeakMemoryBytes int64 `json:"executorPeakMemoryBytes"`
	// ExecutorPeakDiskBytes is the largest modelled local disk of one
	// executor's state stores: RocksDB's SST files; 0 for hdfs, whose
	// files are on the checkpoint location.
	ExecutorPeakDiskBytes int64 `json:"executorPeakDiskBytes"`
}

// SparkTrafficFields are the spark fields measured over the traffic
// window (see Windows), listed in Windows.Traffic with a spark: block.
func SparkTrafficFields() []string { return []string{"batchDurationMs"} }

// DurationPercentiles are percentiles of batch durations, in
// milliseconds.
type DurationPercentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// PartitionSummary describes the state's split over partitions: the
// count and the peaks, over the run, of the mean and the largest number
// of state rows in one partition (all dedup operators' stores of that
// partition together). peakRowsMax / peakRowsMean is the skew.
type PartitionSummary struct {
	Count        int     `json:"count"`
	PeakRowsMean float64 `json:"peakRowsMean"`
	PeakRowsMax  int64   `json:"peakRowsMax"`
}

// SparkHeader is the header of spark.csv, written with a spark: block:
// one row per executed micro-batch of every job, like timeseries.csv.
// start and end are RFC 3339 UTC with milliseconds; durationMs is empty
// without a cost block; processingLagSeconds is empty for a no-data
// batch; the partition rows are the state after the batch; the executor
// bytes are the largest executor's during the batch.
var SparkHeader = []string{
	"query", "delay", "batchId", "start", "end", "durationMs", "inputRows",
	"maxPartitionRows", "meanPartitionRows", "processingLagSeconds",
	"executorMemoryBytes", "executorDiskBytes",
}

// SparkRecord is one row of spark.csv.
type SparkRecord struct {
	Query string
	// Delay in seconds; nil without a watermark.
	Delay   *float64
	BatchID int64
	// Start and End are microseconds since the epoch.
	Start, End int64
	// DurationMs is the modelled duration; HasDuration is false without a
	// cost block.
	DurationMs  float64
	HasDuration bool
	InputRows   int64
	// MaxPartitionRows and MeanPartitionRows are state rows per
	// partition after the batch.
	MaxPartitionRows  int64
	MeanPartitionRows float64
	// ProcessingLagSeconds is End minus the oldest row's arrival; HasLag
	// is false for a no-data batch.
	ProcessingLagSeconds float64
	HasLag               bool
	ExecutorMemoryBytes  int64
	ExecutorDiskBytes    int64
}

// Record renders r as a CSV row into dst (reused).
func (r *SparkRecord) Record(dst []string) []string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	dur, lag := "", ""
	if r.HasDuration {
		dur = strconv.FormatFloat(r.DurationMs, 'f', 3, 64)
	}
	if r.HasLag {
		lag = strconv.FormatFloat(r.ProcessingLagSeconds, 'f', 6, 64)
	}
	return append(dst[:0],
		r.Query, formatDelay(r.Delay), strconv.FormatInt(r.BatchID, 10),
		FormatMillis(r.Start/1000), FormatMillis(r.End/1000), dur,
		strconv.FormatInt(r.InputRows, 10), strconv.FormatInt(r.MaxPartitionRows, 10),
		num(r.MeanPartitionRows), lag,
		strconv.FormatInt(r.ExecutorMemoryBytes, 10), strconv.FormatInt(r.ExecutorDiskBytes, 10),
	)
}

// SparkRow is one row of spark.csv as read back: the fields as written.
type SparkRow struct {
	Query, Delay                           string
	BatchID                                int64
	Start, End                             string
	DurationMs                             *float64
	InputRows, MaxPartitionRows            int64
	MeanPartitionRows                      float64
	ProcessingLagSeconds                   *float64
	ExecutorMemoryBytes, ExecutorDiskBytes int64
}

// ParseSparkRow parses one spark.csv row (the header's columns).
func ParseSparkRow(f []string) (SparkRow, error) {
	var r SparkRow
	if len(f) != len(SparkHeader) {
		return r, fmt.Errorf("%d fields, want %d (%v)", len(f), len(SparkHeader), SparkHeader)
	}
	var err error
	ints := []struct {
		dst *int64
		i   int
	}{{&r.BatchID, 2}, {&r.InputRows, 6}, {&r.MaxPartitionRows, 7}, {&r.ExecutorMemoryBytes, 10}, {&r.ExecutorDiskBytes, 11}}
	for _, x := range ints {
		if *x.dst, err = strconv.ParseInt(f[x.i], 10, 64); err != nil {
			return r, fmt.Errorf("%s: want a whole number, got %s", SparkHeader[x.i], fileio.Show(f[x.i]))
		}
	}
	if r.MeanPartitionRows, err = strconv.ParseFloat(f[8], 64); err != nil {
		return r, fmt.Errorf("%s: want a number, got %s", SparkHeader[8], fileio.Show(f[8]))
	}
	opt := func(i int) (*float64, error) {
		if f[i] == "" {
			return nil, nil
		}
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: want a number or nothing, got %s", SparkHeader[i], fileio.Show(f[i]))
		}
		return &v, nil
	}
	if r.DurationMs, err = opt(5); err != nil {
		return r, err
	}
	if r.ProcessingLagSeconds, err = opt(9); err != nil {
		return r, err
	}
	r.Query, r.Delay, r.Start, r.End = f[0], f[1], f[3], f[4]
	return r, nil
}
