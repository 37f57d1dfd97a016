package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayOtherEngines runs a Kafka Streams and a Beam case through
// `simulate replay` and compares stdout with the case's expected file.
func TestReplayOtherEngines(t *testing.T) {
	for _, c := range []string{
		"../../sim/kstreams/testdata/cases/own-stream-time-horizon-is-half-the-window",
		"../../sim/beam/testdata/cases/own-event-time-timer-from-the-watermark",
	} {
		code, out, errs := simulate(t, "replay", c+".json")
		if code != 0 || errs != "" {
			t.Fatalf("%s: exit %d, stderr %q", c, code, errs)
		}
		want, err := os.ReadFile(c + ".expected.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%s: stdout\n%s\nwant\n%s", c, out, want)
		}
	}
}

// TestReplayOtherEnginesBadTrace checks that a bad Kafka Streams or Beam
// trace is one line on stderr naming the file and the key, and no output.
func TestReplayOtherEnginesBadTrace(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ trace, want string }{
		"ks.json":   {`{"engine": "kafka-streams", "window": "2 minutes", "time": "wall", "steps": []}`, `time: "wall"`},
		"beam.json": {`{"engine": "beam", "steps": [{"advanceProcessingTime": 0}]}`, "steps[0]: advanceProcessingTime"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.trace), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := simulate(t, "replay", path)
		if code == 0 || out != "" {
			t.Errorf("%s: exit %d, stdout %q", name, code, out)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, path) || !strings.Contains(errs, c.want) {
			t.Errorf("%s: stderr %q, want one line naming the file and %q", name, errs, c.want)
		}
	}
}

// TestExplainOtherEngines checks that explain takes a Kafka Streams or Beam
// query object, and that a bad one is one line on stderr.
func TestExplainOtherEngines(t *testing.T) {
	for _, q := range []string{
		`{"engine": "kafka-streams", "window": "2 minutes", "time": "stream"}`,
		`{"engine": "beam", "timeDomain": "event", "duration": "1 minute"}`,
	} {
		code, out, errs := simulate(t, "explain", q)
		if code != 0 || errs != "" || !strings.Contains(out, "horizon:") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", q, code, out, errs)
		}
	}
	code, out, errs := simulate(t, "explain", `{"engine": "beam", "timeDomain": "wall"}`)
	if code == 0 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, `timeDomain: "wall"`) {
		t.Errorf("bad query: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
