// Package enginetrace is the plumbing every engine's replay and explain
// share, and knows no engine: the "engine" key that names a trace's
// engine, reading a trace file, strict JSON decoding, durations in
// milliseconds, JSON Lines written all or nothing, explain's output, and
// the flags an engine's explain binds.
package enginetrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
)

// Engine returns the "engine" key of the JSON object in data, or "" when
// data is not a JSON object or its "engine" is missing or not a string.
func Engine(data []byte) string {
	var head struct {
		Engine string `json:"engine"`
	}
	if json.Unmarshal(data, &head) != nil {
		return ""
	}
	return head.Engine
}

// ReadFile reads the trace file at path: a regular file of at most
// fileio.MaxTraceBytes (a FIFO or a device is refused before it is
// opened). Its errors name the file once: "PATH: why".
func ReadFile(path string) ([]byte, error) {
	data, err := fileio.ReadFile(path, fileio.MaxTraceBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", fileio.ShowPath(path), fileio.Reason(err))
	}
	return data, nil
}

// LoadFile reads the trace file at path (ReadFile) and parses it with
// load; its errors name the file once.
func LoadFile[T any](path string, load func([]byte) (T, error)) (T, error) {
	var zero T
	data, err := ReadFile(path)
	if err != nil {
		return zero, err
	}
	t, err := load(data)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", fileio.ShowPath(path), err)
	}
	return t, nil
}

// DecodeStrict decodes one JSON value into v, rejecting unknown fields and
// anything after the value.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// WholeMillis returns f as milliseconds if it is a whole number from 0 to
// 2^53.
func WholeMillis(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < 0 || f > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// WhyNotMillis says why WholeMillis refuses f: "negative", "not a
// whole number" or too large, so that a message blames the right thing
// (a timestamp of 2^63-1 is not negative).
func WhyNotMillis(f float64) string {
	switch {
	case f < 0:
		return "negative"
	case f != math.Trunc(f):
		return "not a whole number"
	}
	return "above 2^53 = 9007199254740992, beyond which a JSON number is not exact"
}

// Millis parses a duration given as a number of milliseconds or as a
// string such as "2 minutes" (interval.Parse), in whole milliseconds;
// example is the string its error suggests.
func Millis(raw json.RawMessage, example string) (int64, error) {
	var n float64
	if err := json.Unmarshal(raw, &n); err == nil {
		ms, ok := WholeMillis(n)
		if !ok {
			return 0, fmt.Errorf("%s is %s: want a whole number of milliseconds from 0 to 2^53", raw, WhyNotMillis(n))
		}
		return ms, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("%s: want a duration such as %q or a number of milliseconds", raw, example)
	}
	d, err := interval.Parse(s)
	if err != nil {
		return 0, err
	}
	if d < 0 || d%time.Millisecond != 0 {
		return 0, fmt.Errorf("%s: want a non-negative whole number of milliseconds", fileio.Quote(s))
	}
	return d.Milliseconds(), nil
}

// FormatMillis formats ms milliseconds as interval.Format does ("1m",
// "10s"), over the whole int64 range (interval.FormatMillis).
func FormatMillis(ms int64) string { return interval.FormatMillis(ms) }

// DecodeTrace decodes the trace or query object in data strictly into v
// (DecodeStrict) and checks that its "engine" key is engine; title names
// the engine in the error of a document that does not decode ("not a
// Beam trace: ...").
func DecodeTrace(data []byte, v any, engine, title string) error {
	if err := DecodeStrict(data, v); err != nil {
		return fmt.Errorf("not a %s trace: %v", title, err)
	}
	if got := Engine(data); got != engine {
		return fmt.Errorf("engine: %s, want %q", fileio.Quote(got), engine)
	}
	return nil
}

// RawRecord is a keyed record or element of a trace as written: each
// field nil when it is missing.
type RawRecord struct {
	Key       *string  `json:"key"`
	Value     *string  `json:"value"`
	Timestamp *float64 `json:"timestamp"`
}
