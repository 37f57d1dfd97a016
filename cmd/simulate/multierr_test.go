package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryProblemOnItsOwnLine: a scenario with two problems prints two
// lines, each naming the command, the file and the key, and no escaped
// newline between them.
func TestEveryProblemOnItsOwnLine(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "bad.yaml")
	os.WriteFile(sc, []byte("name: x\nduration: 10m\ntrigger: 0s\nworkload: {rate: -10/s}\nqueries:\n  - name: q\n    query: dropDuplicates([\"event_id\"])\n"), 0o644)
	var stdout, stderr bytes.Buffer
	out := filepath.Join(dir, "out")
	if code := run(context.Background(), []string{"run", sc, "--quiet", "--out", out}, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %d:\n%s", len(lines), stderr.String())
	}
	for i, key := range []string{"trigger:", "workload.rate:"} {
		if !strings.HasPrefix(lines[i], "simulate run: scenario "+sc+": "+key) || strings.Contains(lines[i], `\n`) {
			t.Errorf("line %d: %q", i, lines[i])
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("bad input wrote %s", out)
	}
}
