// Package replay runs hand-written micro-batch traces through one query and
// reports what each executed micro-batch did, in the shape of Spark's
// StreamingQueryProgress. It implements the trace format of
// docs/replay-format.md (that of `simulate replay`), with one extension that mirrors
// Spark's own test harness:
//
// Manual clock. A trace with "manualClock": true runs as StreamTest does
// with a processing-time trigger and a StreamManualClock: an addData step
// only makes its rows available (an empty one still advances the source),
// and a step {"advanceManualClock": true} fires one trigger, as
// AdvanceManualClock(triggerInterval) does. The trigger runs one batch of
// all the rows made available since the last batch, in order, or, when
// none are and no-data batches are enabled, the no-data batch Spark would
// run, or nothing. A batch's "step" is the index of the advanceManualClock
// step that ran it. A restart keeps rows not yet in a batch available.
// Without "manualClock" (the default), every addData runs its batch and
// any no-data batch at once, as the format describes, and a trace holding
// an advanceManualClock step is rejected. The manual clock lets a trace
// show what the default cannot: a restart between a batch and the no-data
// batch that would follow it (Spark then runs none until data arrives), and
// a data batch following a data batch (its late filter lagging).
//
// Errors. A trace Spark rejects before it runs, or fails while it runs
// (a second withWatermark, once the watermark is not 0), is an error: one
// line, and no batch is printed, even those Spark ran before failing.
package replay

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/engines/spark/partition"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// Trace is a parsed, validated replay trace.
type Trace struct {
	Name               string
	Chain              chain.Chain
	Plan               chain.Plan
	NoDataMicroBatches bool
	// ManualClock is the extension described in the package comment.
	ManualClock bool
	// TriggerIntervalMs is how far advanceManualClock: true moves the
	// manual clock (key "triggerInterval", default 0): the processing time
	// a batch runs at (its batch timestamp) is the clock's, which starts at
	// the epoch. Only a transformWithState TTL reads it.
	TriggerIntervalMs int64
	Steps             []Step
	// EventTimeColumn is the schema index of the event-time column, or -1.
	EventTimeColumn int
	// SparkVersion is the Spark line the trace's expected output pins
	// (Spark35 or SparkLatest, the default). The two lines agree on every
	// rule dedupsim models (the real-Spark suite runs every trace on both),
	// so it changes no batch; it says which line a case was checked on.
	SparkVersion string
	// ShufflePartitions is spark.sql.shuffle.partitions as the trace's
	// expectations assume it (key "shufflePartitions", default 1): a
	// chain's later dedup operators read the rows grouped by the earlier
	// operator's partitions among it (microbatch.Query.SetShufflePartitions).
	ShufflePartitions int
}

// Step is one step of a trace: rows to add, a restart, or (with a manual
// clock) a trigger.
type Step struct {
	Restart bool
	// Trigger is an advanceManualClock step.
	Trigger bool
	// AdvanceMs is how far a Trigger step moves the manual clock before it
	// fires, in milliseconds: its duration, or the trace's triggerInterval
	// for advanceManualClock: true.
	AdvanceMs int64
	// Rows are the rows of an addData step (possibly none).
	Rows *RowSet
}

// RowSet is the rows of one addData step, encoded for the executor. It
// implements microbatch.Rows.
type RowSet struct {
	// Raw holds each row's JSON object as given, compacted.
	Raw []json.RawMessage
	// cells[i][c] is the key encoding of row i's value of column c.
	cells [][][]byte
	// eventTimes[i] is row i's event time in microseconds.
	eventTimes []int64
	// spark[i][c] is row i's value of column c as Spark types it, for
	// HashKey.
	spark [][]sparkCell
}

// sparkCell is one value as a Spark column holds it (see columnTypes).
type sparkCell struct {
	typ sparkType
	i   int64
	f   float64
	s   string
}

// sparkType is the Spark type of a trace column, as a PySpark driver that
// reads the rows with Python's json module and lets createDataFrame infer
// the schema gets it: strings StringType, booleans BooleanType, numbers
// written without a fraction or exponent LongType (Python ints) unless
// the column also holds others, then DoubleType (Python floats), the
// event-time column TimestampType.
type sparkType uint8

const (
	sparkNull sparkType = iota
	sparkString
	sparkBool
	sparkLong
	sparkDouble
	sparkTimestamp
)

// HashKey returns Spark's Murmur3 hash (seed 42) of row i's values of
// cols, each folded by its column's Spark type, nulls skipped as Spark
// skips them. It implements microbatch.KeyHasher.
func (r *RowSet) HashKey(i int, cols []int) int32 {
	h := partition.Seed
	row := r.spark[i]
	for _, c := range cols {
		if c >= len(row) {
			continue
		}
		v := &row[c]
		switch v.typ {
		case sparkString:
			h = partition.String(h, v.s)
		case sparkBool:
			h = partition.Bool(h, v.i != 0)
		case sparkLong:
			h = partition.Long(h, v.i)
		case sparkDouble:
			h = partition.Double(h, v.f)
		case sparkTimestamp:
			h = partition.Timestamp(h, v.i)
		}
	}
	return h
}

// Len returns the number of rows.
func (r *RowSet) Len() int { return len(r.Raw) }

// appendRows appends the rows of src to r.
func (r *RowSet) appendRows(src *RowSet) {
	r.Raw = append(r.Raw, src.Raw...)
	r.cells = append(r.cells, src.cells...)
	r.eventTimes = append(r.eventTimes, src.eventTimes...)
	r.spark = append(r.spark, src.spark...)
}

// EventTime returns row i's event time in microseconds; a trace has one
// timestamp column, so col is not consulted.
func (r *RowSet) EventTime(i, col int) int64 { return r.eventTimes[i] }

// AppendKey appends the encodings of row i's values of cols. Each cell's
// encoding is self-delimiting and typed (see encodeValue), so the
// concatenation is injective.
func (r *RowSet) AppendKey(dst []byte, i int, cols []int) []byte {
	row := r.cells[i]
	for _, c := range cols {
		if c < len(row) && row[c] != nil {
			dst = append(dst, row[c]...)
		} else {
			dst = append(dst, tagNull)
		}
	}
	return dst
}

// Value tags of the key encoding.
const (
	tagNull      = 'n'
	tagFalse     = 'f'
	tagTrue      = 't'
	tagString    = 's'
	tagNumber    = 'd'
	tagTimestamp = 'T'
)

// The Spark lines a trace's sparkVersion names.
const (
	Spark35     = "3.5"
	SparkLatest = "4"
)

type rawTrace struct {
	Name               string            `json:"name"`
	Query              json.RawMessage   `json:"query"`
	EventTime          *string           `json:"eventTime"`
	NoDataMicroBatches *bool             `json:"noDataMicroBatches"`
	ManualClock        *bool             `json:"manualClock"`
	ShufflePartitions  *int              `json:"shufflePartitions"`
	SparkVersion       *string           `json:"sparkVersion"`
	TriggerInterval    *string           `json:"triggerInterval"`
	Steps              []json.RawMessage `json:"steps"`
}

type rawStep struct {
	AddData            *[]json.RawMessage `json:"addData"`
	Restart            *bool              `json:"restart"`
	AdvanceManualClock json.RawMessage    `json:"advanceManualClock"`
}

const wantStep = `want {"addData": [rows]}, {"restart": true} or, with "manualClock": true, {"advanceManualClock": true} or {"advanceManualClock": "10 seconds"}`

// Load parses and validates a trace. Every error is one line naming the
// part of the trace at fault (steps[i].addData[j].column, query, ...).
//
// It goes in four steps: the trace's own keys and its query; the steps,
// whose rows give the schema in order of first appearance; the event-time
// column, resolved as Spark resolves a name; and, once the plan is made
// against that schema, the rows encoded for the executor.
func Load(data []byte) (*Trace, error) {
	t, rt, err := decodeTrace(data)
	if err != nil {
		return nil, err
	}
	steps, cols, colIdx, err := t.parseSteps(rt.Steps)
	if err != nil {
		return nil, err
	}
	if err := t.resolveEventTime(rt.EventTime, cols, colIdx); err != nil {
		return nil, err
	}
	schema := make(chain.Schema, len(cols))
	for i, n := range cols {
		schema[i] = chain.Column{Name: n, Type: chain.Other}
	}
	if t.EventTimeColumn >= 0 {
		schema[t.EventTimeColumn].Type = chain.Timestamp
	}
	// Failures Spark raises only while the query runs are left to the run.
	if t.Plan, err = chain.PlanDeferred(t.Chain, schema); err != nil {
		return nil, err
	}
	if err := t.encodeSteps(steps, cols, colIdx); err != nil {
		return nil, err
	}
	return t, nil
}

// parsedRow is one row of an addData step as written: its keys in order,
// its values, and its JSON.
type parsedRow struct {
	raw  json.RawMessage
	keys []string
	vals []any
}

// decodeTrace decodes the trace's own keys (unknown ones are errors) and
// parses its query.
func decodeTrace(data []byte) (*Trace, *rawTrace, error) {
	var rt rawTrace
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rt); err != nil {
		return nil, nil, fmt.Errorf("trace: %s", jsonErr(err, data))
	}
	if dec.More() {
		return nil, nil, errors.New("trace: trailing data after the JSON document")
	}
	if len(rt.Query) == 0 || string(rt.Query) == "null" {
		return nil, nil, errors.New("query: missing (want the operator chain, e.g. \"withWatermark(\\\"t\\\", \\\"10 seconds\\\").dropDuplicates([\\\"id\\\"])\")")
	}
	c, err := chain.ParseJSON(rt.Query)
	if err != nil {
		return nil, nil, err
	}
	if rt.Steps == nil {
		return nil, nil, errors.New("steps: missing (want a list of {\"addData\": [...]} and {\"restart\": true})")
	}
	t := &Trace{Name: rt.Name, Chain: c, NoDataMicroBatches: true, EventTimeColumn: -1}
	if rt.NoDataMicroBatches != nil {
		t.NoDataMicroBatches = *rt.NoDataMicroBatches
	}
	if rt.ManualClock != nil {
		t.ManualClock = *rt.ManualClock
	}
	if rt.TriggerInterval != nil {
		if !t.ManualClock {
			return nil, nil, errors.New("triggerInterval: only in a trace with \"manualClock\": true")
		}
		ms, err := interval.ParseSpark(*rt.TriggerInterval)
		if err != nil {
			return nil, nil, fmt.Errorf("triggerInterval: %v", err)
		}
		if ms < 0 {
			return nil, nil, fmt.Errorf("triggerInterval: %s is negative; want a duration of 0 or more", fileio.Quote(*rt.TriggerInterval))
		}
		t.TriggerIntervalMs = ms
	}
	for _, op := range c.Ops {
		if op.Kind == chain.TransformWithStateDedup && op.TimerMs == 0 && op.Timer == "" && !t.ManualClock {
			return nil, nil, errors.New(`query: a transformWithState processor in processing time runs a batch at every trigger, so Spark is never idle: write the trace with "manualClock": true and advanceManualClock steps`)
		}
	}
	t.ShufflePartitions = 1
	if rt.ShufflePartitions != nil {
		if n := *rt.ShufflePartitions; n < 1 || n > microbatch.MaxPartitions {
			return nil, nil, fmt.Errorf("shufflePartitions: %d; want 1 to %d (spark.sql.shuffle.partitions)", n, microbatch.MaxPartitions)
		}
		t.ShufflePartitions = *rt.ShufflePartitions
	}
	t.SparkVersion = SparkLatest
	if rt.SparkVersion != nil {
		if *rt.SparkVersion != Spark35 && *rt.SparkVersion != SparkLatest {
			return nil, nil, fmt.Errorf("sparkVersion: %s; want %q or %q (the Spark line the expected output pins)", fileio.Quote(*rt.SparkVersion), Spark35, SparkLatest)
		}
		t.SparkVersion = *rt.SparkVersion
	}
	return t, &rt, nil
}

// parseSteps reads every step: a restart, a trigger (manual clock) or an
// addData, whose rows it parses. It returns each step's rows and the
// columns in order of first appearance.
func (t *Trace) parseSteps(raws []json.RawMessage) (steps [][]parsedRow, cols []string, colIdx map[string]int, err error) {
	colIdx = map[string]int{}
	steps = make([][]parsedRow, len(raws))
	for si, rawS := range raws {
		var s rawStep
		d := json.NewDecoder(bytes.NewReader(rawS))
		d.DisallowUnknownFields()
		if err := d.Decode(&s); err != nil {
			return nil, nil, nil, fmt.Errorf("steps[%d]: %s (%s)", si, jsonErr(err, rawS), wantStep)
		}
		kinds := 0
		for _, set := range []bool{s.AddData != nil, s.Restart != nil, s.AdvanceManualClock != nil} {
			if set {
				kinds++
			}
		}
		switch {
		case kinds > 1:
			return nil, nil, nil, fmt.Errorf("steps[%d]: more than one of addData, restart and advanceManualClock; want exactly one", si)
		case s.Restart != nil:
			if !*s.Restart {
				return nil, nil, nil, fmt.Errorf("steps[%d].restart: want true, got false", si)
			}
			t.Steps = append(t.Steps, Step{Restart: true})
			continue
		case s.AdvanceManualClock != nil:
			adv := t.TriggerIntervalMs
			switch v := bytes.TrimSpace(s.AdvanceManualClock); {
			case string(v) == "true":
			case len(v) > 0 && v[0] == '"':
				var text string
				if err := json.Unmarshal(v, &text); err != nil {
					return nil, nil, nil, fmt.Errorf("steps[%d].advanceManualClock: %v", si, err)
				}
				ms, err := interval.ParseSpark(text)
				if err != nil {
					return nil, nil, nil, fmt.Errorf("steps[%d].advanceManualClock: %v", si, err)
				}
				if ms < 0 {
					return nil, nil, nil, fmt.Errorf("steps[%d].advanceManualClock: %s moves the clock back; want a duration of 0 or more", si, fileio.Quote(text))
				}
				adv = ms
			default:
				return nil, nil, nil, fmt.Errorf("steps[%d].advanceManualClock: want true or a duration such as \"10 seconds\", got %s", si, fileio.Quote(string(v)))
			}
			if !t.ManualClock {
				return nil, nil, nil, fmt.Errorf("steps[%d].advanceManualClock: only in a trace with \"manualClock\": true (without it, addData runs its batches at once)", si)
			}
			t.Steps = append(t.Steps, Step{Trigger: true, AdvanceMs: adv})
			continue
		case s.AddData == nil:
			return nil, nil, nil, fmt.Errorf("steps[%d]: %s", si, wantStep)
		}
		rows := make([]parsedRow, 0, len(*s.AddData))
		for ri, raw := range *s.AddData {
			keys, vals, err := parseRow(raw)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("steps[%d].addData[%d]: %v", si, ri, err)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, nil, nil, fmt.Errorf("steps[%d].addData[%d]: %v", si, ri, err)
			}
			for _, k := range keys {
				if _, ok := colIdx[k]; !ok {
					colIdx[k] = len(cols)
					cols = append(cols, k)
				}
			}
			rows = append(rows, parsedRow{raw: buf.Bytes(), keys: keys, vals: vals})
		}
		steps[si] = rows
		t.Steps = append(t.Steps, Step{})
	}
	return steps, cols, colIdx, nil
}

// resolveEventTime sets the event-time column: the trace's, else the
// first withWatermark's, resolved like Spark does: the exact name first,
// then a unique case-insensitive match.
func (t *Trace) resolveEventTime(eventTime *string, cols []string, colIdx map[string]int) error {
	etName := ""
	if eventTime != nil {
		etName = *eventTime
		if etName == "" {
			return errors.New("eventTime: empty column name")
		}
	} else {
		for _, op := range t.Chain.Ops {
			if op.Kind == chain.WithWatermark {
				etName = op.Column
				break
			}
		}
	}
	if etName == "" {
		return nil
	}
	if i, ok := colIdx[etName]; ok {
		t.EventTimeColumn = i
	} else {
		for i, n := range cols {
			if strings.EqualFold(n, etName) {
				if t.EventTimeColumn >= 0 {
					return fmt.Errorf("eventTime: column %q is ambiguous (%s, %s)", etName, cols[t.EventTimeColumn], n)
				}
				t.EventTimeColumn = i
			}
		}
	}
	if t.EventTimeColumn < 0 && len(cols) > 0 {
		return fmt.Errorf("eventTime: no row has a column %q (columns: %s)", etName, strings.Join(cols, ", "))
	}
	return nil
}

// encodeSteps encodes the rows of every addData step for the executor:
// each cell's key encoding, its Spark value, and each row's event time.
func (t *Trace) encodeSteps(steps [][]parsedRow, cols []string, colIdx map[string]int) error {
	types, err := t.columnTypes(steps, cols, colIdx)
	if err != nil {
		return err
	}
	for si, rows := range steps {
		if t.Steps[si].Restart || t.Steps[si].Trigger {
			continue
		}
		rs := &RowSet{
			Raw:        make([]json.RawMessage, len(rows)),
			cells:      make([][][]byte, len(rows)),
			eventTimes: make([]int64, len(rows)),
			spark:      make([][]sparkCell, len(rows)),
		}
		for ri, r := range rows {
			rs.Raw[ri] = r.raw
			cells := make([][]byte, len(cols))
			sc := make([]sparkCell, len(cols))
			hasET := false
			for k, name := range r.keys {
				c := colIdx[name]
				if c == t.EventTimeColumn {
					us, err := eventTimeMicros(r.vals[k])
					if err != nil {
						return fmt.Errorf("steps[%d].addData[%d].%s: %v", si, ri, name, err)
					}
					rs.eventTimes[ri] = us
					cells[c] = binary.BigEndian.AppendUint64([]byte{tagTimestamp}, uint64(us))
					sc[c] = sparkCell{typ: sparkTimestamp, i: us}
					hasET = true
					continue
				}
				cells[c] = encodeValue(r.vals[k])
				sc[c] = sparkValue(r.vals[k], types[c])
			}
			if t.EventTimeColumn >= 0 && !hasET {
				return fmt.Errorf("steps[%d].addData[%d]: no %s column: every row needs its event time", si, ri, cols[t.EventTimeColumn])
			}
			rs.cells[ri] = cells
			rs.spark[ri] = sc
		}
		t.Steps[si].Rows = rs
	}
	return nil
}

// columnTypes returns each column's Spark type (see sparkType). With
// shufflePartitions above 1 a column must hold values of one kind (strings,
// booleans or numbers), as a Spark column has one type: a chain's rows
// are then placed in partitions by their Spark hash. With 1 nothing is
// hashed and a column may mix kinds, compared by value as before.
func (t *Trace) columnTypes(steps [][]parsedRow, cols []string, colIdx map[string]int) ([]sparkType, error) {
	types := make([]sparkType, len(cols))
	for si, rows := range steps {
		for ri, r := range rows {
			for k, name := range r.keys {
				c := colIdx[name]
				if c == t.EventTimeColumn {
					types[c] = sparkTimestamp
					continue
				}
				var typ sparkType
				switch x := r.vals[k].(type) {
				case string:
					typ = sparkString
				case bool:
					typ = sparkBool
				case json.Number:
					typ = sparkLong
					if strings.ContainsAny(string(x), ".eE") {
						typ = sparkDouble
					} else if _, err := strconv.ParseInt(string(x), 10, 64); err != nil {
						typ = sparkDouble
					}
				default:
					continue
				}
				switch have := types[c]; {
				case have == sparkNull || have == typ:
					types[c] = typ
				case (have == sparkLong || have == sparkDouble) && (typ == sparkLong || typ == sparkDouble):
					types[c] = sparkDouble
				case t.ShufflePartitions > 1:
					return nil, fmt.Errorf("steps[%d].addData[%d].%s: %s where earlier rows hold %s: with shufflePartitions %d rows are hashed by their Spark types, and a column has one",
						si, ri, name, typ, have, t.ShufflePartitions)
				}
			}
		}
	}
	return types, nil
}

// String names the kind of value a Spark type holds, for messages.
func (s sparkType) String() string {
	switch s {
	case sparkString:
		return "a string"
	case sparkBool:
		return "a boolean"
	case sparkLong, sparkDouble:
		return "a number"
	case sparkTimestamp:
		return "a timestamp"
	}
	return "null"
}

// sparkValue returns v as a column of Spark type typ holds it.
func sparkValue(v any, typ sparkType) sparkCell {
	switch x := v.(type) {
	case string:
		return sparkCell{typ: sparkString, s: x}
	case bool:
		if x {
			return sparkCell{typ: sparkBool, i: 1}
		}
		return sparkCell{typ: sparkBool}
	case json.Number:
		if typ == sparkLong {
			if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return sparkCell{typ: sparkLong, i: i}
			}
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return sparkCell{typ: sparkDouble, f: f}
	}
	return sparkCell{}
}

// parseRow reads one flat JSON object, keeping its keys in order and its
// numbers as written.
func parseRow(raw json.RawMessage) ([]string, []any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("bad JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("want a flat JSON object, got %s", describe(tok))
	}
	var keys []string
	var vals []any
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("bad JSON: %v", err)
		}
		k := kt.(string)
		if seen[k] {
			return nil, nil, fmt.Errorf("column %q appears twice", k)
		}
		seen[k] = true
		vt, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: bad JSON: %v", k, err)
		}
		if _, ok := vt.(json.Delim); ok {
			return nil, nil, fmt.Errorf("%s: want a string, number, boolean or null (rows are flat), got a nested value", k)
		}
		keys = append(keys, k)
		vals = append(vals, vt)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("bad JSON: %v", err)
	}
	return keys, vals, nil
}

func describe(tok any) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return string(v)
	case string:
		return fmt.Sprintf("the string %q", v)
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%v", v)
	}
}

// encodeValue returns a typed, self-delimiting encoding of a JSON scalar.
// Numbers are compared by value (1 and 1.0 are the same key), through
// their exact rational value, never through a float.
func encodeValue(v any) []byte {
	switch x := v.(type) {
	case nil:
		return []byte{tagNull}
	case bool:
		if x {
			return []byte{tagTrue}
		}
		return []byte{tagFalse}
	case string:
		b := binary.AppendUvarint([]byte{tagString}, uint64(len(x)))
		return append(b, x...)
	case json.Number:
		s := string(x)
		if d, ok := parseDecimal(s); ok {
			s = d.canonical()
		}
		b := binary.AppendUvarint([]byte{tagNumber}, uint64(len(s)))
		return append(b, s...)
	}
	return []byte{tagNull}
}

// eventTimeMicros converts an event-time value: seconds since the epoch
// (integer or fractional, like timestamp_seconds) or an RFC 3339 string,
// kept to the microsecond with finer digits dropped.
func eventTimeMicros(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		d, ok := parseDecimal(string(x))
		if !ok {
			return 0, fmt.Errorf("want seconds since the epoch, got %s", x)
		}
		us, ok := d.micros()
		if !ok {
			return 0, fmt.Errorf("event time %s is out of range", x)
		}
		return us, nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return 0, fmt.Errorf("want seconds since the epoch or an RFC 3339 timestamp, got %q", x)
		}
		return t.Unix()*1_000_000 + int64(t.Nanosecond()/1000), nil
	case nil:
		return 0, errors.New("event time is null; every row needs one")
	default:
		return 0, fmt.Errorf("want seconds since the epoch or an RFC 3339 timestamp, got %v", x)
	}
}

// jsonErr renders a JSON decoding error with its position.
func jsonErr(err error, data []byte) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(data, se.Offset)
		return fmt.Sprintf("bad JSON at line %d, column %d: %v", line, col, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: want %s, got a JSON %s", te.Field, te.Type, te.Value)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "bad JSON: unexpected end of input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func position(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
