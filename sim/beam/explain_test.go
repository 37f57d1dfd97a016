package beam

import (
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

// TestExplain checks the horizon each query form states, and that the
// warnings come after the rules.
func TestExplain(t *testing.T) {
	for _, c := range []struct{ query, want string }{
		{`{"engine": "beam"}`, "10m of processing time from the first copy's arrival"},
		{`{"engine": "beam", "timeDomain": "event", "duration": "1 minute"}`, "the timer is the input watermark + 1m"},
		{`{"engine": "beam", "timeDomain": "event", "window": {"fixed": "10 minutes"}}`, "capped at the window's end - 1ms"},
		{`{"engine": "beam", "window": "global"}`, "a copy after the timer fired is output again"},
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
	if err := enginetrace.Explain(&strings.Builder{}, `{"engine": "kafka-streams"}`, LoadQuery, (*Trace).Explain); err == nil || !strings.Contains(err.Error(), `engine: "kafka-streams", want "beam"`) {
		t.Errorf("another engine: err %v", err)
	}
}
