// Package progresslog reads the progress records of real Spark Structured
// Streaming queries (StreamingQueryProgress, one per trigger) in the forms
// users have them:
//
//   - JSON lines: one compact record per line, as a listener that writes
//     progress.json produces;
//   - a JSON array of records, as json.dumps(query.recentProgress) writes;
//   - pretty JSON records one after another, possibly separated by blank
//     lines, as printing progress.prettyJson (or a PySpark progress) does;
//   - a driver log: lines such as
//     "24/05/01 10:00:00 INFO MicroBatchExecution: Streaming query made
//     progress: {" followed by the pretty record over several lines, among
//     any other log lines.
//
// The form is detected from the first character that is not white space
// (see Form). A Reader returns one Progress at a time; ReadAll returns them
// all. Fields that dedupsim does not use (offsets, observed metrics, source
// and sink metrics) are checked to be JSON and skipped.
//
// Every number of a record is an Int or a Float that tells a field that
// was absent (or null) from one that was 0: Spark leaves durationMs.addBatch
// out of a trigger that ran no batch, older versions leave out
// numRowsRemoved or numShufflePartitions, and rates are left out when they
// are not a number.
package progresslog

import "time"

// Progress is one StreamingQueryProgress record: what one trigger of a
// query did. Field names follow Spark's JSON.
type Progress struct {
	// Line is the line of the input where the record's opening brace is.
	Line int
	// ID is the query's id, the same across restarts.
	ID string
	// RunID is the id of one run of the query; a restart gets a new one.
	RunID string
	// Name is the query's name, "" when Spark wrote null.
	Name string
	// Timestamp is when the trigger started.
	Timestamp Time
	// BatchID is the micro-batch's id; the oldest Spark versions leave it
	// out.
	BatchID Int
	// BatchDuration is the trigger's whole duration in milliseconds
	// (left out by older Spark versions).
	BatchDuration Int
	// NumInputRows is the number of rows read in the trigger, over all
	// sources.
	NumInputRows Int
	// InputRowsPerSecond is the rate at which rows arrived.
	InputRowsPerSecond Float
	// ProcessedRowsPerSecond is the rate at which rows were processed.
	ProcessedRowsPerSecond Float
	// DurationMs holds the durations of the trigger's phases.
	DurationMs Durations
	// EventTime holds the event-time statistics and the watermark.
	EventTime EventTime
	// StateOperators has one entry per stateful operator, the one
	// nearest the sink first.
	StateOperators []StateOperator
	// Sources has one entry per streaming source.
	Sources []Source
	// Sink describes the sink; Sink.Present is false when the record has
	// none.
	Sink Sink
}

// Durations are the durations, in milliseconds, of the phases of one
// trigger (Spark's durationMs). A phase that did not run is absent: a
// trigger that found no new data and ran no batch has no AddBatch.
type Durations struct {
	// AddBatch is the time to run the batch through the query and the
	// sink: the part of a trigger that processes rows.
	AddBatch Int
	// GetBatch is the time to build the batch's DataFrame from the
	// sources.
	GetBatch Int
	// LatestOffset is the time to ask the sources for their latest
	// offsets (older versions report getOffset instead, in Other).
	LatestOffset Int
	// QueryPlanning is the time to plan the batch.
	QueryPlanning Int
	// TriggerExecution is the whole trigger, every phase included.
	TriggerExecution Int
	// WalCommit is the time to write the offset log.
	WalCommit Int
	// CommitOffsets is the time to write the commit log.
	CommitOffsets Int
	// Other holds every other phase the record names (getOffset,
	// getEndOffset, setOffsetRange, ...), nil when there is none.
	Other map[string]int64
}

// EventTime is Spark's eventTime map: the watermark the trigger ran with
// and the maximum, minimum and average event time of its rows. A query
// without a watermark has no Watermark; a batch without rows has no Max,
// Min or Avg.
type EventTime struct {
	Watermark Time
	Max       Time
	Min       Time
	Avg       Time
}

// StateOperator is one stateful operator's progress in a trigger
// (StateOperatorProgress). The counters are summed over the operator's
// tasks, one per shuffle partition.
type StateOperator struct {
	// OperatorName is the operator, such as "dedupe",
	// "dedupeWithinWatermark" or "stateStoreSave"; "" when the record
	// leaves it out, as older Spark versions do.
	OperatorName string
	// NumRowsTotal is the number of rows in the state after the batch.
	NumRowsTotal Int
	// NumRowsUpdated is the number of rows the batch put into the state
	// (for a dedup operator, the new keys).
	NumRowsUpdated Int
	// AllUpdatesTimeMs is the time spent updating the state.
	AllUpdatesTimeMs Int
	// NumRowsRemoved is the number of rows the batch evicted.
	NumRowsRemoved Int
	// AllRemovalsTimeMs is the time spent evicting.
	AllRemovalsTimeMs Int
	// CommitTimeMs is the time spent committing the state stores.
	CommitTimeMs Int
	// MemoryUsedBytes is the memory the state stores use.
	MemoryUsedBytes Int
	// NumRowsDroppedByWatermark is the number of input rows dropped as
	// late.
	NumRowsDroppedByWatermark Int
	// NumShufflePartitions is the number of partitions (tasks) of the
	// operator.
	NumShufflePartitions Int
	// NumStateStoreInstances is the number of state stores.
	NumStateStoreInstances Int
	// CustomMetrics holds the store's and operator's own metrics, such as
	// rocksdbCommitWriteBatchLatency, loadedMapCacheHitCount or
	// numDroppedDuplicateRows; nil when there is none.
	CustomMetrics map[string]int64
}

// Source is one source's progress in a trigger (SourceProgress). Its
// offsets and metrics are not kept.
type Source struct {
	// Description names the source, such as "KafkaV2[Subscribe[events]]".
	Description string
	// NumInputRows is the number of rows read from the source.
	NumInputRows Int
	// InputRowsPerSecond is the rate at which rows arrived.
	InputRowsPerSecond Float
	// ProcessedRowsPerSecond is the rate at which rows were processed.
	ProcessedRowsPerSecond Float
}

// Sink is the sink's progress in a trigger (SinkProgress). Its metrics
// are not kept.
type Sink struct {
	// Present is false when the record has no sink.
	Present bool
	// Description names the sink.
	Description string
	// NumOutputRows is the number of rows written; Spark reports -1 for
	// a sink that does not count them.
	NumOutputRows Int
}

// Int is an integer field that may be absent: OK is false, and Value 0,
// when the record leaves the field out or holds null.
type Int struct {
	Value int64
	OK    bool
}

// Float is a number field that may be absent: OK is false, and Value 0,
// when the record leaves the field out or holds null (Spark leaves out a
// rate that is not a number).
type Float struct {
	Value float64
	OK    bool
}

// Time is a timestamp field that may be absent. Raw is the text of the
// record, such as "2024-05-01T10:00:00.000Z"; Time is it parsed (Spark
// writes UTC with milliseconds). OK is false when the field is absent or
// null.
type Time struct {
	Time time.Time
	Raw  string
	OK   bool
}
