package metrics

// ProgressLine is one line of progress/<query>.jsonl: one executed
// micro-batch in the shape of Spark's StreamingQueryProgress, with the
// batch's processing time. The replay output (sim/spark/replay) prints the same
// parts with the rows a batch emitted instead of its time.
type ProgressLine struct {
	BatchID int64 `json:"batchId"`
	// Timestamp is the batch's processing time (FormatMillis).
	Timestamp    string `json:"timestamp"`
	NoData       bool   `json:"noData"`
	NumInputRows int    `json:"numInputRows"`
	// EventTime is set for a query with a watermark.
	EventTime *EventTimeStats `json:"eventTime,omitempty"`
	// StateOperators lists the dedup operators as Spark does: from the
	// sink back to the source.
	StateOperators []StateOperator `json:"stateOperators"`
	Sink           SinkProgress    `json:"sink"`
}

// EventTimeStats is the eventTime part of a progress record.
type EventTimeStats struct {
	// Watermark is the watermark the batch ran with (FormatMillis).
	Watermark string `json:"watermark"`
}

// StateOperator is one entry of stateOperators: a dedup operator's
// counters for one batch, named as in Spark's StateOperatorProgress.
type StateOperator struct {
	OperatorName              string `json:"operatorName"`
	NumRowsTotal              int64  `json:"numRowsTotal"`
	NumRowsUpdated            int64  `json:"numRowsUpdated"`
	NumRowsRemoved            int64  `json:"numRowsRemoved"`
	NumRowsDroppedByWatermark int64  `json:"numRowsDroppedByWatermark"`
	// CustomMetrics holds numDroppedDuplicateRows.
	CustomMetrics map[string]int64 `json:"customMetrics"`
}

// SinkProgress is the sink part of a progress record.
type SinkProgress struct {
	NumOutputRows int `json:"numOutputRows"`
}
