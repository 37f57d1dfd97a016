package progresslog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// kind is what a JSON object of the input turned out to be.
type kind int

const (
	// kindProgress is a StreamingQueryProgress record.
	kindProgress kind = iota
	// kindEvent is another event a StreamingQueryListener writes: a
	// query started, idle or terminated event has an id and a runId but
	// none of a progress record's fields. It is skipped.
	kindEvent
	// kindOther is any other object.
	kindOther
)

// recordError is a problem with one record, at a line of the input.
type recordError struct {
	line int
	msg  string
}

func (e *recordError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// wireProgress holds the fields of a record that Progress keeps, each as
// the JSON text the record has for it (nil when absent), so that a record
// is classified before any field's type is checked and every type error
// can name its field's whole path.
type wireProgress struct {
	ID                     json.RawMessage `json:"id"`
	RunID                  json.RawMessage `json:"runId"`
	Name                   json.RawMessage `json:"name"`
	Timestamp              json.RawMessage `json:"timestamp"`
	BatchID                json.RawMessage `json:"batchId"`
	BatchDuration          json.RawMessage `json:"batchDuration"`
	NumInputRows           json.RawMessage `json:"numInputRows"`
	InputRowsPerSecond     json.RawMessage `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond json.RawMessage `json:"processedRowsPerSecond"`
	DurationMs             json.RawMessage `json:"durationMs"`
	EventTime              json.RawMessage `json:"eventTime"`
	StateOperators         json.RawMessage `json:"stateOperators"`
	Sources                json.RawMessage `json:"sources"`
	Sink                   json.RawMessage `json:"sink"`
}

// wireOperator is a StateOperatorProgress as JSON texts.
type wireOperator struct {
	OperatorName              json.RawMessage `json:"operatorName"`
	NumRowsTotal              json.RawMessage `json:"numRowsTotal"`
	NumRowsUpdated            json.RawMessage `json:"numRowsUpdated"`
	AllUpdatesTimeMs          json.RawMessage `json:"allUpdatesTimeMs"`
	NumRowsRemoved            json.RawMessage `json:"numRowsRemoved"`
	AllRemovalsTimeMs         json.RawMessage `json:"allRemovalsTimeMs"`
	CommitTimeMs              json.RawMessage `json:"commitTimeMs"`
	MemoryUsedBytes           json.RawMessage `json:"memoryUsedBytes"`
	NumRowsDroppedByWatermark json.RawMessage `json:"numRowsDroppedByWatermark"`
	NumShufflePartitions      json.RawMessage `json:"numShufflePartitions"`
	NumStateStoreInstances    json.RawMessage `json:"numStateStoreInstances"`
	CustomMetrics             json.RawMessage `json:"customMetrics"`
}

// wireSource is a SourceProgress as JSON texts.
type wireSource struct {
	Description            json.RawMessage `json:"description"`
	NumInputRows           json.RawMessage `json:"numInputRows"`
	InputRowsPerSecond     json.RawMessage `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond json.RawMessage `json:"processedRowsPerSecond"`
}

// wireSink is a SinkProgress as JSON texts.
type wireSink struct {
	Description   json.RawMessage `json:"description"`
	NumOutputRows json.RawMessage `json:"numOutputRows"`
}

// present reports whether a field is in the record and not null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// isString reports whether a field holds a JSON string.
func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// maxInterned bounds the names a Reader keeps one copy of.
const maxInterned = 4096

// interner keeps one copy of each metric and phase name, which every
// record repeats.
type interner map[string]string

func (in interner) get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	if len(in) < maxInterned {
		in[s] = s
	}
	return s
}

// decodeRecord decodes the JSON object raw, whose opening brace is on
// line start of the input. It returns kindOther, and no error, for valid
// JSON that is not a progress record or a listener event; a
// *recordError for malformed JSON or a progress record with a field of
// the wrong type.
func decodeRecord(raw []byte, start int, names interner) (Progress, kind, error) {
	var w wireProgress
	if err := json.Unmarshal(raw, &w); err != nil {
		line := start
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset > 0 && int(se.Offset) <= len(raw) {
			line += bytes.Count(raw[:se.Offset-1], []byte{'\n'})
			return Progress{}, kindOther, &recordError{line, "malformed JSON: " + se.Error()}
		}
		return Progress{}, kindOther, &recordError{line, "malformed JSON: " + err.Error()}
	}
	if !isString(w.ID) || !isString(w.RunID) {
		return Progress{}, kindOther, nil
	}
	if !present(w.BatchID) && !present(w.NumInputRows) && !present(w.DurationMs) &&
		!present(w.StateOperators) && !present(w.Sources) && !present(w.Sink) {
		return Progress{}, kindEvent, nil
	}
	d := decoder{names: names}
	p := Progress{
		Line:                   start,
		ID:                     d.str(w.ID, "id"),
		RunID:                  d.str(w.RunID, "runId"),
		Name:                   d.str(w.Name, "name"),
		Timestamp:              d.time(w.Timestamp, "timestamp"),
		BatchID:                d.int(w.BatchID, "batchId"),
		BatchDuration:          d.int(w.BatchDuration, "batchDuration"),
		NumInputRows:           d.int(w.NumInputRows, "numInputRows"),
		InputRowsPerSecond:     d.float(w.InputRowsPerSecond, "inputRowsPerSecond"),
		ProcessedRowsPerSecond: d.float(w.ProcessedRowsPerSecond, "processedRowsPerSecond"),
	}
	p.DurationMs = d.durations(w.DurationMs)
	p.EventTime = d.eventTime(w.EventTime)
	p.StateOperators = d.operators(w.StateOperators)
	p.Sources = d.sources(w.Sources)
	p.Sink = d.sink(w.Sink)
	if d.err != "" {
		return Progress{}, kindProgress, &recordError{start, d.err}
	}
	return p, kindProgress, nil
}

// decoder converts JSON texts to Progress fields, keeping the first
// problem, which names the field's path.
type decoder struct {
	names interner
	err   string
}

// fail records that the field at path holds raw where want was expected.
func (d *decoder) fail(path, want string, raw json.RawMessage) {
	if d.err == "" {
		d.err = fmt.Sprintf("progress record: %s: want %s, got %s", path, want, show(firstLine(raw)))
	}
}

func (d *decoder) str(raw json.RawMessage, path string) string {
	if !present(raw) {
		return ""
	}
	var s string
	if !isString(raw) || json.Unmarshal(raw, &s) != nil {
		d.fail(path, "a string", raw)
		return ""
	}
	return s
}

func (d *decoder) int(raw json.RawMessage, path string) Int {
	if !present(raw) {
		return Int{}
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		d.fail(path, "an integer", raw)
		return Int{}
	}
	return Int{Value: v, OK: true}
}

func (d *decoder) float(raw json.RawMessage, path string) Float {
	if !present(raw) {
		return Float{}
	}
	// A JSON number never starts with a quote, a letter or a bracket,
	// which ParseFloat would take for "Inf" or "NaN".
	c := raw[0]
	if c != '-' && (c < '0' || c > '9') {
		d.fail(path, "a number", raw)
		return Float{}
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		d.fail(path, "a number", raw)
		return Float{}
	}
	return Float{Value: v, OK: true}
}

func (d *decoder) time(raw json.RawMessage, path string) Time {
	if !present(raw) {
		return Time{}
	}
	s := d.str(raw, path)
	if d.err != "" {
		return Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		d.fail(path, "an ISO-8601 timestamp such as 2024-05-01T10:00:00.000Z", raw)
		return Time{}
	}
	return Time{Time: t, Raw: s, OK: true}
}

// object decodes a JSON object field into its members, in key order.
func (d *decoder) object(raw json.RawMessage, path string) ([]string, map[string]json.RawMessage) {
	if !present(raw) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		d.fail(path, "an object", raw)
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, m
}

// array decodes a JSON array field into its elements.
func (d *decoder) array(raw json.RawMessage, path string) []json.RawMessage {
	if !present(raw) {
		return nil
	}
	var a []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &a) != nil {
		d.fail(path, "an array", raw)
		return nil
	}
	return a
}

// ints decodes an object of integers (durationMs, customMetrics), every
// name but those in skip (which the caller reads itself); nil when there
// is none.
func (d *decoder) ints(keys []string, m map[string]json.RawMessage, path string, skip func(string) bool) map[string]int64 {
	var out map[string]int64
	for _, k := range keys {
		if skip != nil && skip(k) {
			continue
		}
		v := d.int(m[k], path+"."+member(k))
		if !v.OK {
			continue
		}
		if out == nil {
			out = make(map[string]int64, len(keys))
		}
		out[d.names.get(k)] = v.Value
	}
	return out
}

// member renders a member name for a field path: as is when it is a
// short run of letters, digits, '_' and '-', else quoted and cut.
func member(k string) string {
	if k == "" || len(k) > MaxEcho {
		return quote(k)
	}
	for _, c := range []byte(k) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return quote(k)
		}
	}
	return k
}

// The phases of durationMs that Durations names.
var namedPhases = map[string]bool{
	"addBatch": true, "getBatch": true, "latestOffset": true, "queryPlanning": true,
	"triggerExecution": true, "walCommit": true, "commitOffsets": true,
}

func (d *decoder) durations(raw json.RawMessage) Durations {
	keys, m := d.object(raw, "durationMs")
	if m == nil {
		return Durations{}
	}
	return Durations{
		AddBatch:         d.int(m["addBatch"], "durationMs.addBatch"),
		GetBatch:         d.int(m["getBatch"], "durationMs.getBatch"),
		LatestOffset:     d.int(m["latestOffset"], "durationMs.latestOffset"),
		QueryPlanning:    d.int(m["queryPlanning"], "durationMs.queryPlanning"),
		TriggerExecution: d.int(m["triggerExecution"], "durationMs.triggerExecution"),
		WalCommit:        d.int(m["walCommit"], "durationMs.walCommit"),
		CommitOffsets:    d.int(m["commitOffsets"], "durationMs.commitOffsets"),
		Other:            d.ints(keys, m, "durationMs", func(k string) bool { return namedPhases[k] }),
	}
}

func (d *decoder) eventTime(raw json.RawMessage) EventTime {
	_, m := d.object(raw, "eventTime")
	if m == nil {
		return EventTime{}
	}
	return EventTime{
		Watermark: d.time(m["watermark"], "eventTime.watermark"),
		Max:       d.time(m["max"], "eventTime.max"),
		Min:       d.time(m["min"], "eventTime.min"),
		Avg:       d.time(m["avg"], "eventTime.avg"),
	}
}

func (d *decoder) operators(raw json.RawMessage) []StateOperator {
	elems := d.array(raw, "stateOperators")
	if len(elems) == 0 {
		return nil
	}
	ops := make([]StateOperator, 0, len(elems))
	for i, e := range elems {
		path := fmt.Sprintf("stateOperators[%d]", i)
		var w wireOperator
		if e[0] != '{' || json.Unmarshal(e, &w) != nil {
			d.fail(path, "an object", e)
			return nil
		}
		keys, cm := d.object(w.CustomMetrics, path+".customMetrics")
		ops = append(ops, StateOperator{
			OperatorName:              d.names.get(d.str(w.OperatorName, path+".operatorName")),
			NumRowsTotal:              d.int(w.NumRowsTotal, path+".numRowsTotal"),
			NumRowsUpdated:            d.int(w.NumRowsUpdated, path+".numRowsUpdated"),
			AllUpdatesTimeMs:          d.int(w.AllUpdatesTimeMs, path+".allUpdatesTimeMs"),
			NumRowsRemoved:            d.int(w.NumRowsRemoved, path+".numRowsRemoved"),
			AllRemovalsTimeMs:         d.int(w.AllRemovalsTimeMs, path+".allRemovalsTimeMs"),
			CommitTimeMs:              d.int(w.CommitTimeMs, path+".commitTimeMs"),
			MemoryUsedBytes:           d.int(w.MemoryUsedBytes, path+".memoryUsedBytes"),
			NumRowsDroppedByWatermark: d.int(w.NumRowsDroppedByWatermark, path+".numRowsDroppedByWatermark"),
			NumShufflePartitions:      d.int(w.NumShufflePartitions, path+".numShufflePartitions"),
			NumStateStoreInstances:    d.int(w.NumStateStoreInstances, path+".numStateStoreInstances"),
			CustomMetrics:             d.ints(keys, cm, path+".customMetrics", nil),
		})
	}
	return ops
}

func (d *decoder) sources(raw json.RawMessage) []Source {
	elems := d.array(raw, "sources")
	if len(elems) == 0 {
		return nil
	}
	srcs := make([]Source, 0, len(elems))
	for i, e := range elems {
		path := fmt.Sprintf("sources[%d]", i)
		var w wireSource
		if e[0] != '{' || json.Unmarshal(e, &w) != nil {
			d.fail(path, "an object", e)
			return nil
		}
		srcs = append(srcs, Source{
			Description:            d.str(w.Description, path+".description"),
			NumInputRows:           d.int(w.NumInputRows, path+".numInputRows"),
			InputRowsPerSecond:     d.float(w.InputRowsPerSecond, path+".inputRowsPerSecond"),
			ProcessedRowsPerSecond: d.float(w.ProcessedRowsPerSecond, path+".processedRowsPerSecond"),
		})
	}
	return srcs
}

func (d *decoder) sink(raw json.RawMessage) Sink {
	if !present(raw) {
		return Sink{}
	}
	var w wireSink
	if raw[0] != '{' || json.Unmarshal(raw, &w) != nil {
		d.fail("sink", "an object", raw)
		return Sink{}
	}
	return Sink{
		Present:       true,
		Description:   d.str(w.Description, "sink.description"),
		NumOutputRows: d.int(w.NumOutputRows, "sink.numOutputRows"),
	}
}
