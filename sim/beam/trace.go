// Package beam is the Beam front end of `simulate replay` and `simulate
// explain` (reached through sim/registry): it parses a Beam trace
// (docs/beam.md) and the query form of a Beam Deduplicate (time domain,
// duration, window), runs a trace through the model of engines/beam into
// one line per step, and explains a query.
package beam

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dedupsim/dedupsim/engines/beam"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

// Engine is the value of a trace's "engine" field that this package runs.
const Engine = "beam"

// Trace is a parsed, validated Beam trace.
type Trace struct {
	Name     string
	Domain   beam.TimeDomain
	Duration int64
	// Window is the fixed windows' size in ms, 0 for the global window;
	// Lateness their allowed lateness in ms (fixed windows only).
	Window   int64
	Lateness int64
	Steps    []Step
}

// StepKind says what a step does.
type StepKind uint8

const (
	// AddElements adds elements (TestStream.addElements).
	AddElements StepKind = iota
	// AdvanceWatermark moves the watermark to At (advanceWatermarkTo).
	AdvanceWatermark
	// AdvanceProcessingTime moves processing time by By (advanceProcessingTime).
	AdvanceProcessingTime
)

// Step is one TestStream event.
type Step struct {
	Kind     StepKind
	Elements []Element
	At       int64
	By       int64
}

// Element is one keyed element with its event timestamp in ms.
type Element struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	Timestamp int64  `json:"timestamp"`
}

type rawTrace struct {
	Engine     string          `json:"engine"`
	Name       string          `json:"name"`
	Source     string          `json:"source"`
	TimeDomain *string         `json:"timeDomain"`
	Duration   json.RawMessage `json:"duration"`
	Window     json.RawMessage `json:"window"`
	// AllowedLateness is Window.withAllowedLateness (fixed windows only).
	AllowedLateness json.RawMessage   `json:"allowedLateness"`
	Steps           []json.RawMessage `json:"steps"`
}

type rawStep struct {
	Elements              *[]json.RawMessage `json:"elements"`
	AdvanceWatermark      *float64           `json:"advanceWatermark"`
	AdvanceProcessingTime json.RawMessage    `json:"advanceProcessingTime"`
}

// Load parses and validates a Beam trace. It rejects what TestStream
// rejects (a watermark that does not advance, a processing-time advance
// that is not positive) and a step holding two elements of one key, whose
// order the DirectRunner does not promise. Its errors are one line naming
// the key at fault.
func Load(data []byte) (*Trace, error) { return load(data, true) }

// LoadQuery parses explain's query: the query fields of a trace, a
// JSON object with "engine": "beam" and no steps.
func LoadQuery(data []byte) (*Trace, error) { return load(data, false) }

// load is Load; without needSteps, a document without steps is a query
// (explain's input) and parses to a trace with none.
func load(data []byte, needSteps bool) (*Trace, error) {
	var rt rawTrace
	if err := enginetrace.DecodeTrace(data, &rt, Engine, "Beam"); err != nil {
		return nil, err
	}
	t := &Trace{Name: rt.Name, Domain: beam.ProcessingTime, Duration: beam.DefaultDuration}
	if rt.TimeDomain != nil {
		var err error
		if t.Domain, err = ParseTimeDomain(*rt.TimeDomain); err != nil {
			return nil, fmt.Errorf("timeDomain: %v", err)
		}
	}
	if rt.Duration != nil {
		d, err := enginetrace.Millis(rt.Duration, "10 minutes")
		if err != nil {
			return nil, fmt.Errorf("duration: %v", err)
		}
		if err := CheckDuration(d); err != nil {
			return nil, fmt.Errorf("duration: %v", err)
		}
		t.Duration = d
	}
	if rt.Window != nil {
		w, err := parseWindow(rt.Window)
		if err != nil {
			return nil, fmt.Errorf("window: %v", err)
		}
		t.Window = w
	}
	if rt.AllowedLateness != nil {
		l, err := enginetrace.Millis(rt.AllowedLateness, "5 seconds")
		if err != nil {
			return nil, fmt.Errorf("allowedLateness: %v", err)
		}
		if err := CheckLateness(l, t.Window); err != nil {
			return nil, fmt.Errorf("allowedLateness: %v", err)
		}
		t.Lateness = l
	}
	if rt.Steps == nil {
		if !needSteps {
			return t, nil
		}
		return nil, errors.New("steps: missing")
	}
	watermark := beam.MinTimestamp
	for i, raw := range rt.Steps {
		s, err := parseStep(raw, watermark, t.Window)
		if err != nil {
			return nil, fmt.Errorf("steps[%d]: %v", i, err)
		}
		if s.Kind == AdvanceWatermark {
			watermark = s.At
		}
		t.Steps = append(t.Steps, s)
	}
	return t, nil
}

// parseWindow parses "global" or {"fixed": DURATION} into a fixed window
// size (0 for the global window).
func parseWindow(raw json.RawMessage) (int64, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		if name == "global" {
			return 0, nil
		}
		return 0, fmt.Errorf("%s, want \"global\" or {\"fixed\": DURATION}", fileio.Quote(name))
	}
	var fixed struct {
		Fixed json.RawMessage `json:"fixed"`
	}
	if err := enginetrace.DecodeStrict(raw, &fixed); err != nil || fixed.Fixed == nil {
		return 0, errors.New("want \"global\" or {\"fixed\": DURATION}")
	}
	size, err := enginetrace.Millis(fixed.Fixed, "10 minutes")
	if err != nil {
		return 0, fmt.Errorf("fixed: %v", err)
	}
	if size < 1 {
		return 0, errors.New("fixed: the window size must be at least 1 ms")
	}
	return size, nil
}

func parseStep(raw json.RawMessage, watermark, window int64) (Step, error) {
	var rs rawStep
	if err := enginetrace.DecodeStrict(raw, &rs); err != nil {
		return Step{}, fmt.Errorf("want {\"elements\": [...]}, {\"advanceWatermark\": MS} or {\"advanceProcessingTime\": DURATION}: %v", err)
	}
	n := 0
	for _, set := range []bool{rs.Elements != nil, rs.AdvanceWatermark != nil, rs.AdvanceProcessingTime != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return Step{}, errors.New("want exactly one of \"elements\", \"advanceWatermark\" and \"advanceProcessingTime\"")
	}
	switch {
	case rs.AdvanceWatermark != nil:
		at, ok := enginetrace.WholeMillis(*rs.AdvanceWatermark)
		if !ok {
			return Step{}, fmt.Errorf("advanceWatermark: %v, want a whole number of milliseconds >= 0", *rs.AdvanceWatermark)
		}
		if at <= watermark {
			return Step{}, fmt.Errorf("advanceWatermark: %d, want more than the watermark %d (TestStream's watermark must advance)", at, watermark)
		}
		return Step{Kind: AdvanceWatermark, At: at}, nil
	case rs.AdvanceProcessingTime != nil:
		by, err := enginetrace.Millis(rs.AdvanceProcessingTime, "10 minutes")
		if err != nil {
			return Step{}, fmt.Errorf("advanceProcessingTime: %v", err)
		}
		if by < 1 {
			return Step{}, errors.New("advanceProcessingTime: must be positive (TestStream rejects a zero advance)")
		}
		return Step{Kind: AdvanceProcessingTime, By: by}, nil
	}
	s := Step{Kind: AddElements}
	type keyWindow struct {
		key   string
		start int64
	}
	keys := map[keyWindow]bool{}
	for j, re := range *rs.Elements {
		var e enginetrace.RawRecord
		if err := enginetrace.DecodeStrict(re, &e); err != nil {
			return Step{}, fmt.Errorf("elements[%d]: want {\"key\": STRING, \"value\": STRING, \"timestamp\": MS}: %v", j, err)
		}
		if e.Key == nil {
			return Step{}, fmt.Errorf("elements[%d].key: missing: the dedup key (a string)", j)
		}
		if e.Timestamp == nil {
			return Step{}, fmt.Errorf("elements[%d].timestamp: missing: the event timestamp in milliseconds", j)
		}
		ts, ok := enginetrace.WholeMillis(*e.Timestamp)
		if !ok {
			return Step{}, fmt.Errorf("elements[%d].timestamp: %v, want a whole number of milliseconds >= 0", j, *e.Timestamp)
		}
		kw := keyWindow{key: *e.Key}
		if window > 0 {
			kw.start = ts - ts%window
		}
		if keys[kw] {
			return Step{}, fmt.Errorf("elements[%d].key: %s is already in this step (and window): put each copy of a key in its own step (the DirectRunner does not promise their order)", j, fileio.Quote(*e.Key))
		}
		keys[kw] = true
		el := Element{Key: *e.Key, Timestamp: ts}
		if e.Value != nil {
			el.Value = *e.Value
		}
		s.Elements = append(s.Elements, el)
	}
	return s, nil
}
