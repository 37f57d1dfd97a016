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
	// Windows says which span of processing time each per-query field
	// covers: the traffic window or the whole run.
	Windows *Windows `json:"windows,omitempty"`
	// Markers are moments and spans worth marking on charts, in processing
	// time: stalls, faults, bad clocks.
	Markers []Marker `json:"markers"`
	// Queries holds one entry per query, or per query and delay in a sweep.
	Queries []QuerySummary `json:"queries"`
}

// Windows describes the two spans of processing time the per-query fields
// cover. The traffic window is [start, start+duration]: originals arrive
// in it. After it comes the drain: no new events, only the last copies of
// retried events (the watermark stands still, or follows their event
// times), a tail a real stream never has.
// A field of Traffic is measured over the batches whose trigger is at or
// before LastTrafficBatch (the batch that takes the last originals), so
// the drain never drives it; a field of Run totals every batch and row of
// the run, the drain included.
type Windows struct {
	// TrafficEnd is the end of the traffic window, seconds after start
	// (the duration).
	TrafficEnd float64 `json:"trafficEnd"`
	// LastTrafficBatch is the processing time of the last batch counted
	// in the traffic window, seconds after start: the first trigger at or
	// after TrafficEnd.
	LastTrafficBatch float64 `json:"lastTrafficBatch"`
	// Traffic lists the per-query fields measured over the traffic window.
	Traffic []string `json:"traffic"`
	// Run lists the per-query fields counted over the whole run.
	Run []string `json:"run"`
}

// TrafficFields are the per-query fields measured over the traffic window
// (see Windows).
func TrafficFields() []string {
	return []string{"peakStateRows", "peakStateBytes", "maxWatermarkLagSeconds", "saturated"}
}

// RunFields are the per-query counters and totals that cover the whole
// run, the drain included (see Windows).
func RunFields() []string {
	return []string{"inputRows", "logicalEvents", "trueDuplicates", "emittedRows", "missedDuplicates",
		"falseDrops", "falseDropsByCause", "droppedByWatermark", "droppedDuplicates", "missedDuplicateRate",
		"falseDropRate", "finalStateRows", "finalStateBytes", "batches", "noDataBatches", "restarts",
		"sinkDuplicates", "sinkWrites", "eventsPerSecond", "wallSeconds"}
}

// NewWindows returns the windows of a run whose traffic ends at
// trafficEnd and whose last batch of the traffic window is at
// lastTrafficBatch, in seconds after start.
func NewWindows(trafficEnd, lastTrafficBatch float64) *Windows {
	return &Windows{TrafficEnd: trafficEnd, LastTrafficBatch: lastTrafficBatch, Traffic: TrafficFields(), Run: RunFields()}
}

// The dedup flavours of QuerySummary.Flavour: one look per API in reports.
const (
	// FlavourUnbounded is a dropDuplicates no watermark reaches: it keeps
	// every key forever.
	FlavourUnbounded = "unbounded"
	// FlavourPairKeyed is a dropDuplicates whose keys include the
	// watermarked event time: a key lives until the watermark passes it.
	FlavourPairKeyed = "pair-keyed"
	// FlavourWithin is dropDuplicatesWithinWatermark.
	FlavourWithin = "within-watermark"
	// FlavourOther is any other chain: a watermarked dropDuplicates
	// without the event time among its keys, or several dedups.
	FlavourOther = "other"
)

// Marker is a moment (At) or a span (At to Until) of processing time, in
// seconds after the scenario's start.
type Marker struct {
	// Kind is "stall", "restart", "lose-checkpoint" or "bad-clock" (a
	// bad-clock fault, or one of the first rows a bad clock stamped).
	Kind  string   `json:"kind"`
	At    float64  `json:"at"`
	Until *float64 `json:"until,omitempty"`
	// Label says what happened, for a legend.
	Label string `json:"label"`
}

// FalseDropCauses splits false drops by cause: Late + BadClock +
// Collision = falseDrops.
type FalseDropCauses struct {
	// Late counts logical events whose every copy was dropped behind the
	// watermark, the last of them in a batch whose late-filter watermark
	// was at or behind its processing time minus the delay.
	Late int64 `json:"late"`
	// BadClock counts logical events whose every copy was dropped behind
	// the watermark, the last of them in a batch whose late-filter
	// watermark was ahead of its processing time minus the delay: only a
	// row stamped in the future moves the watermark there.
	BadClock int64 `json:"badClock"`
	// Collision counts logical events never emitted for any other reason:
	// a copy was dropped as a duplicate of a different event's key (a key
	// too coarse, such as customer_id).
	Collision int64 `json:"collision"`
}

// Horizon is a query's horizon by its engine's own name: Name is the
// engine's word ("TTL", "W", "d"), Seconds how long, null when the query
// never forgets a key.
type Horizon struct {
	Name    string   `json:"name"`
	Seconds *float64 `json:"seconds"`
	// Key is the scenario query's key that sets it, as a sweep sets it
	// ("options.table.exec.state.ttl", "window", "duration"); left out
	// when no key does.
	Key string `json:"key,omitempty"`
}

// CounterInfo is how the reports show one of an engine's own counters
// (summary.json's engineCounterInfo): Name is its key in engineCounters,
// Header its column's header, Explanation a sentence of the table's note.
type CounterInfo struct {
	Name        string `json:"name"`
	Header      string `json:"header"`
	Explanation string `json:"explanation"`
}

// QuerySummary is one query's (or one query-and-delay's) totals.
//
// Identities that hold exactly for every query:
//
//	inputRows   = emittedRows + droppedByWatermark + droppedDuplicates
//	emittedRows = logicalEvents - falseDrops + missedDuplicates
//	falseDrops  = falseDropsByCause.late + .badClock + .collision
type QuerySummary struct {
	Name  string `json:"name"`
	Query string `json:"query"`
	// Engine is the engine that ran the query, left out for Spark (the
	// default), "flink" for a Flink SQL query.
	Engine string `json:"engine,omitempty"`
	// Delay is the query's watermark delay in seconds, null without one.
	Delay *float64 `json:"delay"`
	// Horizon is, for an engine other than Spark, how long the query
	// remembers a key by its engine's own name (Flink's TTL, Kafka
	// Streams' window W, Beam's duration d); left out for Spark, whose
	// horizon is Delay.
	Horizon *Horizon `json:"horizon,omitempty"`
	// Mechanism is, for an engine other than Spark, how the query
	// forgets a key by its engine's rule, in a clause; left out for
	// Spark, whose rule the reports state from its flavour.
	Mechanism string `json:"mechanism,omitempty"`
	Store     string `json:"store"`
	// Warnings are the pitfalls `simulate explain` reports for the query.
	Warnings []string `json:"warnings"`
	// Flavour is the query's dedup flavour (FlavourUnbounded, ...).
	Flavour string `json:"flavour"`
	// KeyHorizonSeconds is how long, in event time, the query keeps a
	// key: delay + trigger for a pair-keyed dropDuplicates, 2 x delay +
	// trigger for dropDuplicatesWithinWatermark (the largest over the
	// chain's dedups); null when some dedup never evicts.
	KeyHorizonSeconds *float64 `json:"keyHorizonSeconds"`
	// Saturated is true when the key horizon reaches the traffic window
	// (keyHorizonSeconds >= duration): the query holds every key of the
	// run, so the run cannot show its steady state nor the copies that
	// come back after the horizon. False for a query that never evicts
	// (keyHorizonSeconds null), which is no horizon artefact.
	Saturated bool `json:"saturated"`

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

	// PeakStateRows is the largest number of keys held after a batch of
	// the traffic window (see Windows), all dedup operators together.
	PeakStateRows  int64 `json:"peakStateRows"`
	FinalStateRows int64 `json:"finalStateRows"`
	// PeakStateBytes is the same in modelled bytes.
	PeakStateBytes int64 `json:"peakStateBytes"`
	// FinalStateBytes is the modelled state size after the last batch.
	FinalStateBytes int64 `json:"finalStateBytes"`
	// BytesPerEntry is the modelled size of one state entry (see
	// EntryBytes), per dedup operator in chain order.
	BytesPerEntry []int64 `json:"bytesPerEntry"`
	// MaxWatermarkLagSeconds is the largest processing time of a batch
	// minus the watermark it ran with, over the batches of the traffic
	// window whose watermark has been set; null when there is none
	// (always for a query without a watermark).
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

	// EngineCounters are the numbers of an engine other than Spark that
	// the fields above do not hold, by name: the physical state rows
	// (peak over the traffic window and final) and the engine's own
	// counters (Kafka Streams' droppedRecordsTotal, Beam's timersFired);
	// absent for a Spark query.
	EngineCounters map[string]int64 `json:"engineCounters,omitempty"`
	// EngineCounterInfo says how the reports show the engine's counters:
	// their columns' order, headers and explanations, as sim/registry
	// states them; absent for a Spark query.
	EngineCounterInfo []CounterInfo `json:"engineCounterInfo,omitempty"`

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
