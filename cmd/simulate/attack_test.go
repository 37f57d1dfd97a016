package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// TestMergeRefusesEditedPartCounters: the counters of a part of a run
// split by key that its timeseries cannot check (a part's timeseries holds
// the whole stream's input) were taken from shard.json as they stood:
// inputRows, sinkWrites and sinkDuplicates each edited by 1,000 went into
// the merged summary, exit 0. They are checked against the counters the
// files do check (every row is an event's first row or a copy; emitted,
// dropped late or dropped as a duplicate; a sink writes its emitted rows
// and, only when it can fail, its retried batches' rows again).
func TestMergeRefusesEditedPartCounters(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	parts := runParts(t, sc, filepath.Join(dir, "parts"), 2)
	for _, c := range []struct{ field, want string }{
		{"inputRows", "summary's inputRows is"},
		{"sinkWrites", "summary's sinkWrites is"},
		{"sinkDuplicates", "summary's sinkDuplicates is"},
	} {
		t.Run(c.field, func(t *testing.T) {
			d := filepath.Join(dir, "edited-"+c.field)
			if err := os.CopyFS(d, os.DirFS(parts[1])); err != nil {
				t.Fatal(err)
			}
			mf := filepath.Join(d, "shard.json")
			data, err := os.ReadFile(mf)
			if err != nil {
				t.Fatal(err)
			}
			done := false
			re := regexp.MustCompile(`"` + c.field + `": [0-9]+`)
			edited := re.ReplaceAllStringFunc(string(data), func(m string) string {
				if done {
					return m
				}
				done = true
				return `"` + c.field + `": 1000`
			})
			if edited == string(data) {
				t.Fatal("the edit changed nothing")
			}
			os.WriteFile(mf, []byte(edited), 0o644)
			out := filepath.Join(dir, "merged-"+c.field)
			before := listing(t, dir)
			code, stdout, errs := simulate(t, "merge", parts[0], d, "--out", out, "--no-report")
			if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line with %q", code, stdout, errs, c.want)
			}
			if after := listing(t, dir); after != before {
				t.Fatal("the refused merge changed the folder")
			}
		})
	}
	if code, _, errs := simulate(t, "merge", parts[0], parts[1], "--out", filepath.Join(dir, "merged"), "--no-report"); code != 0 {
		t.Fatalf("merging the parts as written: %s", errs)
	}
}

// TestEmptyOutIsRefusedByEveryCommand: export --out "" and bench-stores
// --out "" wrote their default folder (export-NAME, results/NAME), exit 0,
// where run, sweep and plan refuse an empty --out. Each refuses it in one
// line, nothing written.
func TestEmptyOutIsRefusedByEveryCommand(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	t.Chdir(dir)
	before := listing(t, dir)
	for _, args := range [][]string{
		{"export", sc, "--out", ""},
		{"bench-stores", sc, "--repeat", "1", "--quiet", "--out", ""},
		{"run", sc, "--quiet", "--out", ""},
	} {
		code, stdout, errs := simulate(t, args...)
		if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `--out "": want`) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q: want exit 1 and one line refusing --out \"\"", args[0], code, stdout, errs)
		}
		if after := listing(t, dir); after != before {
			t.Fatalf("%s wrote:\n%s\nwas:\n%s", args[0], after, before)
		}
	}
}

// TestMergeNamesAMixOfKindsOfShards: a part of a run split by key merged
// with a sweep's shard was refused for its sweep ("sweep delays 1m, but
// DIR has : every shard must run with the same --delay"), a blank where
// the run's delays would be; it names the two kinds of shard.
func TestMergeNamesAMixOfKindsOfShards(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	parts := runParts(t, sc, filepath.Join(dir, "parts"), 2)
	shards := sweepShards(t, sc, filepath.Join(dir, "sweep"), "1m", 2)
	code, stdout, errs := simulate(t, "merge", parts[0], shards[1], "--out", filepath.Join(dir, "merged"))
	if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "merge the shards of one command") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line saying the shards are of two commands", code, stdout, errs)
	}
}

// TestRunShardRefusesTransformWithState: run --shard K/N took a
// transformWithState dedup, whose parts then could not be merged ("row 45:
// ... the parts are not of one run"): each part runs a batch at every
// trigger until its own keys expire. It is refused up front in one line,
// nothing written.
func TestRunShardRefusesTransformWithState(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, strings.Replace(smallScenario, "queries:\n", "queries:\n  - name: tws\n    query: 'groupBy(\"event_id\").transformWithState(DedupProcessor(ttl=\"1 minute\"))'\n", 1))
	before := listing(t, dir)
	code, stdout, errs := simulate(t, "run", sc, "--quiet", "--shard", "0/2", "--out", filepath.Join(dir, "part"))
	if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "query tws cannot split by key: a transformWithState dedup") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line refusing the transformWithState query", code, stdout, errs)
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("the refused run wrote:\n%s\nwas:\n%s", after, before)
	}
}

// TestFitRefusesANameThatIsAPath: fit --name ../evil wrote evil.yaml
// beside --out (outside the folder it publishes, replacing any file of
// that name) and then failed blaming itself ("a bug of fit"). A name that
// is not a scenario's name is refused in one line, nothing written.
func TestFitRefusesANameThatIsAPath(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("event_id,event_time,ingest_time\n")
	for i := range 400 {
		fmt.Fprintf(&b, "id%d,%d,%d\n", i, 1772366400000+int64(i)*100, 1772366400500+int64(i)*100)
	}
	log := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "sub", "fitted")
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	before := listing(t, dir)
	for _, name := range []string{"../evil", "a/b", ".hidden"} {
		code, stdout, errs := simulate(t, "fit", log, "--id", "event_id", "--event-time", "event_time", "--arrival-time", "ingest_time", "--no-check", "--out", out, "--name", name)
		if code != 1 || stdout != "" || !strings.Contains(errs, "--name: want a name of letters") || strings.Count(errs, "\n") > 2 {
			t.Errorf("--name %s: exit %d, stdout %q, stderr %q: want exit 1 and the name refused", name, code, stdout, errs)
		}
		if after := listing(t, dir); after != before {
			t.Fatalf("--name %s wrote:\n%s\nwas:\n%s", name, after, before)
		}
	}
}

// TestFitRefusesABadQueryUpFront: fit --query 'bogus(' (or a key the rows
// lack) failed after the fit, when the scenario was loaded, blaming itself
// ("the fitted scenario does not load (a bug of fit)") and naming a
// staging path. The query is checked first, in one line naming --query.
func TestFitRefusesABadQueryUpFront(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("event_id,event_time,ingest_time\n")
	for i := range 400 {
		fmt.Fprintf(&b, "id%d,%d,%d\n", i, 1772366400000+int64(i)*100, 1772366400500+int64(i)*100)
	}
	log := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	for _, q := range []string{"bogus(", `dropDuplicates(["nope"])`} {
		code, stdout, errs := simulate(t, "fit", log, "--id", "event_id", "--event-time", "event_time", "--arrival-time", "ingest_time", "--no-check", "--out", filepath.Join(dir, "o"), "--query", q)
		if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--query ") || strings.Contains(errs, "a bug of fit") {
			t.Errorf("--query %s: exit %d, stdout %q, stderr %q: want exit 1 and one line naming --query", q, code, stdout, errs)
		}
		if after := listing(t, dir); after != before {
			t.Fatalf("--query %s wrote:\n%s\nwas:\n%s", q, after, before)
		}
	}
}
