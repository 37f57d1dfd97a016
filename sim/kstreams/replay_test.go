package kstreams

import (
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/enginetrace"
	"github.com/dedupsim/dedupsim/sim/enginetrace/casetest"
)

// TestCases runs every case of testdata/cases against its hand-derived
// expected file (which oracles/kafka-streams checks against the real
// engine), byte for byte.
func TestCases(t *testing.T) {
	casetest.Run(t, "testdata/cases/*.json", enginetrace.Replayer(Load, Run), false)
}

// TestLoadErrors checks that a bad trace is one line naming the key at fault.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ trace, want string }{
		{`{"engine": "beam", "steps": []}`, `engine: "beam", want "kafka-streams"`},
		{`{"engine": "kafka-streams", "steps": []}`, "window: missing"},
		{`{"engine": "kafka-streams", "window": "2 minutes", "time": "event", "steps": []}`, `time: "event", want "stream"`},
		{`{"engine": "kafka-streams", "window": 0, "steps": []}`, "window: must be at least 1 ms"},
		{`{"engine": "kafka-streams", "mode": "keep-last", "window": "1 minute", "steps": []}`, "window, time, punctuate: keep-last"},
		{`{"engine": "kafka-streams", "window": "1 minute", "time": "wall-clock", "steps": []}`, "punctuate: missing"},
		{`{"engine": "kafka-streams", "window": "1 minute", "time": "wall-clock", "punctuate": 0, "steps": []}`, "punctuate: must be at least 1 ms"},
		{`{"engine": "kafka-streams", "window": "1 minute", "punctuate": "30 seconds", "steps": []}`, "punctuate: only a wall-clock query"},
		{`{"engine": "kafka-streams", "mode": "latest", "steps": []}`, `mode: "latest"`},
		{`{"engine": "kafka-streams", "mode": "keep-last", "form": "aggregate", "steps": []}`, `form: "aggregate"`},
		{`{"engine": "kafka-streams", "window": "1 minute", "form": "reduce", "steps": []}`, "form: only keep-last"},
		{`{"engine": "kafka-streams", "window": "1 minute", "steps": [{"records": [{"key": "a", "timestamp": -1}]}]}`, "steps[0]: records[0].timestamp: -1"},
		{`{"engine": "kafka-streams", "window": "1 minute", "steps": [{"records": [{"timestamp": 1}]}]}`, "steps[0]: records[0].key: missing"},
		{`{"engine": "kafka-streams", "window": "1 minute", "steps": [{}]}`, "steps[0]: want exactly one of"},
		{`{"engine": "kafka-streams", "window": "1 minute", "steps": [], "extra": 1}`, "unknown field"},
	} {
		_, err := Load([]byte(c.trace))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.trace, err, c.want)
		}
	}
}
