package beam

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/beam"
	"github.com/dedupsim/dedupsim/engines/fileio"
)

// ParseTimeDomain parses a time domain as a trace's or a scenario
// query's "timeDomain" names it: "processing" or "event".
func ParseTimeDomain(s string) (beam.TimeDomain, error) {
	switch s {
	case "processing":
		return beam.ProcessingTime, nil
	case "event":
		return beam.EventTime, nil
	}
	return 0, fmt.Errorf("%s, want \"processing\" (Beam's default) or \"event\"", fileio.Quote(s))
}

// CheckDuration reports whether ms is a duration d Deduplicate takes.
func CheckDuration(ms int64) error {
	if ms < 1 {
		return errors.New("must be at least 1 ms")
	}
	return nil
}

// CheckLateness reports whether ms is an allowed lateness the query
// takes with fixed windows of window ms (0: the global window, which
// takes none).
func CheckLateness(ms, window int64) error {
	switch {
	case ms < 0:
		return errors.New("must be at least 0")
	case ms > 0 && window == 0:
		return errors.New("only fixed windows take an allowed lateness (the global window never ends)")
	}
	return nil
}

// ScenarioQuery returns Deduplicate with the time domain and duration d
// (ms), in the global window (window 0) or fixed windows of window ms
// with an allowed lateness of lateness ms: the query a scenario runs, as
// a trace without steps.
func ScenarioQuery(domain beam.TimeDomain, duration, window, lateness int64) *Trace {
	return &Trace{Domain: domain, Duration: duration, Window: window, Lateness: lateness}
}

// QueryText returns t's query object, the JSON `simulate explain` takes:
// {"engine": "beam", "timeDomain": "processing", "duration": "1m"}, with
// "window": {"fixed": "1m"} and "allowedLateness" in fixed windows (the
// latter when above 0).
func (t *Trace) QueryText() string {
	type fixed struct {
		Fixed string `json:"fixed"`
	}
	o := struct {
		Engine          string `json:"engine"`
		TimeDomain      string `json:"timeDomain"`
		Duration        string `json:"duration"`
		Window          *fixed `json:"window,omitempty"`
		AllowedLateness string `json:"allowedLateness,omitempty"`
	}{Engine: Engine, TimeDomain: t.Domain.String(), Duration: ms(t.Duration)}
	if t.Window > 0 {
		o.Window = &fixed{ms(t.Window)}
	}
	if t.Lateness > 0 {
		o.AllowedLateness = ms(t.Lateness)
	}
	b, _ := json.Marshal(o)
	return string(b)
}

// ScenarioOperator runs a scenario query's Deduplicate on the generated
// rows, in the global window: each row is an element keyed by its event
// id, with its event time as timestamp, processed at its arrival.
// Processing time is the arrival (ms). The input watermark, in event
// time, is the largest event time of the rows that arrived before: a
// source that emits in arrival order, whose watermark is its largest
// timestamp so far, held back by the element in flight.
//
// Worked example (event time, d = 10 s; times in seconds): x@100 is the
// first row: the watermark is Beam's minimum, the timer is at the
// minimum + 10 s. y@105: the watermark moves to 100 and fires x's timer;
// y is output, its timer at 110. A copy of y@105 arriving when the
// watermark is 110 is dropped; one arriving when it is 110.001 is output
// again.
type ScenarioOperator struct {
	d *beam.Dedup
	// maxEvent is the largest event time of the rows fed; any is set once
	// a row was.
	maxEvent int64
	any      bool
	// ahead: the last element fed was dropped as late behind a watermark
	// ahead of its arrival (only a future timestamp puts it there).
	ahead bool
	fixed bool
}

// NewScenarioOperator returns a fresh Deduplicate for the query t.
func (t *Trace) NewScenarioOperator() (*ScenarioOperator, error) {
	d, err := beam.NewWindowed(t.Domain, t.Duration, t.Window, t.Lateness)
	if err != nil {
		return nil, err
	}
	return &ScenarioOperator{d: d, fixed: t.Window > 0}, nil
}

// Function names the transform's DoFn.
func (s *ScenarioOperator) Function() string { return "Deduplicate.DeduplicateFn" }

// advance moves processing time to procMs and the watermark to the
// largest event time fed so far, firing the timers they pass.
func (s *ScenarioOperator) advance(procMs int64) {
	if by := procMs - s.d.ProcessingTime(); by > 0 {
		s.d.AdvanceProcessingTime(by)
	}
	if s.any {
		s.d.AdvanceWatermark(s.maxEvent)
	}
}

// Process feeds one element of key (the event id) with timestamp eventMs
// at processing time procMs (never earlier than the last call's): the
// clocks advance first, then DeduplicateFn runs. It returns Emitted when
// the element was output, DroppedLate when its fixed window was already
// gone (its garbage-collection time before the watermark), else
// DroppedDuplicate.
//
// Worked example (fixed windows of 60 s, allowed lateness 0, event time,
// d = 1 min; times in seconds): w@10 arrives first, then x@50 (the
// watermark is 10: x's timer is capped at 59.999, its window's end - 1
// ms) and y@70 (the watermark moves to 50; y is output in window
// [60, 120)). A copy of x@50 arriving at 80 finds the watermark at 70,
// past window [0, 60)'s end - 1 ms: dropped as late. Had x's first copy
// arrived there, its event would be lost. With 30 s of allowed lateness
// the window lives until the watermark passes 89.999 and x's timer is
// 70 (10 + 60): the copy is a duplicate.
func (s *ScenarioOperator) Process(key []byte, procMs, eventMs int64) engines.Outcome {
	s.advance(procMs)
	o := s.d.Process(string(key), eventMs)
	s.ahead = o == engines.DroppedLate && s.d.Watermark() > procMs
	if !s.any || eventMs > s.maxEvent {
		s.maxEvent, s.any = eventMs, true
	}
	return o
}

// Observe moves the clocks as an element with timestamp eventMs arriving
// at procMs would, without processing it (a run split by key: another
// part's element): processing time and the watermark first, then the
// largest event time fed.
func (s *ScenarioOperator) Observe(procMs, eventMs int64) {
	s.advance(procMs)
	if !s.any || eventMs > s.maxEvent {
		s.maxEvent, s.any = eventMs, true
	}
}

// State advances the clocks to procMs and returns the seen keys, each
// holding its flag and its timer until the timer fires: logical and
// physical state are the same.
func (s *ScenarioOperator) State(procMs int64) (logical, physical int64) {
	s.advance(procMs)
	n := int64(s.d.Len())
	return n, n
}

// Fixed reports whether the query runs in fixed windows.
func (s *ScenarioOperator) Fixed() bool { return s.fixed }

// LateAhead reports whether the last element fed was dropped as late
// behind a watermark ahead of its arrival: the input watermark, the
// largest event time of the rows before, is at or before every arrival
// unless a row was stamped in the future (a bad clock), so such a drop is
// the bad clock's doing.
func (s *ScenarioOperator) LateAhead() bool { return s.ahead }

// DroppedLate returns how many elements were dropped as late (fixed
// windows; the DirectRunner's DroppedDueToLateness).
func (s *ScenarioOperator) DroppedLate() int64 { return s.d.DroppedLate() }

// TimersFired returns how many expiry timers fired (each clearing a key).
func (s *ScenarioOperator) TimersFired() int64 { return s.d.TimersFired() }

// Watermark returns the input watermark (beam.MinTimestamp before the
// second row).
func (s *ScenarioOperator) Watermark() int64 { return s.d.Watermark() }
