package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The tests of the breaks found by issue 33's rerun of the attacks, one
// per break.

// TestReportRefusesAProfileInsideItsFolder: report DIR --cpuprofile
// DIR/cpu.prof created the profile in the folder it redraws, then refused
// the folder for holding it (leaving it there); with --force it deleted
// the profile as a foreign file and exited 0. The profile is refused up
// front in one line, nothing created.
func TestReportRefusesAProfileInsideItsFolder(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	out := filepath.Join(dir, "o")
	if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--out", out); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	before := listing(t, dir)
	for _, extra := range [][]string{nil, {"--force"}} {
		args := append([]string{"report", out, "--cpuprofile", filepath.Join(out, "cpu.prof")}, extra...)
		code, stdout, errs := simulate(t, args...)
		if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "is inside report's folder") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q: want exit 1 and one line saying the profile is inside the folder", extra, code, stdout, errs)
		}
		if after := listing(t, dir); after != before {
			t.Fatalf("%v changed the folder:\n%s\nwas:\n%s", extra, after, before)
		}
	}
}
