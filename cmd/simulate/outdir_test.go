package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// outScenario runs for about a second on 2 cores, so that kills land in
// every phase: generating, writing, rendering, publishing.
const outScenario = `# out-folder tests: about a second of work
name: out
seed: 5
duration: 20m
workload:
  rate: 400/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.1
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: restamp
queries:
  - name: pair
    query: withWatermark("event_time", "2 minutes").dropDuplicates(["event_id", "event_time"])
  - name: within
    query: withWatermark("event_time", "2 minutes").dropDuplicatesWithinWatermark(["event_id"])
`

// listing returns every path under dir with its size and mode, sorted.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%s %d %v", rel, fi.Size(), fi.Mode()))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func writeScenarioIn(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "sc.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOutRefusesWhatIsNotDedupsims checks that run, sweep and bench-stores
// refuse, in one line and touching nothing, an --out that is a folder of
// someone else's (given by path, and as "." from inside it), a file, a
// symlink or the root folder. Every target lives in a temporary folder:
// a mutation that breaks the refusal destroys only that.
func TestOutRefusesWhatIsNotDedupsims(t *testing.T) {
	bin := simulateBinary(t)
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	foreign := filepath.Join(dir, "mine")
	os.Mkdir(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "thesis.tex"), []byte("years of work"), 0o644)
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("notes"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(foreign, link)
	before := listing(t, dir)
	for _, cmd := range [][]string{{"run", sc}, {"sweep", sc, "--delay", "1m,2m"}, {"bench-stores", sc}} {
		for _, out := range []string{foreign, file, link, "/", "."} {
			args := append(append([]string{}, cmd...), "--quiet", "--out", out)
			c := exec.Command(bin, args...)
			c.Dir = foreign // so that "." is someone else's folder
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			msg := stderr.String()
			if err == nil || stdout.Len() != 0 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "refusing") && !strings.Contains(msg, "root folder") {
				t.Errorf("%v: %v, stdout %q, stderr %q; want one refusing line and no output", args, err, stdout.String(), msg)
			}
		}
	}
	if after := listing(t, dir); after != before {
		t.Errorf("refused runs changed the folder:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// TestOutReplacesOnlyItsOwn checks that an empty folder and dedupsim's own
// results folder are replaced, the new folder carries the marker, and no
// temporary is left beside it; and that report rewrites only a folder with
// the marker.
func TestOutReplacesOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	out := filepath.Join(dir, "res")
	os.Mkdir(out, 0o755)
	for i := range 2 {
		if code, _, stderr := simulate(t, "run", sc, "--quiet", "--out", out); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
		for _, f := range []string{".dedupsim-results", "summary.json", "timeseries.csv", "report.md", "report.html", "state-rows.png"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("run %d: %v", i, err)
			}
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 2 {
			t.Errorf("run %d: %d entries beside the results, want the scenario and the results only:\n%s", i, len(entries), listing(t, dir))
		}
	}
	if _, err := os.Stat(filepath.Join(out, ".scratch")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the scratch folder was published: %v", err)
	}
	if code, _, stderr := simulate(t, "report", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("report left temporaries beside the results:\n%s", listing(t, dir))
	}
	os.Remove(filepath.Join(out, ".dedupsim-results"))
	before := listing(t, out)
	code, _, stderr := simulate(t, "report", out)
	if code == 0 || !strings.Contains(stderr, "refusing") || listing(t, out) != before {
		t.Errorf("report on a folder without the marker: exit %d, %q", code, stderr)
	}
}

// complete reports what is missing from a results folder, "" if nothing.
func complete(dir string) string {
	var missing []string
	for _, f := range []string{".dedupsim-results", "summary.json", "timeseries.csv", "progress/pair.jsonl", "progress/within.jsonl",
		"report.md", "report.html", "state-rows.png", "state-rows.svg", "watermark.png", "watermark.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			missing = append(missing, f)
		}
	}
	return strings.Join(missing, ", ")
}

// killRounds is how many random kills TestKillAtRandomPointsKeepsResults
// makes: 5 in CI, more with DEDUPSIM_KILL_ROUNDS.
func killRounds() int {
	if n, err := strconv.Atoi(os.Getenv("DEDUPSIM_KILL_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// newFileAppears returns a condition that holds once a file named name,
// newer than since, exists in dir or one level below it (the results folder
// or a staging folder beside it).
func newFileAppears(dir, name string, since time.Time) func() bool {
	return func() bool {
		for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, "*", name)} {
			found, _ := filepath.Glob(p)
			for _, f := range found {
				if fi, err := os.Stat(f); err == nil && fi.ModTime().After(since) {
					return true
				}
			}
		}
		return false
	}
}

// TestKillAtRandomPointsKeepsResults kills `simulate run` with SIGKILL
// while it replaces a complete results folder: at random moments, and the
// moment each phase's first file appears (the timeseries written, a chart
// rendered, the report written, the marker written). After every kill the
// folder is still complete and holds the same results, and the next run
// sweeps the killed runs' staging folders.
func TestKillAtRandomPointsKeepsResults(t *testing.T) {
	bin := simulateBinary(t)
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, outScenario)
	out := filepath.Join(dir, "res")
	args := []string{"run", sc, "--quiet", "--out", out}
	start := time.Now()
	if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, b)
	}
	full := time.Since(start)
	want := summaryWithoutWallClock(t, filepath.Join(out, "summary.json"))
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	type point struct {
		name string
		cond func(since time.Time) func() bool
	}
	var points []point
	for _, f := range []string{"timeseries.csv", "state-rows.png", "report.md", ".dedupsim-results"} {
		points = append(points, point{"when " + f + " appears", func(since time.Time) func() bool { return newFileAppears(dir, f, since) }})
	}
	for range killRounds() {
		at := time.Duration(rng.Int64N(int64(full)))
		points = append(points, point{fmt.Sprintf("at %v of %v (seed %d)", at, full, seed), func(since time.Time) func() bool {
			return func() bool { return time.Since(since) >= at }
		}})
	}
	for _, p := range points {
		since := time.Now()
		time.Sleep(10 * time.Millisecond) // mtimes of the new run's files are after since
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cond := p.cond(since)
		for !cond() && time.Since(since) < 30*time.Second {
			time.Sleep(200 * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if m := complete(out); m != "" {
			t.Fatalf("killed %s: the results folder lacks %s", p.name, m)
		}
		if got := summaryWithoutWallClock(t, filepath.Join(out, "summary.json")); got != want {
			t.Fatalf("killed %s: summary.json changed", p.name)
		}
	}
	if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("last run: %v\n%s", err, b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("killed runs left temporaries beside the results:\n%s", listing(t, dir))
	}
}

// TestFullDiskKeepsResults fills the disk while a run replaces a complete
// results folder: one line, non-zero exit, the old folder intact and no
// staging folder left. The disk is a small tmpfs when this process may
// mount one, and otherwise a file-size limit (ulimit -f) that fails the
// same writes with EFBIG.
func TestFullDiskKeepsResults(t *testing.T) {
	bin := simulateBinary(t)
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	disk := filepath.Join(dir, "disk")
	os.Mkdir(disk, 0o755)
	out := filepath.Join(disk, "res")
	args := []string{"run", sc, "--quiet", "--out", out}
	if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, b)
	}
	var size int64
	filepath.Walk(out, func(_ string, fi os.FileInfo, _ error) error {
		if fi != nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	// A disk with room for the results and a half.
	mounted := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size*3/2), "tmpfs", disk).Run() == nil
	var cmd *exec.Cmd
	if mounted {
		t.Cleanup(func() { exec.Command("umount", disk).Run() })
		if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("first run on the small disk: %v\n%s", err, b)
		}
		cmd = exec.Command(bin, args...)
	} else {
		t.Logf("no tmpfs (not root?): failing the writes with ulimit -f instead")
		cmd = exec.Command("sh", "-c", `ulimit -f 64; exec "$@"`, "sh")
		cmd.Args = append(cmd.Args, append([]string{bin}, args...)...)
	}
	before := listing(t, out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("run on a full disk: %v, stdout %q, stderr %q; want a failure in one line", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "no space left") && !strings.Contains(stderr.String(), "file too large") {
		t.Errorf("stderr %q does not say the disk is full", stderr.String())
	}
	if after := listing(t, out); after != before {
		t.Errorf("the failed run changed the old results:\nbefore\n%s\nafter\n%s", before, after)
	}
	if entries, _ := os.ReadDir(disk); len(entries) != 1 {
		t.Errorf("the failed run left temporaries beside the results:\n%s", listing(t, disk))
	}
}

// TestResultsRespectUmask checks that files and folders get the modes the
// umask allows, not forced ones.
func TestResultsRespectUmask(t *testing.T) {
	bin := simulateBinary(t)
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	out := filepath.Join(dir, "res")
	cmd := exec.Command("sh", "-c", `umask 077; exec "$@"`, "sh", bin, "run", sc, "--quiet", "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v under umask 077, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
}

// TestSIGINTSaysInterrupted checks that Ctrl-C stops a run with one line,
// exit 130 and nothing written.
func TestSIGINTSaysInterrupted(t *testing.T) {
	bin := simulateBinary(t)
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, strings.Replace(outScenario, "duration: 20m", "duration: 10h", 1))
	out := filepath.Join(dir, "res")
	cmd := exec.Command(bin, "run", sc, "--quiet", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || stderr.String() != "simulate run: interrupted\n" {
		t.Fatalf("after SIGINT: %v, stderr %q; want exit 130 and \"simulate run: interrupted\"", err, stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("an interrupted run left files:\n%s", listing(t, dir))
	}
}

// summaryWithoutWallClock reads a summary.json without its wall-clock
// fields.
func summaryWithoutWallClock(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(withoutWallClock(data))
}

// TestConcurrentRunsOnOneOut runs two processes with different seeds into
// the same --out at once: both succeed, and the folder left is whole and
// is one of the two runs, never a mix.
func TestConcurrentRunsOnOneOut(t *testing.T) {
	bin := simulateBinary(t)
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, outScenario)
	out := filepath.Join(dir, "res")
	want := map[string]string{}
	for _, seed := range []string{"1", "2"} {
		ref := filepath.Join(dir, "ref"+seed)
		if b, err := exec.Command(bin, "run", sc, "--quiet", "--seed", seed, "--out", ref).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		ts, _ := os.ReadFile(filepath.Join(ref, "timeseries.csv"))
		want[string(ts)] = seed
		os.RemoveAll(ref)
	}
	for round := range 3 {
		var cmds []*exec.Cmd
		var errs []*bytes.Buffer
		for _, seed := range []string{"1", "2"} {
			c := exec.Command(bin, "run", sc, "--quiet", "--seed", seed, "--out", out)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, errs = append(cmds, c), append(errs, &stderr)
		}
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("round %d: a concurrent run failed: %v: %s", round, err, errs[i])
			}
		}
		if m := complete(out); m != "" {
			t.Fatalf("round %d: the results folder lacks %s", round, m)
		}
		ts, _ := os.ReadFile(filepath.Join(out, "timeseries.csv"))
		seed, ok := want[string(ts)]
		if !ok {
			t.Fatalf("round %d: timeseries.csv is neither run's", round)
		}
		if !strings.Contains(summaryWithoutWallClock(t, filepath.Join(out, "summary.json")), `"seed": `+seed) {
			t.Fatalf("round %d: summary.json and timeseries.csv come from different runs", round)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Fatalf("round %d: temporaries left beside the results:\n%s", round, listing(t, dir))
		}
	}
}
