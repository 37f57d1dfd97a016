package flink

import (
	"context"
	"encoding/json"

	ef "github.com/dedupsim/dedupsim/engines/flink"
	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

// Line is what one step of a trace did: the rows the operator emitted and
// the state it holds afterwards.
type Line struct {
	Step    int       `json:"step"`
	Emitted []Emitted `json:"emitted"`
	// LogicalState counts the entries a read would see (not expired);
	// PhysicalState adds expired entries no read has removed. Flink's heap
	// backend (numKeyedStateEntries) lies between the two: its incremental
	// cleanup removes some expired entries earlier. On RocksDB it is
	// exact: an expired entry stays until a read clears it or a compact
	// step's compaction filter drops it (a trace's state is too small for
	// RocksDB to compact on its own).
	LogicalState  int `json:"logicalState"`
	PhysicalState int `json:"physicalState"`
	// NumLateRecordsDropped is the insert-only rowtime keep-first's
	// counter (Flink 2.1+); absent for the other functions.
	NumLateRecordsDropped *int64 `json:"numLateRecordsDropped,omitempty"`
}

// Emitted is one changelog row: its kind (+I, -U, +U, -D) and values.
type Emitted struct {
	Kind string          `json:"kind"`
	Row  json.RawMessage `json:"row"`
}

// Run replays t through the model of engines/flink and returns one line
// per step.
func Run(t *Trace) ([]Line, error) {
	op, err := ef.New(t.Config())
	if err != nil {
		return nil, err
	}
	rows := make([]json.RawMessage, 0, len(t.Steps))
	var out []ef.Change
	lines := make([]Line, 0, len(t.Steps))
	for i, st := range t.Steps {
		out = out[:0]
		switch st.Kind {
		case StepElement:
			r := st.Row
			r.ID = len(rows)
			rows = append(rows, st.Raw)
			out = op.Process(r, out)
		case StepProcessingTime:
			// The dedup functions register no processing-time timers.
		case StepTTLTime:
			op.SetTTLTime(st.Time)
		case StepWatermark:
			out = op.Watermark(st.Time, out)
		case StepEndOfInput:
			out = op.EndOfInput(out)
		case StepCompact:
			op.Compact()
		}
		l := Line{Step: i, Emitted: make([]Emitted, 0, len(out)), LogicalState: op.LogicalEntries(), PhysicalState: op.PhysicalEntries()}
		for _, c := range out {
			l.Emitted = append(l.Emitted, Emitted{Kind: c.Kind.String(), Row: rows[c.Row.ID]})
		}
		if op.Function() == ef.RowTimeKeepFirstInsertOnly {
			n := op.LateDropped()
			l.NumLateRecordsDropped = &n
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// Replay parses the Flink trace in data, runs it and encodes one line per
// step with enc, escaping <, > and & in strings as encoding/json does by
// default (Flink's replay always has). Its errors are one line naming the
// part of the trace at fault.
func Replay(ctx context.Context, data []byte, enc *json.Encoder) error {
	enc.SetEscapeHTML(true)
	return enginetrace.Replayer(Load, Run)(ctx, data, enc)
}
