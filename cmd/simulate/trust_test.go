package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The tests of issue 33's "what broke" list that run the command line.

// TestProfileInsideOutIsRefusedByEveryCommand: plan --out DIR and export
// --out DIR with --cpuprofile DIR/cpu.prof lost the profile when the folder
// was published, exit 0. Every command that writes a folder refuses it up
// front in one line, nothing written.
func TestProfileInsideOutIsRefusedByEveryCommand(t *testing.T) {
	for _, cmd := range [][]string{
		{"plan", "--query", "within"},
		{"export"},
		{"bench-stores"},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			dir := t.TempDir()
			sc := writeScenarioIn(t, dir, smallScenario)
			out := filepath.Join(dir, "o")
			prof := filepath.Join(out, "cpu.prof")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append([]string{cmd[0], sc, "--out", out}, cmd[1:]...)
			before := listing(t, dir)
			code, stdout, errs := simulate(t, append(args, "--cpuprofile", prof)...)
			if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "is inside --out") {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line saying the profile is inside --out", code, stdout, errs)
			}
			if after := listing(t, dir); after != before {
				t.Fatalf("the folder changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// TestUsersFilesInAResultsFolderAreKept: a user's notes.txt and analysis/
// folder inside a results folder were deleted without a word by the next
// run --out into it, exit 0. run (and report, which redraws in place)
// refuse it in one line naming the first such entry, touching nothing;
// with --force they delete exactly those entries, saying so, and write.
func TestUsersFilesInAResultsFolderAreKept(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	out := filepath.Join(dir, "o")
	run := []string{"run", sc, "--quiet", "--no-report", "--out", out}
	if code, _, errs := simulate(t, run...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errs)
	}
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	os.MkdirAll(filepath.Join(out, "analysis"), 0o755)
	os.WriteFile(filepath.Join(out, "analysis", "a.ipynb"), []byte("mine"), 0o644)
	before := listing(t, dir)
	for _, args := range [][]string{run, {"report", out}} {
		code, stdout, errs := simulate(t, args...)
		if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "holds analysis/ and 1 more, which dedupsim did not write") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q: want exit 1 and one line naming analysis/", args[0], code, stdout, errs)
		}
		if after := listing(t, dir); after != before {
			t.Fatalf("%s changed the folder:\n%s\nwas:\n%s", args[0], after, before)
		}
	}
	code, _, errs := simulate(t, append(run, "--force")...)
	if code != 0 || !strings.Contains(errs, "--force: deleted from "+out+" what dedupsim did not write: analysis/, notes.txt\n") {
		t.Fatalf("--force: exit %d, stderr %q: want exit 0 and a line naming what it deleted", code, errs)
	}
	for _, f := range []string{"notes.txt", "analysis"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Fatalf("%s is still there after --force", f)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Fatal(err)
	}
}

// TestUsersFilesInAnExportAreKept: export --out refuses an export folder
// holding a file dedupsim did not write, and --force deletes it.
func TestUsersFilesInAnExportAreKept(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "e")
	trace := "../../sim/spark/replay/testdata/conformance/deduplicate-with-watermark.json"
	args := []string{"export", trace, "--out", out, "--format", "json"}
	if code, _, errs := simulate(t, args...); code != 0 {
		t.Fatalf("first export: exit %d: %s", code, errs)
	}
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	if code, _, errs := simulate(t, args...); code != 1 || !strings.Contains(errs, "holds notes.txt, which dedupsim did not write") {
		t.Fatalf("exit %d, stderr %q: want exit 1 naming notes.txt", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(b) != "mine" {
		t.Fatal("notes.txt was changed by a refused export")
	}
	if code, _, errs := simulate(t, append(args, "--force")...); code != 0 || !strings.Contains(errs, "notes.txt") {
		t.Fatalf("--force: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "notes.txt")); err == nil {
		t.Fatal("notes.txt is still there after --force")
	}
}

// TestMergeRefusesEditedCounters: merge trusted the counters in
// shard.json: one edited shard gave a merged report with "12,345 of 1,504
// (820.8%)" missed, exit 0. The summary's counters are compared with the
// shard's (checksummed) data files and with each other, and the ground
// truth across shards: an edit is refused in one line, nothing written.
func TestMergeRefusesEditedCounters(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	shards := sweepShards(t, sc, filepath.Join(dir, "a"), "1m", 2)
	edit := func(name string, change func(string) string) string {
		d := filepath.Join(dir, name)
		if err := os.CopyFS(d, os.DirFS(shards[1])); err != nil {
			t.Fatal(err)
		}
		mf := filepath.Join(d, "shard.json")
		data, err := os.ReadFile(mf)
		if err != nil {
			t.Fatal(err)
		}
		changed := change(string(data))
		if changed == string(data) {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		os.WriteFile(mf, []byte(changed), 0o644)
		return d
	}
	first := func(field, value string) func(string) string {
		re := regexp.MustCompile(`"` + field + `": [0-9.e+-]+`)
		return func(s string) string {
			done := false
			return re.ReplaceAllStringFunc(s, func(m string) string {
				if done {
					return m
				}
				done = true
				return `"` + field + `": ` + value
			})
		}
	}
	every := func(field, value string) func(string) string {
		re := regexp.MustCompile(`"` + field + `": [0-9]+`)
		return func(s string) string { return re.ReplaceAllString(s, `"`+field+`": `+value) }
	}
	for _, c := range []struct {
		name   string
		change func(string) string
		want   string
	}{
		{"missed", first("missedDuplicates", "12345"), "summary's missedDuplicates is 12345, but its files say"},
		{"emitted", first("emittedRows", "7"), "summary's emittedRows is 7, but its files say"},
		{"peak rate", first("missedDuplicateRate", "8.208"), "summary's missedDuplicateRate is 8.208"},
		{"true duplicates", first("trueDuplicates", "0"), "the shards ran the same stream"},
		{"ground truth", every("logicalEvents", "99999999"), "the shards ran the same stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := edit(c.name, c.change)
			out := filepath.Join(dir, "merged-"+strings.ReplaceAll(c.name, " ", "-"))
			before := listing(t, dir)
			code, stdout, stderr := simulate(t, "merge", shards[0], d, "--out", out)
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line with %q", code, stdout, stderr, c.want)
			}
			if after := listing(t, dir); after != before {
				t.Fatalf("the refused merge changed the folder")
			}
		})
	}
	// The shards as written merge.
	if code, _, stderr := simulate(t, "merge", shards[0], shards[1], "--out", filepath.Join(dir, "merged"), "--no-report"); code != 0 {
		t.Fatalf("merging the shards as written: %s", stderr)
	}
}

// TestCalibrateWritesOnlyWhatPlanAccepts: calibrate printed a cost plan
// refuses (batchOverheadMs: 9223000000000000000, exit 0), from a log whose
// durations are absurd; and a --cost file with two YAML documents was read
// for its first one, silently. Both are refused in one line.
func TestCalibrateWritesOnlyWhatPlanAccepts(t *testing.T) {
	dir := t.TempDir()
	sample, err := os.ReadFile("../../experiments/spark-sample/driver.log")
	if err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.log")
	os.WriteFile(huge, regexp.MustCompile(`"triggerExecution" : [0-9]+`).ReplaceAll(sample, []byte(`"triggerExecution" : 9223000000000000000`)), 0o644)
	code, stdout, errs := simulate(t, "calibrate", huge, "--executors", "4", "--cores-per-executor", "4")
	if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "cost.batchOverheadMs: want a cost in milliseconds per batch, 0 or more, at most") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and plan's own refusal of batchOverheadMs", code, stdout, errs)
	}
	// The sample itself still calibrates.
	if code, _, errs := simulate(t, "calibrate", "../../experiments/spark-sample/driver.log", "--executors", "4", "--cores-per-executor", "4"); code != 0 {
		t.Fatalf("the sample log: exit %d: %s", code, errs)
	}

	two := filepath.Join(dir, "two.yaml")
	os.WriteFile(two, []byte("cost:\n  rowNs: 5\n---\ncost:\n  rowNs: 7\n"), 0o644)
	code, stdout, errs = simulate(t, "plan", "../../experiments/capacity-plan.yaml", "--query", "within-watermark", "--seeds", "1",
		"--partitions", "16", "--executors", "2", "--cost", two)
	if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "two.yaml: holds more than one YAML document (the second starts at line 3)") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line saying the file holds two documents", code, stdout, errs)
	}
}

// TestMessages: each of issue 33's messages, one line naming what is wrong
// and what to do, exit 1 (on today's code each was a raw error, a wrong
// blame, two lines, or no refusal at all).
func TestMessages(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	window := filepath.Join(dir, "window.yaml")
	os.WriteFile(window, []byte(strings.Replace(smallScenario, "queries:\n", "queries:\n  - name: ks\n    engine: kafka-streams\n    window: 1000000d\n", 1)), 0o644)
	kafka := filepath.Join(dir, "kafka.json")
	os.WriteFile(kafka, []byte(`{"engine": "kafka-streams", "name": "x", "mode": "keep-last", "form": "reduce", "steps": [{"records": [{"key": "a", "value": "x", "timestamp": 9223372036854775807}]}]}`), 0o644)
	newline := filepath.Join(dir, "bad\nname.json")
	os.WriteFile(newline, []byte(`{nope`), 0o644)
	review := filepath.Join(dir, "review")
	os.Mkdir(review, 0o755)
	for _, f := range []string{".dedupsim-results", "plan.json", "report.md"} {
		os.WriteFile(filepath.Join(review, f), []byte("{}"), 0o644)
	}
	out := filepath.Join(dir, "o")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"state of nothing", []string{"state", filepath.Join(dir, "nonexist")}, "nonexist: no such folder; want a checkpoint folder"},
		{"workers -1", []string{"run", sc, "--workers", "-1", "--out", out}, "--workers -1: want 0 (all cores) or more"},
		{"snapshot -1s", []string{"run", sc, "--snapshot-interval", "-1s", "--out", out}, "--snapshot-interval -1s: want a wall-clock interval above 0"},
		{"snapshot 0", []string{"sweep", sc, "--delay", "1m", "--snapshot-interval", "0", "--out", out}, "--snapshot-interval 0s: want a wall-clock interval above 0"},
		{"plan --out empty", []string{"plan", sc, "--query", "within", "--out", ""}, `--out "": want a folder for the review document`},
		{"window too long", []string{"run", window, "--out", out}, "queries[0].window: must be a duration of at most 106751d23h47m16.854s (about 292 years), got 1000000d"},
		{"kafka timestamp 2^63-1", []string{"replay", kafka}, "records[0].timestamp: 9223372036854776000 is above 2^53"},
		{"newline in a file name", []string{"replay", newline}, `bad\nname.json": trace: bad JSON`},
		{"report of a plan review", []string{"report", review}, "a plan's review folder (simulate plan --out), not a run's results folder"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, errs := simulate(t, c.args...)
			if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line with %q", code, stdout, errs, c.want)
			}
			if strings.Contains(errs, "negative") {
				t.Fatalf("stderr %q blames a negative value", errs)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%s was written", out)
			}
		})
	}
}

// TestReportAdviceWorks: a run whose report failed on timeseries.csv's
// size limit advised `simulate report`, which fails on the same limit
// (after 242 s). It advises what works instead; other failures still
// advise simulate report.
func TestReportAdviceWorks(t *testing.T) {
	big := &runner.ReportError{Out: "o", Err: fmt.Errorf("o is not a readable results folder: %w", &fileio.TooLargeError{Path: "o/timeseries.csv", Limit: fileio.MaxTimeseriesBytes})}
	if got := reportAdvice(big, "o"); strings.Contains(got, "redraw it with: simulate report") || !strings.Contains(got, "simulate report cannot draw it either (it reads timeseries.csv within the same limit)") || !strings.Contains(got, "--no-report") {
		t.Fatalf("advice for a file over its limit: %q", got)
	}
	other := &runner.ReportError{Out: "o", Err: errors.New("a chart failed")}
	if got := reportAdvice(other, "o"); got != "redraw it with: simulate report o (or run with --no-report)" {
		t.Fatalf("advice for another failure: %q", got)
	}
}

// TestRunThatCannotFinishIsRefused: 1e9 events/s for 30 days with an
// unbounded dedup was accepted by every command that simulates; each
// refuses it in one line before generating anything, nothing written.
func TestRunThatCannotFinishIsRefused(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, "name: huge\nseed: 1\nduration: 30d\ntrigger: 1ms\nworkload:\n  rate: 1e9/s\nqueries:\n  - name: u\n    query: dropDuplicates([\"event_id\"])\n")
	out := filepath.Join(dir, "o")
	for _, args := range [][]string{
		{"run", sc, "--out", out},
		{"sweep", sc, "--delay", "1m", "--out", out},
		{"plan", sc, "--query", "u", "--out", out},
		{"bench-stores", sc, "--out", out},
		{"export", sc, "--out", out},
	} {
		code, stdout, errs := simulate(t, args...)
		if code != 1 || stdout != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "about 2.6e+15 rows") || !strings.Contains(errs, "--go-ahead") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q: want exit 1 and one line with the estimate", args[0], code, stdout, errs)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s wrote %s", args[0], out)
		}
	}
}

// TestLongWorkPrintsItsEstimate: a run estimated at a minute or more
// prints its estimate before it starts (not with --quiet); a short one
// prints nothing.
func TestLongWorkPrintsItsEstimate(t *testing.T) {
	long, err := scenario.Parse([]byte("name: long\nseed: 1\nduration: 1h\ntrigger: 1s\nworkload:\n  rate: 1e6/s\nqueries:\n  - name: w\n    query: withWatermark(\"event_time\", \"1 minute\").dropDuplicatesWithinWatermark([\"event_id\"])\n"), "long.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := checkEstimate(&b, long, 1, "", false, false); err != nil {
		t.Fatal(err)
	}
	// 1e6/s x 3600 s = 3.6e9 rows at 5e6 rows/s: 720 s.
	if want := "estimate: about 3,600,000,000 rows for each of 1 jobs, a peak state of about 121,000,000 keys in memory (at least 4.17 GiB), and at least 12m at 5,000,000 rows/s on each of 1 workers\n"; b.String() != want {
		t.Fatalf("printed %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := checkEstimate(&b, long, 1, "", false, true); err != nil || b.Len() != 0 {
		t.Fatalf("--quiet printed %q (%v)", b.String(), err)
	}
	short, _ := scenario.Parse([]byte(smallScenario), "small.yaml")
	if err := checkEstimate(&b, short, 1, "", false, false); err != nil || b.Len() != 0 {
		t.Fatalf("a short run printed %q (%v)", b.String(), err)
	}
}

// TestSIGTERMEndsAStuckRun: a Pebble run whose job waited on a flush stuck
// in Pebble's write stall ignored the first SIGTERM. Here a job is held
// where nothing returns (the pause hook, which, like the stall, never
// looks at the signal): the first SIGTERM ends the process, 143, saying
// so, instead of waiting forever.
func TestSIGTERMEndsAStuckRun(t *testing.T) {
	sc := writeScenario(t, killScenario)
	dir := t.TempDir()
	pause := filepath.Join(dir, "pause")
	os.Mkdir(pause, 0o755)
	p := start(t, "snapshot-every=2;pause=pair:3", pause, "run", sc, "--quiet", "--no-report", "--store", "pebble",
		"--checkpoint", filepath.Join(dir, "ck"), "--out", filepath.Join(dir, "o"))
	p.waitFiles(t, filepath.Join(pause, "pair.paused"))
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the run still waits 2 minutes after SIGTERM")
	}
	if code, errs := p.cmd.ProcessState.ExitCode(), p.stderr.String(); code != 143 || !strings.Contains(errs, "interrupted; still stopping after") {
		t.Fatalf("exit %d, stderr %q: want 143 and the line saying why it exits", code, errs)
	}
	// The checkpoint resumes (as after kill -9).
	if code, second := runProc(t, "", "", "run", sc, "--quiet", "--no-report", "--store", "pebble", "--checkpoint", filepath.Join(dir, "ck"), "--out", filepath.Join(dir, "o")); code != 0 {
		t.Fatalf("the resume: exit %d: %s", code, second.stderr.String())
	}
}
