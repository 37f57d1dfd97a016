package flink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	ef "github.com/dedupsim/dedupsim/engines/flink"
)

// Trace is a parsed, validated Flink trace (docs/flink.md).
type Trace struct {
	Name    string
	Version ef.Version
	Query   Query
	Options Options
	// GenerateUpdateBefore: the sink needs -U rows.
	GenerateUpdateBefore bool
	// Columns are the rows' columns, in the order of the first row.
	Columns []string
	Steps   []Step
}

// Config returns the engine configuration of the trace.
func (t *Trace) Config() ef.Config {
	return Config(t.Query, t.Options, t.GenerateUpdateBefore, t.Version)
}

// StepKind is what a step does.
type StepKind uint8

// Step kinds.
const (
	StepElement StepKind = iota
	StepProcessingTime
	StepTTLTime
	StepWatermark
	StepEndOfInput
	// StepCompact is a full compaction of a RocksDB backend's state at
	// the TTL clock (RocksDBKeyedStateBackend.compactState): the TTL
	// compaction filter drops the expired entries.
	StepCompact
)

// Step is one step of a trace.
type Step struct {
	Kind StepKind
	// Time is the milliseconds of a processingTime, ttlTime or watermark
	// step.
	Time int64
	// Row is an element step's row; Raw its JSON object with the columns
	// in the order of Trace.Columns.
	Row ef.Row
	Raw json.RawMessage
}

// Engine is the value of a trace's "engine" field that this package runs.
const Engine = "flink"

type rawTrace struct {
	Name                 string                     `json:"name"`
	Engine               string                     `json:"engine"`
	Version              *string                    `json:"version"`
	Query                json.RawMessage            `json:"query"`
	ProcTime             *string                    `json:"procTime"`
	RowTime              *string                    `json:"rowTime"`
	Options              map[string]json.RawMessage `json:"options"`
	GenerateUpdateBefore bool                       `json:"generateUpdateBefore"`
	Steps                []json.RawMessage          `json:"steps"`
}

type rawStep struct {
	Element        json.RawMessage `json:"element"`
	ProcessingTime *int64          `json:"processingTime"`
	TTLTime        *int64          `json:"ttlTime"`
	Watermark      *int64          `json:"watermark"`
	EndOfInput     *bool           `json:"endOfInput"`
	Compact        *bool           `json:"compact"`
}

type structuredQuery struct {
	Keys  []string `json:"keys"`
	Order string   `json:"order"`
	Keep  string   `json:"keep"`
}

// Load parses and validates a Flink trace. Every error is one line naming
// the part of the trace at fault.
func Load(data []byte) (*Trace, error) {
	var rt rawTrace
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rt); err != nil {
		return nil, fmt.Errorf("not a Flink trace: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("not a Flink trace: something follows the JSON object")
	}
	if rt.Engine != Engine {
		return nil, fmt.Errorf("engine: want %q, got %q", Engine, rt.Engine)
	}
	t := &Trace{Name: rt.Name, Version: ef.Newest(), GenerateUpdateBefore: rt.GenerateUpdateBefore}
	if rt.Version != nil {
		v, err := ef.ParseVersion(*rt.Version)
		if err != nil {
			return nil, fmt.Errorf("version: %w", err)
		}
		t.Version = v
	}
	ta := DefaultTimeAttributes
	if rt.ProcTime != nil {
		ta.ProcTime = *rt.ProcTime
	}
	if rt.RowTime != nil {
		ta.RowTime = *rt.RowTime
	}
	q, err := parseQuery(rt.Query, ta)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	t.Query = q
	opts := make(map[string]string, len(rt.Options))
	for k, raw := range rt.Options {
		s, err := scalarString(raw)
		if err != nil {
			return nil, fmt.Errorf("options.%s: %w", k, err)
		}
		opts[k] = s
	}
	if t.Options, err = ParseOptions(opts, t.Version); err != nil {
		return nil, err // it names the option
	}
	if len(rt.Steps) == 0 {
		return nil, fmt.Errorf("steps: want at least one step")
	}
	wm := ef.MinWatermark
	for i, raw := range rt.Steps {
		st, err := t.parseStep(raw, q, &wm)
		if err != nil {
			return nil, fmt.Errorf("steps[%d]%w", i, err)
		}
		t.Steps = append(t.Steps, st)
	}
	return t, nil
}

// parseQuery reads the SQL text or the structured form.
func parseQuery(raw json.RawMessage, ta TimeAttributes) (Query, error) {
	if len(raw) == 0 {
		return Query{}, fmt.Errorf("missing: want Flink SQL text or {\"keys\": [...], \"order\": \"proctime\"|\"rowtime\", \"keep\": \"first\"|\"last\"}")
	}
	var sql string
	if json.Unmarshal(raw, &sql) == nil {
		return ParseSQL(sql, ta)
	}
	var sq structuredQuery
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sq); err != nil {
		return Query{}, fmt.Errorf("want Flink SQL text or {\"keys\", \"order\", \"keep\"}: %w", err)
	}
	q := Query{Keys: sq.Keys, Order: sq.Order}
	switch sq.Order {
	case ProcTime:
		q.OrderBy = ta.ProcTime
	case RowTime:
		q.OrderBy = ta.RowTime
	default:
		return Query{}, fmt.Errorf("order: want \"proctime\" or \"rowtime\", got %q", sq.Order)
	}
	switch sq.Keep {
	case "first":
	case "last":
		q.KeepLast = true
	default:
		return Query{}, fmt.Errorf("keep: want \"first\" or \"last\", got %q", sq.Keep)
	}
	return q, nil
}

// scalarString renders an option value (string, number or boolean) as the
// string Flink's configuration would hold.
func scalarString(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return string(bytes.TrimSpace(raw)), nil
	}
	return "", fmt.Errorf("want a string, number or boolean")
}

// parseStep reads one step; its errors start with the part after
// "steps[i]".
func (t *Trace) parseStep(raw json.RawMessage, q Query, wm *int64) (Step, error) {
	var rs rawStep
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rs); err != nil {
		return Step{}, fmt.Errorf(": %v; want one of {\"element\": {row}}, {\"processingTime\": ms}, {\"ttlTime\": ms}, {\"watermark\": ms}, {\"endOfInput\": true}, {\"compact\": true}", err)
	}
	n := 0
	var st Step
	if rs.Element != nil {
		n++
		st.Kind = StepElement
	}
	if rs.ProcessingTime != nil {
		n++
		st.Kind, st.Time = StepProcessingTime, *rs.ProcessingTime
	}
	if rs.TTLTime != nil {
		n++
		st.Kind, st.Time = StepTTLTime, *rs.TTLTime
	}
	if rs.Watermark != nil {
		n++
		st.Kind, st.Time = StepWatermark, *rs.Watermark
		if st.Time < *wm {
			return Step{}, fmt.Errorf(".watermark: %d is below the previous watermark %d; Flink's watermarks never go back", st.Time, *wm)
		}
		*wm = st.Time
	}
	if rs.EndOfInput != nil {
		n++
		st.Kind = StepEndOfInput
		if !*rs.EndOfInput {
			return Step{}, fmt.Errorf(".endOfInput: want true")
		}
	}
	if rs.Compact != nil {
		n++
		st.Kind = StepCompact
		if !*rs.Compact {
			return Step{}, fmt.Errorf(".compact: want true")
		}
		if !t.Options.RocksDB {
			return Step{}, fmt.Errorf(".compact: a compaction is RocksDB's (the heap backend has none): want options {\"%s\": \"rocksdb\"}", OptStateBackend)
		}
	}
	if n != 1 {
		return Step{}, fmt.Errorf(": want exactly one of element, processingTime, ttlTime, watermark, endOfInput, compact")
	}
	if st.Kind == StepElement {
		return t.parseRow(rs.Element, q)
	}
	return st, nil
}

// parseRow reads an element's row: a JSON object of strings and whole
// numbers with the same columns as the first row.
func (t *Trace) parseRow(raw json.RawMessage, q Query) (Step, error) {
	cols, vals, err := orderedObject(raw)
	if err != nil {
		return Step{}, fmt.Errorf(".element: %v", err)
	}
	if t.Columns == nil {
		t.Columns = cols
		for _, k := range q.Keys {
			if indexOf(cols, k) < 0 {
				return Step{}, fmt.Errorf(".element: the key column %q is not a column of the row (it has %s)", k, strings.Join(cols, ", "))
			}
		}
		if q.Order == RowTime && indexOf(cols, q.OrderBy) < 0 {
			return Step{}, fmt.Errorf(".element: the rowtime attribute %q is not a column of the row (it has %s)", q.OrderBy, strings.Join(cols, ", "))
		}
	}
	if len(cols) != len(t.Columns) {
		return Step{}, fmt.Errorf(".element: want the columns of the first row (%s), got %s", strings.Join(t.Columns, ", "), strings.Join(cols, ", "))
	}
	byName := make(map[string]json.RawMessage, len(cols))
	for i, c := range cols {
		byName[c] = vals[i]
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, c := range t.Columns {
		v, ok := byName[c]
		if !ok {
			return Step{}, fmt.Errorf(".element: column %q is missing (every row has the columns of the first: %s)", c, strings.Join(t.Columns, ", "))
		}
		v, err := canonValue(v)
		if err != nil {
			return Step{}, fmt.Errorf(".element.%s: %v", c, err)
		}
		byName[c] = v
		if i > 0 {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(c)
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	st := Step{Kind: StepElement, Raw: json.RawMessage(buf.Bytes())}
	var key strings.Builder
	for _, k := range q.Keys {
		v := byName[k]
		key.WriteString(strconv.Itoa(len(v)))
		key.WriteByte(':')
		key.Write(v)
	}
	st.Row = ef.Row{Key: key.String(), Value: buf.String()}
	if q.Order == RowTime {
		rt, err := strconv.ParseInt(string(byName[q.OrderBy]), 10, 64)
		if err != nil {
			return Step{}, fmt.Errorf(".element.%s: the rowtime attribute must be whole milliseconds, got %s", q.OrderBy, byName[q.OrderBy])
		}
		st.Row.RowTime = rt
	}
	return st, nil
}

// canonValue accepts a JSON string or a whole number that fits a BIGINT
// and returns it in one spelling per value, as Flink sees it: a string is
// decoded ("\u00e9" and "é" are one STRING, as in Jackson) and written
// back without escapes beyond JSON's own, a number as its decimal digits
// ("-0" is 0). Keys and keep-last's row equality compare these bytes.
func canonValue(v json.RawMessage) (json.RawMessage, error) {
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("want a string or a whole number (BIGINT), got %s", v)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("want a string or a whole number (BIGINT), got %s", v)
	}
	return strconv.AppendInt(nil, n, 10), nil
}

// orderedObject decodes a JSON object into its keys in order and their
// compacted values.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("want a JSON object")
	}
	var keys []string
	var vals []json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k := tok.(string)
		if seen[k] {
			return nil, nil, fmt.Errorf("column %q appears twice", k)
		}
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		vals = append(vals, c.Bytes())
	}
	if len(keys) == 0 {
		return nil, nil, fmt.Errorf("want at least one column")
	}
	return keys, vals, nil
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
