// Package casetest runs an engine's replay cases in its tests: every
// trace of a folder through the engine's replay, as `simulate replay`
// publishes it, against the case's hand-derived NAME.expected.jsonl,
// beside a NAME.notes.md deriving it.
package casetest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/enginetrace"
)

// Replay is an engine's replay (the registry's Engine.Replay).
type Replay func(ctx context.Context, data []byte, enc *json.Encoder) error

// Run replays every trace matching pattern and compares its output with
// NAME.expected.jsonl line by line: byte for byte, or with semantic as
// JSON values (white space and key order aside).
func Run(t *testing.T, pattern string, replay Replay, semantic bool) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases match %s: %v", pattern, err)
	}
	for _, f := range files {
		base := strings.TrimSuffix(f, ".json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			if _, err := os.Stat(base + ".notes.md"); err != nil {
				t.Errorf("no notes file deriving the expectation: %v", err)
			}
			got, err := Output(f, replay)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(base + ".expected.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			g, w := lines(got, semantic), lines(want, semantic)
			if len(g) != len(w) {
				t.Fatalf("%d lines, want %d:\n%s", len(g), len(w), got)
			}
			for i := range w {
				if !same(t, g[i], w[i], semantic) {
					t.Errorf("line %d:\n got %s\nwant %s", i, g[i], w[i])
				}
			}
		})
	}
}

// Output is what replay publishes for the trace file at path.
func Output(path string, replay Replay) ([]byte, error) {
	ctx := context.Background()
	data, err := enginetrace.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = enginetrace.Publish(ctx, path, &out, func(enc *json.Encoder) error { return replay(ctx, data, enc) })
	return out.Bytes(), err
}

// lines splits data into its lines; with semantic, blank ones are
// dropped, else only the white space around all of them.
func lines(data []byte, semantic bool) []string {
	if !semantic {
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func same(t *testing.T, got, want string, semantic bool) bool {
	if !semantic {
		return got == want
	}
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("bad JSON line %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad JSON line %q: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}
