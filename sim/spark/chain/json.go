package chain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// ParseJSON parses a query held in a JSON value, as the replay trace's
// "query" field holds it: either a JSON string (PySpark text, or the text
// of a JSON array) or directly a JSON array of operators:
//
//	[{"op": "withWatermark", "column": "eventTime", "delay": "10 seconds"},
//	 {"op": "dropDuplicates", "keys": ["id", "eventTime"]}]
//
// Chain.Text is the decoded string, or the array as written.
func ParseJSON(raw []byte) (Chain, error) {
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) == 0:
		return Chain{}, errors.New("query: empty (want a string or an array of operators)")
	case trimmed[0] == '"':
		var s string
		if err := json.Unmarshal(trimmed, &s); err != nil {
			return Chain{}, fmt.Errorf("query: invalid JSON string: %v", jsonErr(err))
		}
		return Parse(s)
	case trimmed[0] == '[':
		lead := len(raw) - len(bytes.TrimLeftFunc(raw, unicode.IsSpace))
		ops, err := parseStructured(trimmed, lead)
		if err != nil {
			return Chain{}, err
		}
		return Chain{Ops: ops, Text: string(raw)}, nil
	}
	return Chain{}, fmt.Errorf("query: want a string or an array of operators, got %s", jsonKind(trimmed))
}

// jsonKind names the kind of JSON value that raw starts with.
func jsonKind(raw []byte) string {
	switch c := raw[0]; {
	case c == '{':
		return "an object"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c == '"':
		return "a string"
	case c == '[':
		return "an array"
	}
	return "invalid JSON"
}

// jsonErr strips the "json: " prefix that encoding/json puts on its errors.
func jsonErr(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// The fields each structured operator may have; anything else is an error,
// so that a typo ("colum") is not silently ignored.
var structFields = map[OpKind][]string{
	WithWatermark:                 {"op", "column", "delay"},
	DropDuplicates:                {"op", "keys"},
	DropDuplicatesWithinWatermark: {"op", "keys"},
}

// parseStructured parses the JSON array form; lead is the offset of raw in
// the text the user gave, so that error offsets point into that text.
func parseStructured(raw []byte, lead int) ([]Op, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var elems []json.RawMessage
	if err := dec.Decode(&elems); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("query: invalid JSON at offset %d: %s", int64(lead)+se.Offset-1, jsonErr(err))
		}
		if isEOF(err) {
			return nil, errors.New("query: invalid JSON: unexpected end of input")
		}
		return nil, fmt.Errorf("query: want an array of operators: %s", jsonErr(err))
	}
	end := int(dec.InputOffset())
	if rest := bytes.TrimLeftFunc(raw[end:], unicode.IsSpace); len(rest) > 0 {
		return nil, fmt.Errorf("query: unexpected data after the array at offset %d", lead+len(raw)-len(rest))
	}
	if len(elems) == 0 {
		return nil, errors.New("query: empty operator array (" + wantOps + ")")
	}
	ops := make([]Op, 0, len(elems))
	for i, e := range elems {
		op, err := structuredOp(i+1, e)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// structuredOp parses operator n of the JSON array form.
func structuredOp(n int, raw json.RawMessage) (Op, error) {
	fields, order, err := jsonObject(raw)
	if err != nil {
		return Op{}, fmt.Errorf("query: operator %d: %s", n, err)
	}
	opRaw, ok := fields["op"]
	if !ok {
		return Op{}, fmt.Errorf("query: operator %d: missing \"op\" (%s)", n, wantOps)
	}
	var name string
	if err := json.Unmarshal(opRaw, &name); err != nil {
		return Op{}, fmt.Errorf("query: operator %d: \"op\": want a string, got %s", n, jsonKind(bytes.TrimSpace(opRaw)))
	}
	var kind OpKind
	switch name {
	case "withWatermark":
		kind = WithWatermark
	case "dropDuplicates":
		kind = DropDuplicates
	case "dropDuplicatesWithinWatermark":
		kind = DropDuplicatesWithinWatermark
	default:
		return Op{}, fmt.Errorf("query: operator %d: unknown op %q (%s)", n, name, wantOps)
	}
	allowed := structFields[kind]
	for _, f := range order {
		if !slices.Contains(allowed, f) {
			return Op{}, opErr(n, kind, "unknown field %q (want %s)", f, strings.Join(allowed, ", "))
		}
	}
	op := Op{Kind: kind}
	if kind == WithWatermark {
		col, err := jsonString(fields, "column", "the event-time column name")
		if err != nil {
			return Op{}, opErr(n, kind, "%s", err)
		}
		delay, err := jsonString(fields, "delay", `an interval such as "10 seconds"`)
		if err != nil {
			return Op{}, opErr(n, kind, "%s", err)
		}
		ms, err := interval.ParseSpark(delay)
		if err != nil {
			return Op{}, opErr(n, kind, "delay: %v", err)
		}
		op.Column, op.Delay, op.DelayMs = col, delay, ms
		return op, nil
	}
	keysRaw, ok := fields["keys"]
	if !ok || string(bytes.TrimSpace(keysRaw)) == "null" {
		op.AllColumns = true
		return op, nil
	}
	var keys []json.RawMessage
	if err := json.Unmarshal(keysRaw, &keys); err != nil {
		return Op{}, opErr(n, kind, "\"keys\": want an array of column names, got %s", jsonKind(bytes.TrimSpace(keysRaw)))
	}
	if len(keys) == 0 {
		return Op{}, opErr(n, kind, "\"keys\": empty key list (omit \"keys\" for all columns, or name at least one column)")
	}
	for i, k := range keys {
		var s string
		if err := json.Unmarshal(k, &s); err != nil {
			return Op{}, opErr(n, kind, "\"keys\"[%d]: want a column name string, got %s", i, jsonKind(bytes.TrimSpace(k)))
		}
		if s == "" {
			return Op{}, opErr(n, kind, "\"keys\"[%d]: empty name", i)
		}
		op.Keys = append(op.Keys, s)
	}
	return op, nil
}

// jsonString reads the non-empty string field name of an operator; want
// says what the field holds, for messages.
func jsonString(fields map[string]json.RawMessage, name, want string) (string, error) {
	raw, ok := fields[name]
	if !ok {
		return "", fmt.Errorf("missing %q (want %s)", name, want)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q: want a string, got %s", name, jsonKind(bytes.TrimSpace(raw)))
	}
	if s == "" {
		return "", fmt.Errorf("%q: empty (want %s)", name, want)
	}
	return s, nil
}

// jsonObject decodes a JSON object into its fields and their order,
// rejecting duplicate names (encoding/json would silently keep the last).
func jsonObject(raw json.RawMessage) (map[string]json.RawMessage, []string, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, nil, fmt.Errorf("want an object such as {\"op\": \"dropDuplicates\", \"keys\": [\"id\"]}, got %s", jsonKind(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil { // "{"
		return nil, nil, errors.New(jsonErr(err))
	}
	fields := map[string]json.RawMessage{}
	var order []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, errors.New(jsonErr(err))
		}
		name, _ := t.(string)
		if _, dup := fields[name]; dup {
			return nil, nil, fmt.Errorf("field %q given twice", name)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, errors.New(jsonErr(err))
		}
		fields[name] = v
		order = append(order, name)
	}
	return fields, order, nil
}

// isEOF reports whether err says the input ended, early or not.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
