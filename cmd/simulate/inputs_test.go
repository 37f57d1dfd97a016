package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// simulateWithin runs the command line: a read that hangs on a FIFO or
// streams /dev/zero would never return, and the test binary's own timeout
// then fails the test with every goroutine's stack; no wall-clock deadline
// of its own decides the verdict, so a slow machine cannot fail it.
func simulateWithin(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return simulate(t, args...)
}

// specialInputs returns a FIFO and a symlink to /dev/zero named base in dir.
func specialInputs(t *testing.T, dir, base string) []string {
	t.Helper()
	fifo := filepath.Join(dir, "fifo-"+base)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero-"+base)
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	return []string{fifo, zero}
}

func TestSpecialInputFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	var cases [][]string
	for _, p := range specialInputs(t, dir, "trace.json") {
		cases = append(cases, []string{"replay", p})
	}
	for _, p := range specialInputs(t, dir, "scenario.yaml") {
		cases = append(cases, []string{"run", p, "--out", filepath.Join(dir, "out"), "--quiet"})
	}
	for _, args := range cases {
		code, out, errs := simulateWithin(t, args...)
		if code == 0 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
		if !strings.Contains(errs, "not a regular file") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line saying not a regular file", args, errs)
		}
	}
}

func TestErrorsEscapeWhatTheUserWrote(t *testing.T) {
	long := strings.Repeat("x", 3000)
	cases := [][]string{
		{"explain", "dropDuplicates([\"id\"]).\x1b[2Jbogus()"},
		{"explain", long + "()"},
		{"explain", "--columns", "id:\x1b[31m" + long, `dropDuplicates(["id"])`},
		{"replay", filepath.Join(t.TempDir(), "no\x1b[2Jsuch.json")},
		{"report", filepath.Join(t.TempDir(), "no\x1b[2Jsuch")},
	}
	for _, args := range cases {
		code, _, errs := simulate(t, args...)
		if code == 0 {
			t.Errorf("%v: exit 0", args)
		}
		if strings.ContainsAny(errs, "\x1b") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%.60q: stderr %q, want one line without control characters", args, errs)
		}
		if len(errs) > 800 {
			t.Errorf("%.60q: stderr of %d bytes echoes the whole input: %.200q", args, len(errs), errs)
		}
	}
}
