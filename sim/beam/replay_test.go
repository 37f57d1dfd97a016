package beam

import (
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/enginetrace"
	"github.com/dedupsim/dedupsim/sim/enginetrace/casetest"
)

// TestCases runs every case of testdata/cases against its hand-derived
// expected file (which oracles/beam checks against the Java DirectRunner),
// byte for byte.
func TestCases(t *testing.T) {
	casetest.Run(t, "testdata/cases/*.json", enginetrace.Replayer(Load, Run), false)
}

// TestLoadErrors checks that a bad trace is one line naming the key at fault.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ trace, want string }{
		{`{"engine": "kafka-streams", "steps": []}`, `engine: "kafka-streams", want "beam"`},
		{`{"engine": "beam", "timeDomain": "wall", "steps": []}`, `timeDomain: "wall"`},
		{`{"engine": "beam", "duration": 0, "steps": []}`, "duration: must be at least 1 ms"},
		{`{"engine": "beam", "window": "fixed 1 minute", "steps": []}`, `window: "fixed 1 minute", want "global" or {"fixed": DURATION}`},
		{`{"engine": "beam", "window": {"fixed": 0}, "steps": []}`, "window: fixed: the window size must be at least 1 ms"},
		{`{"engine": "beam", "window": {"sliding": "1 minute"}, "steps": []}`, `window: want "global" or {"fixed": DURATION}`},
		{`{"engine": "beam", "allowedLateness": "5 seconds", "steps": []}`, "allowedLateness: only fixed windows take an allowed lateness"},
		{`{"engine": "beam", "window": {"fixed": "1 minute"}, "allowedLateness": -1, "steps": []}`, "allowedLateness: "},
		{`{"engine": "beam", "window": {"fixed": "10 seconds"}, "steps": [{"elements": [{"key": "a", "timestamp": 1}, {"key": "a", "timestamp": 9999}]}]}`, `steps[0]: elements[1].key: "a" is already in this step`},
		{`{"engine": "beam", "steps": [{"advanceWatermark": 5}, {"advanceWatermark": 5}]}`, "steps[1]: advanceWatermark: 5, want more than the watermark 5"},
		{`{"engine": "beam", "steps": [{"advanceProcessingTime": 0}]}`, "steps[0]: advanceProcessingTime: must be positive"},
		{`{"engine": "beam", "steps": [{"elements": [{"key": "a", "timestamp": 1}, {"key": "a", "timestamp": 2}]}]}`, `steps[0]: elements[1].key: "a" is already in this step`},
		{`{"engine": "beam", "steps": [{"elements": [{"key": "a"}]}]}`, "steps[0]: elements[0].timestamp: missing"},
		{`{"engine": "beam", "steps": [{"elements": [], "advanceWatermark": 1}]}`, "steps[0]: want exactly one of"},
		{`{"engine": "beam", "steps": [], "extra": 1}`, "unknown field"},
	} {
		_, err := Load([]byte(c.trace))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.trace, err, c.want)
		}
	}
}
