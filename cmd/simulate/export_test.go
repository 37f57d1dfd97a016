package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The "done when": exporting experiments/quickstart.yaml and a
// conformance trace produces the batch files, job.py, the prediction, the
// README and the marker; and compare finds the prediction equal to itself.
func TestExportQuickstartAndATrace(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args    []string
		batches int
		files   []string
	}{
		{[]string{"../../experiments/quickstart.yaml"}, 251,
			[]string{"expected/pair-keyed.jsonl", "expected/within-watermark.jsonl", "expected/unbounded.jsonl", "batches/batch-000000250.parquet"}},
		{[]string{"../../sim/spark/replay/testdata/conformance/deduplicate-with-watermark.json", "--format", "json"}, 4,
			[]string{"expected/deduplicate-with-watermark.jsonl", "batches/batch-000000003.json"}},
	} {
		out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(c.args[0]), filepath.Ext(c.args[0])))
		code, stdout, stderr := simulate(t, append([]string{"export", "--out", out}, c.args...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("export %v: exit %d, stderr %q", c.args, code, stderr)
		}
		if !strings.HasPrefix(stdout, out+": ") || !strings.Contains(stdout, "spark-submit job.py") {
			t.Errorf("export %v prints %q", c.args, stdout)
		}
		for _, f := range append(c.files, "job.py", "README.md", "export.json", ".dedupsim-export") {
			if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
				t.Errorf("export %v: %s: %v", c.args, f, err)
			}
		}
		entries, _ := os.ReadDir(filepath.Join(out, "batches"))
		if len(entries) != c.batches {
			t.Errorf("export %v: %d batch files, want %d", c.args, len(entries), c.batches)
		}
		expected := filepath.Join(out, "expected")
		files, _ := filepath.Glob(filepath.Join(expected, "*.jsonl"))
		code, stdout, stderr = simulate(t, append([]string{"compare", expected}, files...)...)
		if code != 0 || !strings.HasPrefix(stdout, "equal: ") || stderr != "" {
			t.Errorf("compare with itself: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	}
}

// Bad input to export is one line on stderr, exit 1, nothing on stdout
// and nothing written: an unknown format, an --out that is not an export,
// a trace Spark cannot be driven through, a missing or bad file.
func TestExportBadInputIsOneLineNothingWritten(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign")
	if err := os.MkdirAll(foreign, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "mine.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nduration: 1h\nworkload: {rate: 10/s}\nqueries:\n  - {name: q, query: 'dropDuplicates([\"nope\"])'}\n"), 0o644)
	empty := filepath.Join(dir, "empty.yaml")
	os.WriteFile(empty, []byte("name: empty\nduration: 1m\nworkload: {rate: 0}\nqueries:\n  - {name: q, query: 'dropDuplicates([\"event_id\"])'}\n"), 0o644)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "../../experiments/quickstart.yaml", "--out", out, "--format", "csv"}, `--format: want parquet or json, got "csv"`},
		{[]string{"export", "../../experiments/quickstart.yaml", "--out", foreign}, "is not a dedupsim export"},
		{[]string{"export", "../../sim/spark/replay/testdata/cases/own-manual-clock-late-filter-lags-when-data-follows-data.json", "--out", out}, "not exportable: a manual-clock trace"},
		{[]string{"export", "../../sim/spark/replay/testdata/cases/own-key-values-compared-by-json-value.json", "--out", out}, "column k holds values of several kinds"},
		{[]string{"export", "../../sim/spark/replay/testdata/cases/own-error-redefining-watermark.json", "--out", out}, "Redefining watermark is disallowed"},
		{[]string{"export", filepath.Join(dir, "missing.yaml"), "--out", out}, "missing.yaml"},
		{[]string{"export", bad, "--out", out}, `key "nope" not found`},
		{[]string{"export", empty, "--out", out}, "the scenario has no rows"},
	} {
		code, stdout, stderr := simulate(t, c.args...)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1, one line with %q", c.args, code, stdout, stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v: %s written", c.args, out)
		}
	}
	entries, _ := os.ReadDir(foreign)
	if len(entries) != 1 {
		t.Errorf("the foreign folder holds %d entries, want its one file", len(entries))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%v beside the exports, want foreign, bad.yaml and empty.yaml only", entries)
	}
}

// A trace is a .json file whatever the case of its extension (X.JSON is
// read as a trace, not as a scenario), and export accepts --quiet as the
// other long-running commands do.
func TestExportUpperCaseTraceQuiet(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../sim/spark/replay/testdata/conformance/deduplicate-with-watermark.json")
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "Upper.JSON")
	if err := os.WriteFile(trace, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := simulate(t, "export", trace, "--quiet", "--format", "json", "--out", out)
	if code != 0 || stderr != "" {
		t.Fatalf("export %s --quiet: exit %d, stderr %q", trace, code, stderr)
	}
	if !strings.Contains(stdout, "expected/Upper.jsonl") {
		t.Errorf("export of %s prints %q; want the trace's prediction expected/Upper.jsonl", trace, stdout)
	}
	if entries, _ := os.ReadDir(filepath.Join(out, "batches")); len(entries) != 4 {
		t.Errorf("%d batch files, want the trace's 4", len(entries))
	}
}
