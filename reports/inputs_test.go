package reports

import (
	"github.com/dedupsim/dedupsim/metrics"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReportShowsScenarioWarnings checks that the scenario's warnings in
// summary.json open both reports, before the scenario, and that a
// summary without warnings has no such section.
func TestReportShowsScenarioWarnings(t *testing.T) {
	s, ts := singleRun(t)
	s.Warnings = []string{
		"trigger: 1h is not shorter than duration (1h): every original arrives by the first trigger, so the whole run's traffic lands in one batch",
		"workload.profile: lasts 1h15m in all, longer than duration (1h): the run stops 1h into it, inside workload.profile[1] <b>",
	}
	dir := writeResults(t, s, ts)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	for name, c := range map[string]struct {
		doc, section, item0, item1 string
	}{
		"report.md": {string(md), "\n## Warnings\n", "- `trigger`: 1h is not shorter than duration (1h)",
			"- `workload.profile`: lasts 1h15m in all"},
		"report.html": {string(page), `<h2 id="warnings">Warnings</h2>`, "<li><code>trigger</code>: 1h is not shorter than duration (1h)",
			"<li><code>workload.profile</code>: lasts 1h15m in all, longer than duration (1h): the run stops 1h into it, inside workload.profile[1] &lt;b&gt;</li>"},
	} {
		at := strings.Index(c.doc, c.section)
		// The heading, not its link in the contents.
		scen := max(strings.Index(c.doc, "## Scenario as run"), strings.Index(c.doc, ">Scenario as run</h2>"))
		if at < 0 || scen < 0 || at > scen {
			t.Errorf("%s: no warnings section before the scenario (at %d, scenario at %d)", name, at, scen)
			continue
		}
		for _, item := range []string{c.item0, c.item1} {
			if i := strings.Index(c.doc, item); i < at || i > scen {
				t.Errorf("%s: warnings section lacks %q", name, item)
			}
		}
	}

	s.Warnings = nil
	dir = writeResults(t, s, ts)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(filepath.Join(dir, "report.md"))
	page, _ = os.ReadFile(filepath.Join(dir, "report.html"))
	if strings.Contains(string(md), "## Warnings\n") || strings.Contains(string(page), ">Warnings</h2>") {
		t.Error("a summary without warnings gets a warnings section")
	}
}

// TestRenderRefusesSpecialFiles checks that `simulate report` neither
// hangs on a FIFO nor reads /dev/zero forever, for each file it reads.
func TestRenderRefusesSpecialFiles(t *testing.T) {
	s, ts := singleRun(t)
	for _, name := range []string{"summary.json", "timeseries.csv", metrics.StoresFile, "spark.csv"} {
		for _, kind := range []string{"fifo", "zero"} {
			dir := writeResults(t, s, ts)
			p := filepath.Join(dir, name)
			os.Remove(p)
			var err error
			if kind == "fifo" {
				err = syscall.Mkfifo(p, 0o600)
			} else {
				err = os.Symlink("/dev/zero", p)
			}
			if err != nil {
				t.Fatal(err)
			}
			// Render refuses before reading anything: were it to open the
			// named pipe and read, it would block until the test binary's
			// own timeout, a failure without a wall-clock verdict here.
			err = Render(dir)
			if err == nil || !strings.Contains(err.Error(), "not a regular file") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s as %s: Render = %v, want one line saying not a regular file", name, kind, err)
			}
		}
	}
}

// TestRenderChecksInputsFirst checks that the refusal of a special file
// comes before any other work: with a named pipe for stores.json (read
// last) and a damaged timeseries.csv (read first), the pipe is what Render
// names, so a slow machine never waits on the charts to hear of it.
func TestRenderChecksInputsFirst(t *testing.T) {
	s, ts := singleRun(t)
	dir := writeResults(t, s, ts)
	if err := os.WriteFile(filepath.Join(dir, "timeseries.csv"), []byte("not,a,timeseries\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, metrics.StoresFile), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Render(dir)
	if err == nil || !strings.Contains(err.Error(), metrics.StoresFile) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Render = %v, want the named pipe %s refused before timeseries.csv is read", err, metrics.StoresFile)
	}
}
