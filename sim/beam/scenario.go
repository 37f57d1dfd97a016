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

// ScenarioQuery returns Deduplicate in the global window with the time
// domain and duration d (ms): the query a scenario runs, as a trace
// without steps.
func ScenarioQuery(domain beam.TimeDomain, duration int64) *Trace {
	return &Trace{Domain: domain, Duration: duration}
}

// QueryText returns t's query object, the JSON `simulate explain` takes:
// {"engine": "beam", "timeDomain": "processing", "duration": "1m"}.
func (t *Trace) QueryText() string {
	o := struct {
		Engine     string `json:"engine"`
		TimeDomain string `json:"timeDomain"`
		Duration   string `json:"duration"`
	}{Engine, t.Domain.String(), ms(t.Duration)}
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
}

// NewScenarioOperator returns a fresh Deduplicate for the query t.
func (t *Trace) NewScenarioOperator() (*ScenarioOperator, error) {
	if t.Window != 0 {
		return nil, errors.New("beam: only the global window runs in scenarios")
	}
	d, err := beam.NewDedup(t.Domain, t.Duration, 0)
	if err != nil {
		return nil, err
	}
	return &ScenarioOperator{d: d}, nil
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
// the element was output, else DroppedDuplicate.
func (s *ScenarioOperator) Process(key []byte, procMs, eventMs int64) engines.Outcome {
	s.advance(procMs)
	o := s.d.Process(string(key), eventMs)
	if !s.any || eventMs > s.maxEvent {
		s.maxEvent, s.any = eventMs, true
	}
	return o
}

// State advances the clocks to procMs and returns the seen keys, each
// holding its flag and its timer until the timer fires: logical and
// physical state are the same.
func (s *ScenarioOperator) State(procMs int64) (logical, physical int64) {
	s.advance(procMs)
	n := int64(s.d.Len())
	return n, n
}

// TimersFired returns how many expiry timers fired (each clearing a key).
func (s *ScenarioOperator) TimersFired() int64 { return s.d.TimersFired() }

// Watermark returns the input watermark (beam.MinTimestamp before the
// second row).
func (s *ScenarioOperator) Watermark() int64 { return s.d.Watermark() }
