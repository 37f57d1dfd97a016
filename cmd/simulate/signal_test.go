package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalled returns a context cancelled as the first Ctrl-C (withSignals)
// cancels it.
func signalled(sig syscall.Signal) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&signalError{sig: sig})
	return ctx
}

// TestEveryCommandStopsOnTheFirstSignal: replay, report, state and compare
// ignored the first Ctrl-C or SIGTERM and ran to their end (report then
// rewrote the folder). With the signal already in, each must exit with
// 128 plus the signal's number, print nothing on stdout and change
// nothing.
func TestEveryCommandStopsOnTheFirstSignal(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	out, ck := filepath.Join(dir, "out"), filepath.Join(dir, "ck")
	if code, _, errs := simulate(t, "run", sc, "--quiet", "--checkpoint", ck, "--out", out); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	before := treeState(t, dir)
	cases := [][]string{
		{"replay", "../../sim/spark/replay/testdata/conformance/deduplicate-with-watermark.json"},
		{"report", out},
		{"state", ck, "--limit", "-1"},
		{"compare", "../../sim/spark/compare/testdata/expected", "../../metrics/progresslog/testdata/listener.jsonl", "../../metrics/progresslog/testdata/hdfs-pretty.json"},
	}
	for _, args := range cases {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(fmt.Sprintf("%s %v", args[0], sig), func(t *testing.T) {
				var stdout, stderr strings.Builder
				code := run(signalled(sig), args, strings.NewReader(""), &stdout, &stderr)
				if code != 128+int(sig) || stdout.Len() != 0 || stderr.String() != "simulate "+args[0]+": interrupted\n" {
					t.Fatalf("exit %d, stdout %d bytes, stderr %q; want %d, nothing, one line", code, stdout.Len(), stderr.String(), 128+int(sig))
				}
				sameTree(t, args[0], before, treeState(t, dir))
			})
		}
	}
}

// TestReplayStopsPromptlyOnSIGINT sends SIGINT to a real replay of 40,000
// steps (minutes of work): it exited only at the end, after printing
// everything. It must stop within seconds with 130 and print nothing.
func TestReplayStopsPromptlyOnSIGINT(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name": "long", "query": "withWatermark(\"eventTime\", \"10 seconds\").dropDuplicates()", "steps": [`)
	for i := range 40000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"addData": [{"value": %d, "eventTime": %d}, {"value": %d, "eventTime": %d}]}`, i, i, i, i)
	}
	b.WriteString("]}\n")
	trace := filepath.Join(t.TempDir(), "long.json")
	os.WriteFile(trace, []byte(b.String()), 0o644)
	p := start(t, "", "", "replay", trace)
	time.Sleep(time.Second)
	t0 := time.Now()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("replay still running 20 s after SIGINT")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 130 || p.stdout.Len() != 0 {
		t.Fatalf("exit %d after %v, %d bytes on stdout; want 130 and nothing: %s", code, time.Since(t0), p.stdout.Len(), p.stderr.String())
	}
}

// TestReportFailureNamesTheFolderGiven: a report that failed while
// rendering named its internal ".dedupsim-staging-*" folder, twice.
func TestReportFailureNamesTheFolderGiven(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(smallScenario), 0o644)
	out := filepath.Join(dir, "out")
	if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--out", out); code != 0 {
		t.Fatalf("run: %s", errs)
	}
	os.WriteFile(filepath.Join(out, "spark.csv"), []byte("garbage,x\n"), 0o644)
	// As if dedupsim had written it (the marker lists what it wrote): a
	// file it did not write is refused before anything is read.
	marker, _ := os.OpenFile(filepath.Join(out, ".dedupsim-results"), os.O_APPEND|os.O_WRONLY, 0)
	marker.WriteString("\"spark.csv\"\n")
	marker.Close()
	code, _, errs := simulate(t, "report", out)
	if code != 1 || strings.Contains(errs, "staging") || !strings.Contains(errs, out+" is not a readable results folder: spark.csv: ") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d: %q; want one line naming %s and spark.csv", code, errs, out)
	}
}
