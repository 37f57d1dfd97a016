package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// killScenario has two queries, a restart and a lost checkpoint, and more
// bad-clock rows than the chart markers keep, spread over the run.
const killScenario = `# killed and resumed by the tests
name: kill
seed: 11
duration: 5m
trigger: 10s
workload:
  rate: 150/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.1
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: restamp
  futureTimestamps:
    probability: 6e-4
    skew: {dist: constant, value: 30s}
queries:
  - name: pair
    query: withWatermark("event_time", "2 minutes").dropDuplicates(["event_id", "event_time"])
  - name: within
    query: withWatermark("event_time", "2 minutes").dropDuplicatesWithinWatermark(["event_id"])
faults:
  - {at: 2m, kind: restart}
  - {at: 3m30s, kind: lose-checkpoint}
`

// killPoint is a deterministic point to kill a run at: the test hooks it
// runs with, and the files (in the pause folder, or in the checkpoint for
// paths starting with "ck/") whose presence means the run is there.
type killPoint struct {
	name  string
	hooks string
	wait  []string
}

// killPoints are the deterministic kill points of each store: right after
// a snapshot, between snapshots, before any snapshot, once a job's stream
// is over but before it finished, and with one job finished while the
// other is between snapshots, past the restart and the lost checkpoint.
func killPoints(store string) []killPoint {
	both := []string{"pair.paused", "within.paused"}
	points := []killPoint{
		{"right after a snapshot, past the restart", "snapshot-every=6;pause=*:18", both},
		{"between snapshots, past the lost checkpoint", "snapshot-every=5;pause=*:24", both},
		{"one job finished, the other between snapshots", "snapshot-every=7;pause=within:16", []string{"within.paused", "ck/pair/done.json"}},
	}
	if store == "memory" {
		points = append(points,
			killPoint{"before any snapshot", "snapshot-at=1000;pause=*:4", both},
			killPoint{"stream over, before the jobs finish", "snapshot-every=4;pause=*:end", both},
		)
	}
	return points
}

// killRun is one killed-and-resumed run of killScenario.
type killRun struct {
	dir, ck, out, pause string
	args                []string
}

func newKillRun(t *testing.T, scenarioFile, store string, report bool) *killRun {
	dir := t.TempDir()
	k := &killRun{dir: dir, ck: filepath.Join(dir, "ck"), out: filepath.Join(dir, "out"), pause: filepath.Join(dir, "pause")}
	os.Mkdir(k.pause, 0o755)
	k.args = []string{"run", scenarioFile, "--quiet", "--store", store, "--workers", "2",
		"--checkpoint", k.ck, "--snapshot-interval", "1h", "--out", k.out}
	if !report {
		k.args = append(k.args, "--no-report")
	}
	return k
}

// killAt runs the command with hooks until every wait file exists, then
// kills it: the run must not have written its results.
func (k *killRun) killAt(t *testing.T, hooks string, wait []string) {
	t.Helper()
	os.RemoveAll(k.pause)
	os.Mkdir(k.pause, 0o755)
	p := start(t, hooks, k.pause, k.args...)
	var files []string
	for _, w := range wait {
		if rest, ok := strings.CutPrefix(w, "ck/"); ok {
			files = append(files, filepath.Join(k.ck, rest))
		} else {
			files = append(files, filepath.Join(k.pause, w))
		}
	}
	p.waitFiles(t, files...)
	p.kill(t)
	if _, err := os.Stat(filepath.Join(k.out, "summary.json")); err == nil {
		t.Fatal("a killed run left a summary.json")
	}
}

// resume runs the command without hooks to its end.
func (k *killRun) resume(t *testing.T) {
	t.Helper()
	if code, p := runProc(t, "", "", k.args...); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, p.stderr.String())
	}
}

// referenceRun runs scenarioFile uninterrupted, without a checkpoint, on
// store, and returns its results folder.
func referenceRun(t *testing.T, scenarioFile, store string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ref")
	if code, p := runProc(t, "", "", "run", scenarioFile, "--quiet", "--store", store, "--out", out); code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, p.stderr.String())
	}
	return out
}

// wallClock matches the two wall-clock fields of summary.json.
var wallClock = regexp.MustCompile(`"(eventsPerSecond|wallSeconds)": [0-9.e+-]+`)

// withoutWallClock returns summary.json with its wall-clock fields zeroed.
func withoutWallClock(data []byte) []byte {
	return wallClock.ReplaceAll(data, []byte(`"$1": 0`))
}

// sameResults compares the results folder got with want (which has the
// report), file by file (the data files only if got has no report):
// summary.json without its wall-clock fields, and every other file byte
// for byte, except report.md and report.html, which print events/s; with
// reports, both folders are rendered again from summary.json with the
// wall-clock fields zeroed (simulate report), and those reports must then
// be identical too.
func sameResults(t *testing.T, want, got string) {
	t.Helper()
	list := func(dir string) []string {
		var out []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel)
			}
			return nil
		})
		return out
	}
	files := list(want)
	noReport := false
	if _, err := os.Stat(filepath.Join(got, "report.md")); err != nil {
		noReport = true
		// A run with --no-report: its data files only.
		files = slices.DeleteFunc(files, func(f string) bool {
			return f != "summary.json" && f != "timeseries.csv" && f != "spark.csv" && f != ".dedupsim-results" && !strings.HasPrefix(f, "progress"+string(filepath.Separator))
		})
	}
	if g := list(got); !slices.Equal(files, g) {
		t.Fatalf("files %v, want %v", g, files)
	}
	var rerender bool
	for _, f := range files {
		a, _ := os.ReadFile(filepath.Join(want, f))
		b, _ := os.ReadFile(filepath.Join(got, f))
		switch f {
		case "summary.json":
			a, b = withoutWallClock(a), withoutWallClock(b)
		case "report.md", "report.html":
			rerender = true
			continue
		case ".dedupsim-results":
			if noReport {
				// The marker lists the files written: the report's too.
				continue
			}
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs after the resume (%d vs %d bytes)", f, len(a), len(b))
		}
	}
	if !rerender || t.Failed() {
		return
	}
	for _, d := range []string{want, got} {
		copyDir := filepath.Join(t.TempDir(), "rerender")
		if err := os.CopyFS(copyDir, os.DirFS(d)); err != nil {
			t.Fatal(err)
		}
		sum := filepath.Join(copyDir, "summary.json")
		data, _ := os.ReadFile(sum)
		os.WriteFile(sum, withoutWallClock(data), 0o644)
		if code, _, errs := simulate(t, "report", copyDir); code != 0 {
			t.Fatalf("report: %s", errs)
		}
		if d == want {
			want = copyDir
		} else {
			got = copyDir
		}
	}
	for _, f := range []string{"report.md", "report.html"} {
		a, _ := os.ReadFile(filepath.Join(want, f))
		b, _ := os.ReadFile(filepath.Join(got, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs after the resume (%d vs %d bytes, wall-clock fields zeroed)", f, len(a), len(b))
		}
	}
}

// writeScenario writes text to a scenario file and returns its path.
func writeScenario(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kill.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestKillAtEveryPointThenResume kills a real `simulate run --checkpoint`
// process with SIGKILL at deterministic points (the test hooks hold the
// run there, so the kill never races the end of the run) and at random
// wall-clock moments, runs the same command again, and compares every
// file of the results (summary, timeseries, progress, report, charts)
// with an uninterrupted run's, for both stores. DEDUPSIM_KILL_LONG=1 runs
// many more random kills; DEDUPSIM_KILL_SEED=N replays a random one.
func TestKillAtEveryPointThenResume(t *testing.T) {
	sc := writeScenario(t, killScenario)
	long := os.Getenv("DEDUPSIM_KILL_LONG") != ""
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DEDUPSIM_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("random kills: DEDUPSIM_KILL_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, store := range []string{"memory", "pebble"} {
		t.Run(store, func(t *testing.T) {
			ref := referenceRun(t, sc, store)
			if n := badClockMarkers(t, ref); n < 2 {
				t.Fatalf("the scenario has %d bad-clock markers; a resume used to lose those seen before its snapshot", n)
			}
			for i, p := range killPoints(store) {
				t.Run(p.name, func(t *testing.T) {
					// The report and charts of one resume per store are
					// compared; every resume's data files are.
					k := newKillRun(t, sc, store, i == 0)
					k.killAt(t, p.hooks, p.wait)
					k.resume(t)
					sameResults(t, ref, k.out)
				})
			}
			// How long a checkpointed run takes to its end: random kills
			// fall within it. The hooks hold it at its end, so that a
			// kill never comes after it.
			k := newKillRun(t, sc, store, false)
			t0 := time.Now()
			k.killAt(t, "snapshot-every=2;pause=*:end", []string{"pair.paused", "within.paused"})
			span := time.Since(t0)
			rounds, kills := 1, 2
			if long {
				rounds, kills = 10, 3
			}
			for r := range rounds {
				t.Run(fmt.Sprintf("random %d", r), func(t *testing.T) {
					k := newKillRun(t, sc, store, false)
					var ats []time.Duration
					for range kills {
						at := time.Duration(rng.Int64N(int64(span)))
						ats = append(ats, at)
						p := start(t, "snapshot-every=2;pause=*:end", k.pause, k.args...)
						select {
						case <-time.After(at):
						case <-p.done:
						}
						p.kill(t)
					}
					k.resume(t)
					sameResults(t, ref, k.out)
					if t.Failed() {
						t.Logf("killed at %v into each run", ats)
					}
				})
			}
		})
	}
}

// badClockMarkers counts the bad-clock markers of a results folder.
func badClockMarkers(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Markers []struct{ Kind string } }
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range s.Markers {
		if m.Kind == "bad-clock" {
			n++
		}
	}
	return n
}
