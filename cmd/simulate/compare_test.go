package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One counter changed in Spark's records is reported at its batch and
// counter: the verdict names the first differing batch, the table has its
// row, and compare exits 1.
func TestCompareFindsAChangedCounter(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "cli.yaml")
	if err := os.WriteFile(scen, []byte(smallScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "export")
	if code, _, stderr := simulate(t, "export", scen, "--out", out); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "expected", "within.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	// Batch 6's duplicates, one more in Spark's record.
	old := `"customMetrics":{"numDroppedDuplicateRows":`
	i := strings.Index(lines[6], old)
	if !strings.Contains(lines[6], `"batchId":6,`) || i < 0 {
		t.Fatalf("line 6 is not batch 6 with a duplicate count: %s", lines[6])
	}
	rest := lines[6][i+len(old):]
	n := rest[:strings.IndexByte(rest, '}')]
	lines[6] = lines[6][:i] + old + n + "1" + rest[len(n):]
	other, err := os.ReadFile(filepath.Join(out, "expected", "unbounded.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	actual := filepath.Join(dir, "progress.jsonl")
	if err := os.WriteFile(actual, []byte(strings.Join(lines, "\n")+"\n"+string(other)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := simulate(t, "compare", filepath.Join(out, "expected"), actual)
	want := "different: query within, first at batch 6 (stateOperators[0].customMetrics.numDroppedDuplicateRows " + n + " expected, " + n + "1 actual); 1 of "
	if code != 1 || !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, "[0] numDroppedDuplicateRows") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant exit 1 and a verdict starting %q", code, stderr, stdout, want)
	}
	// The other query's batches are equal, and said so.
	if !strings.Contains(stdout, "query unbounded\n") || !strings.Contains(stdout, "all equal") {
		t.Errorf("stdout does not say the other query is equal:\n%s", stdout)
	}
}

// Spark's progress in the forms users have it (a listener's JSON lines, a
// JSON array, pretty JSON across lines, a driver log), with every field
// of Spark 3.5 (null offsets, RocksDB custom metrics), compares equal with
// the matching prediction.
func TestCompareReadsSparksForms(t *testing.T) {
	fixtures := "../../metrics/progresslog/testdata"
	for _, form := range []string{"listener.jsonl", "recent-progress.json", "pretty.json", "driver.log"} {
		code, stdout, stderr := simulate(t, "compare", "../../sim/spark/compare/testdata/expected",
			filepath.Join(fixtures, form), filepath.Join(fixtures, "hdfs-pretty.json"))
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "equal: 2 queries, 27 batches, every counter matches\n") {
			t.Errorf("%s: exit %d, stderr %q, stdout:\n%s", form, code, stderr, stdout)
		}
	}
}

// Bad input to compare is one line on stderr and exit 2, never 1 (which
// means "different"): a file that is not progress JSON, an expected folder
// without a prediction, a missing file, too few arguments, a bad flag.
func TestCompareBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "../../sim/spark/compare/testdata/expected", "../../go.mod"}, "go.mod: line 1: want Spark StreamingQueryProgress JSON"},
		{[]string{"compare", dir, "../../metrics/progresslog/testdata/listener.jsonl"}, "no *.jsonl file"},
		{[]string{"compare", "../../sim/spark/compare/testdata/expected", filepath.Join(dir, "missing.jsonl")}, "missing.jsonl"},
		{[]string{"compare", "../../sim/spark/compare/testdata/expected"}, "want EXPECTED and at least one ACTUAL"},
		{[]string{"compare", "../../sim/spark/compare/testdata/expected", "x", "--bogus"}, "unknown flag: --bogus"},
	} {
		code, stdout, stderr := simulate(t, c.args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, one line with %q", c.args, code, stdout, stderr, c.want)
		}
	}
}
