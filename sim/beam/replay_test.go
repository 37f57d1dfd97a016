package beam

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCases runs every case of testdata/cases against its hand-derived
// expected file (which oracles/beam checks against the Java DirectRunner).
func TestCases(t *testing.T) {
	files, err := filepath.Glob("testdata/cases/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			tr, err := LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := Run(tr)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteLines(&got, lines); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".expected.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			g := strings.Split(strings.TrimSpace(got.String()), "\n")
			w := strings.Split(strings.TrimSpace(string(want)), "\n")
			if len(g) != len(w) {
				t.Fatalf("%d lines, want %d:\n%s", len(g), len(w), got.String())
			}
			for i := range w {
				if g[i] != w[i] {
					t.Errorf("line %d:\n got %s\nwant %s", i, g[i], w[i])
				}
			}
			if _, err := os.Stat(strings.TrimSuffix(f, ".json") + ".notes.md"); err != nil {
				t.Errorf("no notes file deriving the expectation: %v", err)
			}
		})
	}
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
