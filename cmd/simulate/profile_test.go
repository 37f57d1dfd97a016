package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCPUProfile writes a profile of a command to a new file and refuses,
// untouched, a file that exists.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.out")
	code, _, errs := simulate(t, "explain", `dropDuplicates(["id"])`, "--cpuprofile", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	// A pprof profile is gzipped protocol buffers.
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile is not gzip data: % x", b[:min(len(b), 8)])
	}

	mine := filepath.Join(dir, "notes.txt")
	os.WriteFile(mine, []byte("mine"), 0o644)
	code, out, errs := simulate(t, "explain", `dropDuplicates(["id"])`, "--cpuprofile", mine)
	if code == 0 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "notes.txt") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want one line naming the file and no output", code, out, errs)
	}
	if b, _ := os.ReadFile(mine); string(b) != "mine" {
		t.Fatalf("the existing file was changed: %q", b)
	}
}
