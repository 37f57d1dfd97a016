package scenario

import (
	"slices"
	"time"
)

// Scenario is one resolved scenario file: every key of SCENARIO.md, with
// the defaults filled in. Its JSON form uses the YAML key names.
type Scenario struct {
	// File is the path the scenario was loaded from; error messages name
	// it. It is not part of the JSON form, so that results do not depend
	// on where the file was read from.
	File string `json:"-"`
	// Name names the results folder; it is safe as a file name.
	Name string `json:"name"`
	// Seed is the root of every random stream of the run.
	Seed uint64 `json:"seed"`
	// Start is the origin of event time and processing time, in UTC.
	Start time.Time `json:"start"`
	// Duration is the span of processing time during which originals
	// arrive; copies may still arrive after it.
	Duration Duration `json:"duration"`
	// Trigger is the processing-time trigger interval.
	Trigger Duration `json:"trigger"`
	// NoDataMicroBatches enables Spark's no-data batches.
	NoDataMicroBatches bool `json:"noDataMicroBatches"`
	// Workload describes the generated traffic.
	Workload Workload `json:"workload"`
	// Queries are the queries run on the same input, at least one.
	Queries []Query `json:"queries"`
	// Store is the state store backend: StoreMemory or StorePebble.
	Store string `json:"store"`
	// Sink is the sink the queries write to.
	Sink Sink `json:"sink"`
	// Faults are the faults injected during the run, if any.
	Faults []Fault `json:"faults,omitempty"`
	// Sweep, when set, reruns every query with each delay.
	Sweep *Sweep `json:"sweep,omitempty"`
}

// End returns the end of the window of original arrivals, Start+Duration.
func (s *Scenario) End() time.Time { return s.Start.Add(s.Duration.Std()) }

// IDForm is the form of the event_id column.
type IDForm string

// The event_id forms.
const (
	// UUIDs are 36-character random UUIDs (version 4 layout).
	UUIDs IDForm = "uuid"
	// Ints are the logical event numbers.
	Ints IDForm = "int"
)

// Workload describes the generated traffic: the arrival process of
// originals and the faults applied to it.
type Workload struct {
	// Rate is the constant rate of originals; nil when not given. A
	// Profile replaces it.
	Rate *Rate `json:"rate,omitempty"`
	// Profile is a piecewise-constant rate that repeats to fill the
	// duration; when given, it replaces Rate.
	Profile []Segment `json:"profile,omitempty"`
	// IDs is the form of event_id.
	IDs IDForm `json:"ids"`
	// Customers is the cardinality of customer_id (ids 0 to Customers-1).
	Customers int64 `json:"customers"`
	// ArrivalDelay is the delay from an original's event time to its
	// arrival, in seconds.
	ArrivalDelay Dist `json:"arrivalDelay"`
	// Retries is the retry model.
	Retries Retries `json:"retries"`
	// FutureTimestamps is the bad-clock model.
	FutureTimestamps FutureTimestamps `json:"futureTimestamps"`
	// Heartbeat, when above zero, is the interval of synthetic heartbeat
	// rows.
	Heartbeat Duration `json:"heartbeat"`
}

// Segments returns the rate profile of w: Profile when given, else a
// single segment of Rate lasting the whole run (For 0).
func (w *Workload) Segments() []Segment {
	if len(w.Profile) > 0 || w.Rate == nil {
		return w.Profile
	}
	return []Segment{{Rate: *w.Rate}}
}

// Segment is one step of a rate profile.
type Segment struct {
	// For is how long the segment lasts.
	For Duration `json:"for"`
	// Rate is the rate of originals during the segment; 0 is a stall.
	Rate Rate `json:"rate"`
}

// TimestampMode says what event time a retried copy carries.
type TimestampMode string

// The timestamp modes of retried copies.
const (
	// SameTimestamp: a copy carries the original's event time.
	SameTimestamp TimestampMode = "same"
	// Restamp: the producer stamps the copy when it resends it, so the
	// copy's event time is the original's plus the time between the two
	// arrivals (10:00:00 becomes 10:00:01 a second later).
	Restamp TimestampMode = "restamp"
	// JitterTimestamp: a copy's event time is the original's moved by a
	// uniform amount in [-Jitter, +Jitter].
	JitterTimestamp TimestampMode = "jitter"
)

// The metadata columns whose value may differ between copies.
const (
	// MetaAttempt is the attempt column: the copy number.
	MetaAttempt = "attempt"
	// MetaIngestTime is the ingest_time column: the copy's own arrival.
	MetaIngestTime = "ingest_time"
)

// Retries is the retry model: which originals are resent, how many extra
// copies, how far apart, and what differs between the copies.
type Retries struct {
	// Probability is the share of originals resent at least once.
	Probability float64 `json:"probability"`
	// Copies is the count distribution of extra copies of a resent event.
	Copies Dist `json:"copies"`
	// Delay is the gap between successive copies' arrivals, in seconds.
	Delay Dist `json:"delay"`
	// Timestamp says what event time copies carry.
	Timestamp TimestampMode `json:"timestamp"`
	// Jitter bounds the move of a copy's event time with JitterTimestamp.
	Jitter Duration `json:"jitter"`
	// Metadata lists the columns whose value differs between copies:
	// MetaAttempt and/or MetaIngestTime.
	Metadata []string `json:"metadata"`
}

// Varies reports whether the metadata column col differs between copies.
func (r *Retries) Varies(col string) bool { return slices.Contains(r.Metadata, col) }

// FutureTimestamps is the bad-clock model: rows whose event time comes from
// a clock running ahead.
type FutureTimestamps struct {
	// Probability is the share of rows with a bad clock.
	Probability float64 `json:"probability"`
	// Skew is how far ahead of its arrival a bad row's event time is, in
	// seconds.
	Skew Dist `json:"skew"`
}

// Query is one named query of a scenario.
type Query struct {
	// Name names the query's results; it is safe as a file name.
	Name string `json:"name"`
	// Query is the PySpark-style chain, as sim/chain parses it.
	Query string `json:"query"`
}

// The state store backends.
const (
	// StoreMemory keeps state in memory.
	StoreMemory = "memory"
	// StorePebble keeps state in a Pebble database.
	StorePebble = "pebble"
)

// The sink kinds.
const (
	// SinkAppend appends every row of every batch attempt, so a retried
	// batch writes its rows again.
	SinkAppend = "append"
	// SinkIdempotent writes a retried batch's rows only once.
	SinkIdempotent = "idempotent"
)

// Sink is the sink the queries write to.
type Sink struct {
	// Kind is SinkAppend or SinkIdempotent.
	Kind string `json:"kind"`
	// FailureProbability is the chance that a batch's write fails and the
	// batch is retried.
	FailureProbability float64 `json:"failureProbability"`
}

// FaultKind names a fault.
type FaultKind string

// The faults a scenario may inject.
const (
	// Restart stops the query and restarts it from its own checkpoint.
	Restart FaultKind = "restart"
	// LoseCheckpoint restarts the query with a new, empty checkpoint.
	LoseCheckpoint FaultKind = "lose-checkpoint"
)

// Fault is one fault, at a processing-time offset from Start.
type Fault struct {
	// At is the processing-time offset from Start, within Duration.
	At Duration `json:"at"`
	// Kind is the fault.
	Kind FaultKind `json:"kind"`
}

// Sweep reruns every query with each watermark delay.
type Sweep struct {
	// Delay lists the watermark delays to run every query with.
	Delay []Duration `json:"delay"`
}

// Defaults returns a scenario holding every default of SCENARIO.md. The
// required keys (name, duration, workload rate or profile, queries) are
// left empty. Optional distributions that a probability of 0 makes moot
// (retries.delay, futureTimestamps.skew) are left as the zero Dist; the
// parser sets them to constant 0 when the probability is 0.
func Defaults() Scenario {
	return Scenario{
		Seed:               1,
		Start:              time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Trigger:            Duration(10 * time.Second),
		NoDataMicroBatches: true,
		Workload: Workload{
			IDs:          UUIDs,
			Customers:    1000,
			ArrivalDelay: Dist{Kind: Constant},
			Retries: Retries{
				Copies:    Dist{Kind: Constant, Value: 1, Counts: true},
				Timestamp: SameTimestamp,
				Metadata:  []string{MetaAttempt, MetaIngestTime},
			},
		},
		Store: StoreMemory,
		Sink:  Sink{Kind: SinkAppend},
	}
}
