package interval

import (
	"encoding/json"
	"time"
)

// Duration is a span of time in a configuration: a time.Duration that
// prints the way Format writes it ("2h", "30s", "7d"), in text and in
// JSON, so that a resolved configuration reads like the file it came
// from. Parsing one is the loader's job (Parse).
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Micros returns d in whole microseconds, the unit of generated rows.
func (d Duration) Micros() int64 { return int64(time.Duration(d) / time.Microsecond) }

// String returns d as Format renders it.
func (d Duration) String() string { return Format(time.Duration(d)) }

// MarshalJSON renders d as a JSON string such as "30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }
