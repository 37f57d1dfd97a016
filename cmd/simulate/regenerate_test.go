package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// regenerateEnv, set to "all", makes TestCommittedResultsRegenerate rerun
// every committed experiment instead of its short list (several minutes on
// two cores): DEDUPSIM_REGENERATE=all go test ./cmd/simulate -run
// TestCommittedResultsRegenerate -timeout 60m.
const regenerateEnv = "DEDUPSIM_REGENERATE"

// shortRegenerate are the experiments the test reruns by default, three
// of the quickest: a plain one with a bad clock, one on the modelled
// Spark cluster (partitions, executors, cost model, spark.csv), and the
// one that puts the same traffic through every engine (Flink, Kafka
// Streams and Beam beside Spark, the report's engine column and counters).
var shortRegenerate = []string{"bad-future-timestamp", "partition-skew", "engines"}

// experimentNames returns the experiments whose results are committed,
// as experiments/regenerate.sh lists them: every experiments/*.yaml but
// production-day.
func experimentNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../experiments/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	var out []string
	for _, f := range files {
		if n := strings.TrimSuffix(filepath.Base(f), ".yaml"); n != "production-day" {
			out = append(out, n)
		}
	}
	return out
}

// TestCommittedResultsRegenerate reruns committed experiments as
// experiments/regenerate.sh does and compares each new results folder
// with results/NAME byte for byte, the wall-clock fields aside
// (eventsPerSecond and wallSeconds in summary.json; the reports' events/s
// column, compared after rendering both folders again with those zeroed;
// the store comparison's timings and heap). progress/ is not committed
// (.gitignore) and not compared, nor is capacity-plan's review/. The short form reruns shortRegenerate;
// with DEDUPSIM_REGENERATE=all, every experiment.
func TestCommittedResultsRegenerate(t *testing.T) {
	names := experimentNames(t)
	for _, n := range names {
		if _, err := os.Stat(filepath.Join("../../results", n, "summary.json")); err != nil {
			t.Errorf("experiments/%s.yaml has no committed results (regenerate.sh writes results/%s): %v", n, n, err)
		}
	}
	switch v := os.Getenv(regenerateEnv); v {
	case "all":
	case "":
		if testing.Short() {
			t.Skipf("-short; %s=all reruns every experiment", regenerateEnv)
		}
		for _, n := range shortRegenerate {
			if !slices.Contains(names, n) {
				t.Fatalf("shortRegenerate names %s, which is no experiment", n)
			}
		}
		names = shortRegenerate
	default:
		t.Fatalf("%s=%q: want all or nothing", regenerateEnv, v)
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), n)
			args := []string{"run", "../../experiments/" + n + ".yaml", "--quiet", "--out", out}
			if n == "store-comparison" {
				args[0] = "bench-stores"
			}
			if code, _, errs := simulate(t, args...); code != 0 {
				t.Fatalf("simulate %s: exit %d: %s", strings.Join(args, " "), code, errs)
			}
			sameAsCommitted(t, filepath.Join("../../results", n), out)
		})
	}
}

// storesTiming matches the measured fields of stores.json, which vary
// between identical runs: times, rates, the Go heap, and Pebble's peaks
// on disk and in memtables (its background flushes and compactions run
// when the scheduler lets them).
var storesTiming = regexp.MustCompile(`"(engineSeconds|measureSeconds|commitSeconds|recoverySeconds|eventsPerSecond|goHeapPeakBytes|diskPeakBytes|memTablePeakBytes|wallSeconds|cpuSeconds)": [0-9.e+-]+`)

// storesRuns matches the measured lists of stores.json: each repetition's
// events/s and recovery time.
var storesRuns = regexp.MustCompile(`"(eventsPerSecondRuns|recoverySecondsRuns|wallSecondsRuns|cpuSecondsRuns)": \[[^\]]*\]`)

// zeroStoresTiming returns stores.json with its measured fields zeroed.
func zeroStoresTiming(data []byte) []byte {
	data = storesTiming.ReplaceAll(data, []byte(`"$1": 0`))
	return storesRuns.ReplaceAll(data, []byte(`"$1": []`))
}

// sameAsCommitted compares the results folder got with the committed one
// want: the same files (got's progress/ aside), each byte for byte but
// for the wall-clock fields, the committed reports as simulate report
// renders them from the committed data, and both folders' reports
// rendered again with the wall-clock fields zeroed equal.
func sameAsCommitted(t *testing.T, want, got string) {
	t.Helper()
	list := func(dir string) []string {
		var out []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			// review/ is capacity-plan's review document, written by
			// plan --out after the run (regenerate.sh); the plan at
			// 20,000/s takes most of an hour, beyond this test.
			if d.IsDir() && (rel == "progress" || rel == "review") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				out = append(out, rel)
			}
			return nil
		})
		return out
	}
	files := list(want)
	if g := list(got); !slices.Equal(files, g) {
		t.Fatalf("files %v, committed %v", g, files)
	}
	var measured []string
	for _, f := range files {
		a, _ := os.ReadFile(filepath.Join(want, f))
		b, _ := os.ReadFile(filepath.Join(got, f))
		switch f {
		case "summary.json":
			a, b = withoutWallClock(a), withoutWallClock(b)
		case "stores.json":
			a, b = zeroStoresTiming(a), zeroStoresTiming(b)
		case "report.md", "report.html":
			continue // compared below, rendered again
		case "stores.md", "stores.png", "stores.svg":
			measured = append(measured, f)
			continue // drawn from the measured timings
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the committed one (%d vs %d bytes): rerun ./experiments/regenerate.sh %s and commit why", f, len(b), len(a), filepath.Base(want))
		}
	}
	if len(measured) > 0 {
		t.Logf("%s: not compared byte for byte, drawn from measured timings: %v", filepath.Base(want), measured)
	}
	if t.Failed() {
		return
	}
	// The committed reports are what this code renders from the committed
	// data: simulate report on a copy changes no file.
	again := filepath.Join(t.TempDir(), "again")
	if err := os.CopyFS(again, os.DirFS(want)); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := simulate(t, "report", again); code != 0 {
		t.Fatalf("report %s: %s", want, errs)
	}
	if g := list(again); !slices.Equal(files, g) {
		t.Fatalf("simulate report of the committed folder: files %v, committed %v", g, files)
	}
	for _, f := range files {
		if f == ".dedupsim-results" {
			// The marker lists the folder's entries as report found them:
			// a committed folder lacks progress/ (not committed), which the
			// run's marker lists.
			continue
		}
		a, _ := os.ReadFile(filepath.Join(want, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: simulate report renders it otherwise from the committed data: rerun ./experiments/regenerate.sh %s", f, filepath.Base(want))
		}
	}
	rendered := make([]string, 2)
	for i, d := range []string{want, got} {
		c := filepath.Join(t.TempDir(), fmt.Sprintf("rerender-%d", i))
		if err := os.CopyFS(c, os.DirFS(d)); err != nil {
			t.Fatal(err)
		}
		sum := filepath.Join(c, "summary.json")
		data, _ := os.ReadFile(sum)
		if err := os.WriteFile(sum, withoutWallClock(data), 0o644); err != nil {
			t.Fatal(err)
		}
		// The store comparison's report prints stores.json's timings.
		if st := filepath.Join(c, "stores.json"); fileExists(st) {
			data, _ := os.ReadFile(st)
			if err := os.WriteFile(st, zeroStoresTiming(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if code, _, errs := simulate(t, "report", c); code != 0 {
			t.Fatalf("report %s: %s", d, errs)
		}
		rendered[i] = c
	}
	for _, f := range []string{"report.md", "report.html"} {
		a, _ := os.ReadFile(filepath.Join(rendered[0], f))
		b, _ := os.ReadFile(filepath.Join(rendered[1], f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the committed one, the wall-clock fields zeroed", f)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
