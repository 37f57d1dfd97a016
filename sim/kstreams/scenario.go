package kstreams

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/kstreams"
)

// ParseTime parses a time base as a trace's or a scenario query's "time"
// names it: "stream" or "record".
func ParseTime(s string) (kstreams.TimeBase, error) {
	switch s {
	case "stream":
		return kstreams.StreamTime, nil
	case "record":
		return kstreams.RecordTime, nil
	}
	return 0, fmt.Errorf("%s, want \"stream\" (the task's stream time) or \"record\" (the record's timestamp)", fileio.Quote(s))
}

// CheckWindow reports whether ms is a window W the processor takes.
func CheckWindow(ms int64) error {
	if ms < 1 {
		return errors.New("must be at least 1 ms (the processor's maintain duration per event must be >= 1)")
	}
	return nil
}

// ScenarioQuery returns the window-store dedup (keep-first) with window
// W = window ms and the time base: the query a scenario runs, as a trace
// without steps.
func ScenarioQuery(window int64, base kstreams.TimeBase) *Trace {
	return &Trace{Mode: KeepFirst, Window: window, Time: base}
}

// QueryText returns t's query object, the JSON `simulate explain` takes:
// {"engine": "kafka-streams", "window": "2m", "time": "stream"}.
func (t *Trace) QueryText() string {
	o := struct {
		Engine string `json:"engine"`
		Window string `json:"window"`
		Time   string `json:"time"`
	}{Engine, ms(t.Window), t.Time.String()}
	b, _ := json.Marshal(o)
	return string(b)
}

// ScenarioOperator runs the window-store dedup of a scenario query on one
// task (every generated row reaches it: one partition): the record key is
// the event id, its timestamp the row's event time.
type ScenarioOperator struct {
	d    *kstreams.Dedup
	base kstreams.TimeBase
}

// NewScenarioOperator returns a fresh task for the keep-first query t.
func (t *Trace) NewScenarioOperator() (*ScenarioOperator, error) {
	if t.Mode != KeepFirst {
		return nil, errors.New("kafka-streams: only the window-store dedup (keep-first) runs in scenarios")
	}
	d, err := kstreams.NewDedup(t.Window, t.Time)
	if err != nil {
		return nil, err
	}
	return &ScenarioOperator{d: d, base: t.Time}, nil
}

// Function names the processor: the Confluent tutorial's
// FindDistinctEvents in stream time, the integration test's
// DeduplicationTransformer in record time.
func (s *ScenarioOperator) Function() string {
	if s.base == kstreams.RecordTime {
		return "DeduplicationTransformer"
	}
	return "FindDistinctEvents"
}

// Process pipes one record of key (the event id) with timestamp eventMs
// through the task and returns Emitted when it was forwarded, else
// DroppedDuplicate.
func (s *ScenarioOperator) Process(key []byte, eventMs int64) engines.Outcome {
	return s.d.Process(string(key), eventMs)
}

// State returns the window store's rows: logical (those all() returns)
// and physical (every row of a live segment). Wall-clock time does not
// enter: stream time moves only with records.
func (s *ScenarioOperator) State() (logical, physical int64) {
	st := s.d.Store()
	return int64(st.Len()), int64(st.PhysicalLen())
}

// DroppedRecords returns the task's dropped-records-total: puts into an
// expired segment.
func (s *ScenarioOperator) DroppedRecords() int64 { return s.d.Store().DroppedRecords() }
