// Package kstreams is the Kafka Streams front end of `simulate replay` and
// `simulate explain` (reached through sim/registry): it parses a Kafka
// Streams trace (docs/kafka-streams.md) and the query forms of a Kafka
// Streams dedup (the window-store pattern with its window W and time base,
// or keep-last through toTable), runs a trace through the models of
// engines/kstreams into one line per step, and explains a query.
package kstreams

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/kstreams"
	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

// Engine is the value of a trace's "engine" field that this package runs.
const Engine = "kafka-streams"

// Mode is the dedup a trace runs.
type Mode uint8

const (
	// KeepFirst is the window-store dedup processor.
	KeepFirst Mode = iota
	// KeepLast is stream.toTable(Materialized.as(...)), or with Reduce
	// groupByKey().reduce((old, new) -> new).
	KeepLast
)

// Trace is a parsed, validated Kafka Streams trace.
type Trace struct {
	Name string
	Mode Mode
	// Window is W in ms (KeepFirst only).
	Window int64
	Time   kstreams.TimeBase
	// Punctuate is the punctuation interval P in ms of a wall-clock
	// query (Time kstreams.WallClock), 0 otherwise.
	Punctuate int64
	// Partitions is the number of partitions of the repartition topic
	// keyed by the event id, one task each (KeepFirst queries only, not
	// traces: TopologyTestDriver runs one task); 0 means 1.
	Partitions int
	// Reduce selects groupByKey().reduce for KeepLast.
	Reduce bool
	Steps  []Step
}

// Step is one step: records to pipe in order, or a wall-clock advance.
type Step struct {
	Records []Record
	// WallClock is the wall-clock advance in ms of an advanceWallClock step.
	WallClock int64
	// Advance marks an advanceWallClock step.
	Advance bool
}

// Record is one input record; the key is the event id.
type Record struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	Timestamp int64  `json:"timestamp"`
}

type rawTrace struct {
	Engine string          `json:"engine"`
	Name   string          `json:"name"`
	Source string          `json:"source"`
	Mode   *string         `json:"mode"`
	Window json.RawMessage `json:"window"`
	Time   *string         `json:"time"`
	// Punctuate is a wall-clock query's punctuation interval.
	Punctuate json.RawMessage `json:"punctuate"`
	Form      *string         `json:"form"`
	// Partitions is a query's (not a trace's) partition count.
	Partitions *float64          `json:"partitions"`
	Steps      []json.RawMessage `json:"steps"`
}

type rawStep struct {
	Records          *[]json.RawMessage `json:"records"`
	AdvanceWallClock json.RawMessage    `json:"advanceWallClock"`
}

// Load parses and validates a Kafka Streams trace. Its errors are one line
// naming the key at fault and what it expects.
func Load(data []byte) (*Trace, error) { return load(data, true) }

// LoadQuery parses explain's query: the query fields of a trace, a
// JSON object with "engine": "kafka-streams" and no steps.
func LoadQuery(data []byte) (*Trace, error) { return load(data, false) }

// load is Load; without needSteps, a document without steps is a query
// (explain's input) and parses to a trace with none.
func load(data []byte, needSteps bool) (*Trace, error) {
	var rt rawTrace
	if err := enginetrace.DecodeTrace(data, &rt, Engine, "Kafka Streams"); err != nil {
		return nil, err
	}
	t := &Trace{Name: rt.Name}
	mode := "keep-first"
	if rt.Mode != nil {
		mode = *rt.Mode
	}
	switch mode {
	case "keep-first":
		t.Mode = KeepFirst
	case "keep-last":
		t.Mode = KeepLast
	default:
		return nil, fmt.Errorf("mode: %s, want \"keep-first\" (the window-store pattern) or \"keep-last\" (toTable)", fileio.Quote(mode))
	}
	if rt.Partitions != nil {
		n, err := checkPartitions(*rt.Partitions, t.Mode, rt.Steps != nil)
		if err != nil {
			return nil, fmt.Errorf("partitions: %v", err)
		}
		t.Partitions = n
	}
	if t.Mode == KeepLast {
		if rt.Window != nil || rt.Time != nil || rt.Punctuate != nil {
			return nil, errors.New("window, time, punctuate: keep-last (toTable) keeps every key forever and takes none")
		}
		if rt.Form != nil {
			switch *rt.Form {
			case "toTable":
			case "reduce":
				t.Reduce = true
			default:
				return nil, fmt.Errorf("form: %s, want \"toTable\" (stream.toTable) or \"reduce\" (groupByKey().reduce)", fileio.Quote(*rt.Form))
			}
		}
	} else {
		if rt.Form != nil {
			return nil, errors.New("form: only keep-last takes a form (toTable or reduce)")
		}
		if rt.Window == nil {
			return nil, errors.New("window: missing: the window store's retention and window size W, e.g. \"2 minutes\"")
		}
		w, err := enginetrace.Millis(rt.Window, "2 minutes")
		if err != nil {
			return nil, fmt.Errorf("window: %v", err)
		}
		if err := CheckWindow(w); err != nil {
			return nil, fmt.Errorf("window: %v", err)
		}
		t.Window = w
		base := "stream"
		if rt.Time != nil {
			base = *rt.Time
		}
		if t.Time, err = ParseTime(base); err != nil {
			return nil, fmt.Errorf("time: %v", err)
		}
		if t.Punctuate, err = parsePunctuate(rt.Punctuate, t.Time); err != nil {
			return nil, fmt.Errorf("punctuate: %v", err)
		}
		if t.Time == kstreams.WallClock && t.Partitions > 1 {
			return nil, errors.New("partitions: a wall-clock query runs on one task: its tasks share the wall clock and their punctuations, so partitions change nothing")
		}
	}
	if rt.Steps == nil {
		if !needSteps {
			return t, nil
		}
		return nil, errors.New("steps: missing")
	}
	for i, raw := range rt.Steps {
		s, err := parseStep(raw)
		if err != nil {
			return nil, fmt.Errorf("steps[%d]: %v", i, err)
		}
		t.Steps = append(t.Steps, s)
	}
	return t, nil
}

// parsePunctuate returns the punctuation interval raw gives a query of
// time base b: required for wall-clock, refused otherwise.
func parsePunctuate(raw json.RawMessage, b kstreams.TimeBase) (int64, error) {
	if b != kstreams.WallClock {
		if raw != nil {
			return 0, fmt.Errorf("only a wall-clock query (\"time\": \"wall-clock\") takes a punctuation interval; this one looks up at %s time", b)
		}
		return 0, nil
	}
	if raw == nil {
		return 0, errors.New("missing: a wall-clock query's punctuation interval P (PunctuationType.WALL_CLOCK_TIME), e.g. \"30 seconds\"")
	}
	p, err := enginetrace.Millis(raw, "30 seconds")
	if err != nil {
		return 0, err
	}
	if err := CheckPunctuate(p); err != nil {
		return 0, err
	}
	return p, nil
}

// checkPartitions returns the partition count f of a query of mode m,
// or why it is refused: a trace (withSteps) runs on one task, as
// TopologyTestDriver does.
func checkPartitions(f float64, m Mode, withSteps bool) (int, error) {
	switch {
	case m != KeepFirst:
		return 0, errors.New("only keep-first (the window-store pattern) takes partitions")
	case withSteps:
		return 0, errors.New("a trace runs on one task (TopologyTestDriver's); only a query (explain, a scenario) takes partitions")
	}
	n := int(f)
	if float64(n) != f {
		return 0, fmt.Errorf("%v, want a whole number of partitions", f)
	}
	if err := CheckPartitions(int64(n)); err != nil {
		return 0, fmt.Errorf("%v, got %d", err, n)
	}
	return n, nil
}

func parseStep(raw json.RawMessage) (Step, error) {
	var rs rawStep
	if err := enginetrace.DecodeStrict(raw, &rs); err != nil {
		return Step{}, fmt.Errorf("want {\"records\": [...]} or {\"advanceWallClock\": DURATION}: %v", err)
	}
	if (rs.Records == nil) == (rs.AdvanceWallClock == nil) {
		return Step{}, errors.New("want exactly one of \"records\" and \"advanceWallClock\"")
	}
	if rs.AdvanceWallClock != nil {
		d, err := enginetrace.Millis(rs.AdvanceWallClock, "2 minutes")
		if err != nil {
			return Step{}, fmt.Errorf("advanceWallClock: %v", err)
		}
		return Step{Advance: true, WallClock: d}, nil
	}
	var s Step
	for j, rr := range *rs.Records {
		var r enginetrace.RawRecord
		if err := enginetrace.DecodeStrict(rr, &r); err != nil {
			return Step{}, fmt.Errorf("records[%d]: want {\"key\": STRING, \"value\": STRING, \"timestamp\": MS}: %v", j, err)
		}
		if r.Key == nil {
			return Step{}, fmt.Errorf("records[%d].key: missing: the event id (a string)", j)
		}
		if r.Timestamp == nil {
			return Step{}, fmt.Errorf("records[%d].timestamp: missing: milliseconds since the epoch", j)
		}
		ts, ok := enginetrace.WholeMillis(*r.Timestamp)
		if !ok {
			why := enginetrace.WhyNotMillis(*r.Timestamp)
			if *r.Timestamp < 0 {
				why += " (Kafka rejects negative timestamps)"
			}
			return Step{}, fmt.Errorf("records[%d].timestamp: %s is %s; want a whole number of milliseconds from 0 to 2^53", j, strconv.FormatFloat(*r.Timestamp, 'f', -1, 64), why)
		}
		rec := Record{Key: *r.Key, Timestamp: ts}
		if r.Value != nil {
			rec.Value = *r.Value
		}
		s.Records = append(s.Records, rec)
	}
	return s, nil
}
