// Package metrics measures what each query did against ground truth: which
// duplicates slipped through, which real events were lost and why, how
// much state the query held and how far its watermark lagged. It writes the
// results folder of docs/results-format.md: summary.json, timeseries.csv and
// progress/<query>.jsonl.
package metrics

import (
	"encoding/json"

	"github.com/dedupsim/dedupsim/engines"
)

// ResultsFormat versions the results files.
const ResultsFormat = "dedupsim-results/1"

// Summary is the content of summary.json.
type Summary struct {
	Format string `json:"format"`
	// Scenario is the scenario as run, defaults resolved.
	Scenario json.RawMessage `json:"scenario"`
	// Seed is the seed the run used (the scenario's, or --seed).
	Seed uint64 `json:"seed"`
	// Warnings are what the scenario asks that runs but probably not as
	// meant, one line each as "KEY.PATH: message" (scenario.Warnings);
	// absent when there are none.
	Warnings []string `json:"warnings,omitempty"`
	// Markers are moments and spans worth marking on charts, in processing
	// time: stalls, faults, bad clocks.
	Markers []Marker `json:"markers"`
	// Queries holds one entry per query, or per query and delay in a sweep.
	Queries []QuerySummary `json:"queries"`
}

// Marker is a moment (At) or a span (At to Until) of processing time, in
// seconds after the scenario's start.
type Marker struct {
	// Kind is "stall", "restart", "lose-checkpoint" or "bad-clock".
	Kind  string   `json:"kind"`
	At    float64  `json:"at"`
	Until *float64 `json:"until,omitempty"`
	// Label says what happened, for a legend.
	Label string `json:"label"`
}

// FalseDropCauses splits false drops by cause.
type FalseDropCauses struct {
	// Late counts logical events whose every copy was dropped behind the
	// watermark.
	Late int64 `json:"late"`
	// Collision counts logical events never emitted for any other reason:
	// a copy was dropped as a duplicate of a different event's key (a key
	// too coarse, such as customer_id).
	Collision int64 `json:"collision"`
}

// QuerySummary is one query's (or one query-and-delay's) totals.
//
// Identities that hold exactly for every query:
//
//	inputRows   = emittedRows + droppedByWatermark + droppedDuplicates
//	emittedRows = logicalEvents - falseDrops + missedDuplicates
type QuerySummary struct {
	Name  string `json:"name"`
	Query string `json:"query"`
	// Delay is the query's watermark delay in seconds, null without one.
	Delay *float64 `json:"delay"`
	Store string   `json:"store"`
	// Warnings are the pitfalls `simulate explain` reports for the query.
	Warnings []string `json:"warnings"`

	InputRows      int64 `json:"inputRows"`
	LogicalEvents  int64 `json:"logicalEvents"`
	TrueDuplicates int64 `json:"trueDuplicates"`
	EmittedRows    int64 `json:"emittedRows"`
	// MissedDuplicates counts emitted rows whose logical event had already
	// been emitted.
	MissedDuplicates int64 `json:"missedDuplicates"`
	// FalseDrops counts logical events never emitted.
	FalseDrops         int64           `json:"falseDrops"`
	FalseDropsByCause  FalseDropCauses `json:"falseDropsByCause"`
	DroppedByWatermark int64           `json:"droppedByWatermark"`
	DroppedDuplicates  int64           `json:"droppedDuplicates"`
	// MissedDuplicateRate is missedDuplicates / trueDuplicates (0 when
	// there are no duplicates).
	MissedDuplicateRate float64 `json:"missedDuplicateRate"`
	// FalseDropRate is falseDrops / logicalEvents.
	FalseDropRate float64 `json:"falseDropRate"`

	PeakStateRows  int64 `json:"peakStateRows"`
	FinalStateRows int64 `json:"finalStateRows"`
	PeakStateBytes int64 `json:"peakStateBytes"`
	// FinalStateBytes is the modelled state size after the last batch.
	FinalStateBytes int64 `json:"finalStateBytes"`
	// BytesPerEntry is the modelled size of one state entry (see
	// EntryBytes), per dedup operator in chain order.
	BytesPerEntry []int64 `json:"bytesPerEntry"`
	// MaxWatermarkLagSeconds is the largest processing time of a batch
	// minus the watermark it ran with, over batches whose watermark has
	// been set; null for a query without a watermark.
	MaxWatermarkLagSeconds *float64 `json:"maxWatermarkLagSeconds"`

	Batches       int64 `json:"batches"`
	NoDataBatches int64 `json:"noDataBatches"`
	// Restarts counts restarts of either kind (faults).
	Restarts int64 `json:"restarts"`
	// SinkDuplicates counts rows the sink wrote more than once after a
	// failed batch was retried.
	SinkDuplicates int64 `json:"sinkDuplicates"`
	// SinkWrites counts rows the sink wrote, retries included.
	SinkWrites int64 `json:"sinkWrites"`

	// EventsPerSecond and WallSeconds are wall-clock measurements of the
	// query's engine: the only fields that vary between identical runs.
	EventsPerSecond float64 `json:"eventsPerSecond"`
	WallSeconds     float64 `json:"wallSeconds"`

	// SparkSummary holds the fields a spark: block adds (see
	// SparkSummary); nil, and absent from the JSON, without one.
	*SparkSummary
}

// TimeseriesHeader is the header of timeseries.csv. processingTime and
// watermark are RFC 3339 UTC timestamps with milliseconds (watermark empty
// for a query without one); delay is in seconds (empty without one);
// missedDuplicates and falseDrops are cumulative.
var TimeseriesHeader = []string{
	"query", "delay", "batchId", "processingTime", "watermark", "inputRows", "emittedRows",
	"droppedByWatermark", "droppedDuplicates", "stateRows", "stateBytes",
	"missedDuplicates", "falseDrops",
}

// WatermarkSet reports whether the batch ran with a watermark that is set:
// the query has one and it has moved from Spark's initial 0
// (engines.WatermarkSet).
func (r *BatchRecord) WatermarkSet() bool { return r.HasWatermark && engines.WatermarkSet(r.Watermark) }

// BatchRecord is one row of timeseries.csv.
type BatchRecord struct {
	Query string
	// Delay in seconds; nil without a watermark.
	Delay   *float64
	BatchID int64
	// ProcessingTime and Watermark are ms since the epoch.
	ProcessingTime     int64
	Watermark          int64
	HasWatermark       bool
	NoData             bool
	InputRows          int64
	EmittedRows        int64
	DroppedByWatermark int64
	DroppedDuplicates  int64
	StateRows          int64
	StateBytes         int64
	MissedDuplicates   int64
	FalseDrops         int64
}
