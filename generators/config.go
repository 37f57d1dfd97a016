package generators

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/internal/echo"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"strings"
)

// The configuration of a generator. Its JSON form is the resolved
// scenario's (summary.json embeds it), with durations as "2h" and rates
// as "2000/s". The yaml tags name the keys of a scenario file; the other
// tags are the scenario loader's (sim/scenario): want says what a value
// must be, need what a required key must be set to, item what each
// element of a list must be, dist:"counts" marks a count distribution.

// Config is what a generator's rows depend on, and nothing else.
type Config struct {
	// Seed is the root of every random stream.
	Seed uint64
	// Start is the origin of event time and processing time.
	Start time.Time
	// Duration is the span of processing time during which originals
	// arrive; copies may still arrive after it.
	Duration interval.Duration
	// Workload describes the traffic.
	Workload Workload
	// BadClockRows are rows injected at given moments with an event time
	// from a clock running ahead: a scenario's bad-clock faults.
	BadClockRows []BadClockRow
}

// Workload describes the generated traffic: the arrival process of
// originals and the faults applied to it.
type Workload struct {
	// Rate is the constant rate of originals; nil when not given. A
	// Profile replaces it.
	Rate *Rate `json:"rate,omitempty" yaml:"rate"`
	// Profile is a piecewise-constant rate that repeats to fill the
	// duration; when given, it replaces Rate.
	Profile []Segment `json:"profile,omitempty" yaml:"profile"`
	// IDs is the form of event_id.
	IDs IDForm `json:"ids" yaml:"ids" want:"uuid or int"`
	// Customers is the cardinality of customer_id (ids 0 to Customers-1).
	Customers int64 `json:"customers" yaml:"customers" want:"a whole number of at least 1"`
	// ArrivalDelay is the delay from an original's event time to its
	// arrival, in seconds.
	ArrivalDelay randvar.Spec `json:"arrivalDelay" yaml:"arrivalDelay"`
	// Retries is the retry model.
	Retries Retries `json:"retries" yaml:"retries"`
	// FutureTimestamps is the bad-clock model.
	FutureTimestamps FutureTimestamps `json:"futureTimestamps" yaml:"futureTimestamps"`
	// Heartbeat, when above zero, is the interval of synthetic heartbeat
	// rows.
	Heartbeat interval.Duration `json:"heartbeat" yaml:"heartbeat"`
	// Events, when set, replaces the generated traffic with an event log
	// (events.go); rate, profile and the faults are then left out.
	Events *Events `json:"events,omitempty" yaml:"events"`
}

// DefaultWorkload returns a workload holding every default; the rate (or
// profile) is left unset. The optional distributions a probability of 0
// makes moot (retries.delay, futureTimestamps.skew) are left as the zero
// Spec; SetMootDefaults sets them.
func DefaultWorkload() Workload {
	return Workload{
		IDs:          UUIDs,
		Customers:    1000,
		ArrivalDelay: randvar.Spec{Kind: randvar.KindConstant},
		Retries: Retries{
			Copies:    randvar.Spec{Kind: randvar.KindConstant, Value: 1, Counts: true},
			Timestamp: SameTimestamp,
			Metadata:  []string{MetaAttempt, MetaIngestTime},
		},
	}
}

// SetMootDefaults sets the distributions that a probability of 0 makes
// moot, when they are absent, to constant 0: retries.delay without
// retries, futureTimestamps.skew without bad clocks.
func (w *Workload) SetMootDefaults() {
	if w.Retries.Probability == 0 && w.Retries.Delay.Kind == "" {
		w.Retries.Delay = randvar.Spec{Kind: randvar.KindConstant}
	}
	if w.FutureTimestamps.Probability == 0 && w.FutureTimestamps.Skew.Kind == "" {
		w.FutureTimestamps.Skew = randvar.Spec{Kind: randvar.KindConstant}
	}
}

// Segments returns the rate profile of w: Profile when given, else a
// single segment of Rate lasting the whole run (For 0).
func (w *Workload) Segments() []Segment {
	if len(w.Profile) > 0 || w.Rate == nil {
		return w.Profile
	}
	return []Segment{{Rate: *w.Rate}}
}

// PeakRate returns the largest rate of originals of w: its rate, or the
// largest rate of its profile.
func (w *Workload) PeakRate() float64 {
	var r float64
	for _, s := range w.Segments() {
		r = max(r, float64(s.Rate))
	}
	return r
}

// PeakRows estimates the rows of the fullest trigger of w: the peak rate
// of originals (the rate, or the highest rate of the profile) times the
// trigger, times 1 + retries.probability x the mean number of extra
// copies (every copy counted as if it arrived with its original, an upper
// estimate of the retries' share), plus the heartbeat rows of one trigger
// (ceil(trigger / heartbeat)). It is an estimate of the average over the
// fullest segment, not a bound on one batch: arrivals are random. path is
// the key the estimate is dominated by: the rate, the profile segment of
// the peak rate, or the heartbeat.
func (w *Workload) PeakRows(trigger interval.Duration) (rows float64, path string) {
	peak, path := 0.0, "workload.rate"
	if len(w.Profile) > 0 {
		for i, seg := range w.Profile {
			if i == 0 || float64(seg.Rate) > peak {
				peak, path = float64(seg.Rate), fmt.Sprintf("workload.profile[%d].rate", i)
			}
		}
	} else if w.Rate != nil {
		peak = float64(*w.Rate)
	}
	rows = peak * trigger.Std().Seconds()
	if p := w.Retries.Probability; p > 0 {
		rows *= 1 + p*meanCopies(w.Retries.Copies)
	}
	if hb := w.Heartbeat; hb > 0 && trigger > 0 {
		beats := math.Ceil(float64(trigger) / float64(hb))
		if beats > rows {
			path = "workload.heartbeat"
		}
		rows += beats
	}
	return rows, path
}

// MeanRows estimates the rows a run of duration d yields: originals, the
// events at the profile's mean rate (it repeats to fill d) or the rate,
// and rows, the originals with their expected retries (PeakRows' copies)
// and the heartbeats. It is for sizing a run before it starts, not a
// count: the generators draw the real numbers.
func (w *Workload) MeanRows(d interval.Duration) (rows, originals float64) {
	secs := d.Std().Seconds()
	if len(w.Profile) > 0 {
		var sum, span float64
		for _, seg := range w.Profile {
			sum += float64(seg.Rate) * seg.For.Std().Seconds()
			span += seg.For.Std().Seconds()
		}
		if span > 0 {
			originals = sum / span * secs
		}
	} else if w.Rate != nil {
		originals = float64(*w.Rate) * secs
	}
	rows = originals
	if p := w.Retries.Probability; p > 0 {
		rows *= 1 + p*meanCopies(w.Retries.Copies)
	}
	if hb := w.Heartbeat; hb > 0 {
		rows += math.Ceil(float64(d) / float64(hb))
	}
	return rows, originals
}

// meanCopies returns the mean number of extra copies a count distribution
// draws, as the generators draw them (randvar.CountMean): at least 1 and
// at most maxExtraCopies, the cap when the mean is infinite or unknown.
func meanCopies(s randvar.Spec) float64 {
	m := 0.0
	if d, err := randvar.New(s); err == nil {
		m = randvar.CountMean(d)
	}
	if math.IsNaN(m) || m > maxExtraCopies {
		return maxExtraCopies
	}
	return max(m, 1)
}

// Segment is one step of a rate profile.
type Segment struct {
	// For is how long the segment lasts.
	For interval.Duration `json:"for" yaml:"for" need:"how long the segment lasts, such as 30m"`
	// Rate is the rate of originals during the segment; 0 is a stall.
	Rate Rate `json:"rate" yaml:"rate" need:"a rate such as 2000/s, or 0 for a stall"`
}

// Rate is a rate of events per second.
type Rate float64

// String renders r as events per second, "2000/s".
func (r Rate) String() string { return strconv.FormatFloat(float64(r), 'g', -1, 64) + "/s" }

// MarshalJSON renders r as a JSON string such as "2000/s".
func (r Rate) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(r.String())), nil }

// ParseRate parses a rate: "2000/s", "120/m", "5000/h" (also /sec, /second,
// /min, /minute, /hour), or a bare number of events per second. Zero is a
// valid rate (a stall). Non-finite numbers are errors; a negative rate
// parses, and Validate reports it, so that the message can say what range
// was expected.
func ParseRate(s string) (Rate, error) {
	num, unit, hasUnit := strings.Cut(strings.TrimSpace(s), "/")
	num = strings.TrimSpace(num)
	per := 1.0
	if hasUnit {
		switch strings.ToLower(strings.TrimSpace(unit)) {
		case "s", "sec", "second":
		case "m", "min", "minute":
			per = 60
		case "h", "hour":
			per = 3600
		default:
			return 0, fmt.Errorf("unknown rate unit %q (want /s, /m or /h)", unit)
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", num)
	}
	return Rate(v / per), nil
}

// IDForm is the form of the event_id column.
type IDForm string

// The event_id forms.
const (
	// UUIDs are 36-character version 4 UUIDs: each event number enciphered
	// by a seed-keyed permutation of the 122 random bits (see KeyNumbering).
	UUIDs IDForm = "uuid"
	// Ints are the logical event numbers.
	Ints IDForm = "int"
)

// Kind returns the id form as the rows carry it.
func (f IDForm) Kind() IDKind {
	if f == Ints {
		return IntIDs
	}
	return UUIDIDs
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
	Probability float64 `json:"probability" yaml:"probability" want:"a probability between 0 and 1"`
	// Copies is the count distribution of extra copies of a resent event.
	Copies randvar.Spec `json:"copies" yaml:"copies" dist:"counts"`
	// Delay is the gap between successive copies' arrivals, in seconds.
	Delay randvar.Spec `json:"delay" yaml:"delay"`
	// Timestamp says what event time copies carry.
	Timestamp TimestampMode `json:"timestamp" yaml:"timestamp" want:"same, restamp or jitter"`
	// Jitter bounds the move of a copy's event time with JitterTimestamp.
	Jitter interval.Duration `json:"jitter" yaml:"jitter"`
	// Metadata lists the columns whose value differs between copies:
	// MetaAttempt and/or MetaIngestTime.
	Metadata []string `json:"metadata" yaml:"metadata" want:"a list of attempt and/or ingest_time" item:"attempt or ingest_time"`
}

// Varies reports whether the metadata column col differs between copies.
func (r *Retries) Varies(col string) bool { return slices.Contains(r.Metadata, col) }

// FutureTimestamps is the bad-clock model: rows whose event time comes from
// a clock running ahead.
type FutureTimestamps struct {
	// Probability is the share of rows with a bad clock.
	Probability float64 `json:"probability" yaml:"probability" want:"a probability between 0 and 1"`
	// Skew is how far ahead of its arrival a bad row's event time is, in
	// seconds.
	Skew randvar.Spec `json:"skew" yaml:"skew"`
}

// Problem is one invalid value of a Config: its key path in a scenario
// file ("workload.retries.delay.p99") and what it must be.
type Problem struct {
	Path string
	Msg  string
}

// MaxRate bounds a rate: far above any real stream, and low enough that
// every gap between arrivals still moves simulated time forward in
// float64.
const MaxRate = 1e9

// Check returns every problem of c that would make a generator loop,
// panic or produce nonsense, in key order; nil when c is valid.
func (c *Config) Check() []Problem {
	var ps problems
	if c.Start.Nanosecond()%1000 != 0 {
		ps.add("start", "must be a whole number of microseconds (rows carry microseconds), got %s", c.Start.Format(time.RFC3339Nano))
	}
	if c.Duration <= 0 {
		ps.add("duration", "must be above 0, got %s", c.Duration)
	}
	w := &c.Workload
	if w.Events != nil {
		ps.checkEvents(c)
		return ps
	}
	// A profile replaces the rate; a rate that a profile replaces must
	// still be a valid rate.
	switch {
	case w.Profile != nil && len(w.Profile) == 0:
		ps.add("workload.profile", "must list at least one segment {for, rate}, got an empty list")
	case w.Rate == nil && len(w.Profile) == 0:
		ps.add("workload.rate", "must be set to a rate such as 2000/s, or replaced by workload.profile, got nothing")
	}
	if w.Rate != nil {
		ps.rate("workload.rate", *w.Rate)
	}
	for i, seg := range w.Profile {
		path := fmt.Sprintf("workload.profile[%d]", i)
		if seg.For <= 0 {
			ps.add(path+".for", "must be above 0, got %s", seg.For)
		}
		ps.rate(path+".rate", seg.Rate)
	}
	if w.IDs != UUIDs && w.IDs != Ints {
		ps.add("workload.ids", "must be one of uuid, int, got %s", echo.Show(string(w.IDs)))
	}
	if w.Customers < 1 {
		ps.add("workload.customers", "must be at least 1, got %d", w.Customers)
	}
	ps.dist("workload.arrivalDelay", w.ArrivalDelay, false)
	ps.retries(&w.Retries)
	ft := &w.FutureTimestamps
	ps.probability("workload.futureTimestamps.probability", ft.Probability)
	if ft.Skew.Kind == "" && ft.Probability > 0 {
		ps.add("workload.futureTimestamps.skew", "must be set when probability is above 0, got nothing")
	}
	ps.dist("workload.futureTimestamps.skew", ft.Skew, false)
	for i, b := range c.BadClockRows {
		key := b.Key
		if key == "" {
			key = fmt.Sprintf("badClockRows[%d]", i)
		}
		switch {
		case b.At <= 0:
			ps.add(key+".at", "must be above 0, got %s", interval.Duration(b.At*1000))
		case c.Duration > 0 && b.At*1000 > int64(c.Duration):
			ps.add(key+".at", "must be within the duration (%s), got %s", c.Duration, interval.Duration(b.At*1000))
		}
		if b.Skew <= 0 {
			ps.add(key+".skew", "must be above 0 (how far ahead of its arrival the row's event time is, such as 30m), got %s", interval.Duration(b.Skew*1000))
		}
	}
	switch {
	case w.Heartbeat < 0:
		ps.add("workload.heartbeat", "must be at least 0 (0 is off), got %s", w.Heartbeat)
	case w.Heartbeat > 0 && w.Heartbeat < interval.Duration(time.Microsecond):
		ps.add("workload.heartbeat", "must be 0 (off) or at least 1µs, got %s", w.Heartbeat)
	}
	return ps
}

// problems collects the Problems of a Config.
type problems []Problem

func (ps *problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (ps *problems) rate(path string, r Rate) {
	switch {
	case r < 0 || math.IsNaN(float64(r)):
		ps.add(path, "must be at least 0 (0 is a stall), got %s", r)
	case r > MaxRate:
		ps.add(path, "must be at most %s, got %s", Rate(MaxRate), r)
	}
}

func (ps *problems) probability(path string, v float64) {
	if !(v >= 0 && v <= 1) {
		ps.add(path, "must be between 0 and 1, got %g", v)
	}
}

func (ps *problems) dist(path string, s randvar.Spec, counts bool) {
	for _, p := range s.Check(counts) {
		ps.add(path+"."+p.Param, "%s", p.Msg)
	}
}

func (ps *problems) retries(r *Retries) {
	const path = "workload.retries"
	ps.probability(path+".probability", r.Probability)
	if r.Copies.Kind == "" {
		ps.add(path+".copies", "must be set to a count distribution such as {dist: geometric, mean: 1.5}, got nothing")
	}
	ps.dist(path+".copies", r.Copies, true)
	if r.Delay.Kind == "" && r.Probability > 0 {
		ps.add(path+".delay", "must be set when probability is above 0 (the gap between copies' arrivals), got nothing")
	}
	ps.dist(path+".delay", r.Delay, false)
	// Jitter only matters with timestamp: jitter, but it is allowed (and
	// ignored) with the other modes.
	switch {
	case r.Timestamp != SameTimestamp && r.Timestamp != Restamp && r.Timestamp != JitterTimestamp:
		ps.add(path+".timestamp", "must be one of same, restamp, jitter, got %s", echo.Show(string(r.Timestamp)))
	case r.Timestamp == JitterTimestamp && r.Jitter <= 0:
		ps.add(path+".jitter", "must be above 0 when timestamp is jitter, got %s", r.Jitter)
	case r.Jitter < 0:
		ps.add(path+".jitter", "must be at least 0, got %s", r.Jitter)
	}
	for i, m := range r.Metadata {
		mp := fmt.Sprintf("%s.metadata[%d]", path, i)
		switch {
		case m != MetaAttempt && m != MetaIngestTime:
			ps.add(mp, "must be one of attempt, ingest_time, got %s", echo.Show(m))
		case slices.Index(r.Metadata, m) < i:
			ps.add(mp, "must be listed once, got %s again", m)
		}
	}
}
