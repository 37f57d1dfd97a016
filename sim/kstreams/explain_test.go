package kstreams

import (
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

// TestExplain checks the horizon each query form states, and that the
// warnings come after the rules.
func TestExplain(t *testing.T) {
	for _, c := range []struct{ query, want string }{
		{`{"engine": "kafka-streams", "window": "2 minutes"}`, "a copy is dropped only within 1m of stream time after the previous copy"},
		{`{"engine": "kafka-streams", "window": "10 seconds", "time": "record"}`, "segments of 1m = max(W/2, 1m)"},
		{`{"engine": "kafka-streams", "window": "10 seconds", "time": "record"}`, "a record more than 10s older than stream time finds nothing and is forwarded"},
		{`{"engine": "kafka-streams", "mode": "keep-last"}`, "forwarded downstream with its own timestamp"},
		{`{"engine": "kafka-streams", "mode": "keep-last", "form": "reduce"}`, "max(its timestamp, the row's timestamp)"},
		{`{"engine": "kafka-streams", "window": "1 minute", "time": "wall-clock", "punctuate": "30 seconds"}`, "from W to W + P = 1m to 1m30s of wall clock after its first copy"},
		{`{"engine": "kafka-streams", "window": "1 minute", "time": "wall-clock", "punctuate": "30 seconds"}`, "first 30s after the task starts, then every 30s on that grid"},
	} {
		var b strings.Builder
		err := enginetrace.Explain(&b, c.query, LoadQuery, (*Trace).Explain)
		if err != nil || !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: err %v, output\n%s\nwant %q", c.query, err, b.String(), c.want)
		}
		out := b.String()
		if i := strings.Index(out, "warning:"); i < 0 || strings.Contains(out[i:], "\n  ") {
			t.Errorf("%s: want warnings, after every rule:\n%s", c.query, out)
		}
	}
	if err := enginetrace.Explain(&strings.Builder{}, `{"engine": "kafka-streams"}`, LoadQuery, (*Trace).Explain); err == nil || !strings.Contains(err.Error(), "window: missing") {
		t.Errorf("no window: err %v", err)
	}
}
