package storebench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// small has an evicting and a non-evicting query, and a restart, so that
// the stores are reopened during the run as well as after it.
const small = `
name: small-bench
seed: 5
duration: 3m
trigger: 10s
workload:
  rate: 300/s
  arrivalDelay: {dist: exponential, mean: 1s}
  retries:
    probability: 0.1
    delay: {dist: uniform, min: 1s, max: 30s}
queries:
  - name: within
    query: withWatermark("event_time", "30 seconds").dropDuplicatesWithinWatermark(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
faults:
  - {at: 100s, kind: restart}
`

func load(t *testing.T) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(small), "small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type countProgress struct{ total, done float64 }

func (c *countProgress) Start(total float64) { c.total += total }
func (c *countProgress) Add(s float64)       { c.done += s }

func TestRunMeasuresBothBackends(t *testing.T) {
	s := load(t)
	prog := &countProgress{}
	res, err := Run(context.Background(), s, Options{Progress: prog, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	sb := res.Bench
	if !sb.Identical || sb.Format != metrics.StoresFormat || sb.Scenario != "small-bench" || sb.Seed != 5 {
		t.Errorf("header %+v", sb)
	}
	// One bar over both runs: started once, with both runs' total (the
	// runner counts the scenario's duration per job; the retries after
	// it make the bar overshoot a little, as in simulate run).
	if want := 2 * 2 * s.Duration.Std().Seconds(); prog.total != want || prog.done < want {
		t.Errorf("progress: total %v, done %v; want total %v, all of it done", prog.total, prog.done, want)
	}
	wantOrder := []string{"within/memory", "within/pebble", "unbounded/memory", "unbounded/pebble"}
	if len(sb.Runs) != len(wantOrder) {
		t.Fatalf("%d runs, want %d", len(sb.Runs), len(wantOrder))
	}
	for i, r := range sb.Runs {
		if got := r.Query + "/" + r.Store; got != wantOrder[i] {
			t.Errorf("run %d is %s, want %s", i, got, wantOrder[i])
		}
		q := res.Memory.Summary.Queries[i/2]
		if r.InputRows != q.InputRows || r.Batches != q.Batches || r.PeakStateRows != q.PeakStateRows || r.ModelPeakBytes != q.PeakStateBytes {
			t.Errorf("%s/%s: rows %d, batches %d, peak %d rows %d bytes; the summary says %d, %d, %d, %d",
				r.Query, r.Store, r.InputRows, r.Batches, r.PeakStateRows, r.ModelPeakBytes, q.InputRows, q.Batches, q.PeakStateRows, q.PeakStateBytes)
		}
		if r.EventsPerSecond <= 0 || r.EngineSeconds <= 0 || r.CommitSeconds <= 0 || r.CommitSeconds > r.EngineSeconds+r.MeasureSeconds {
			t.Errorf("%s/%s: %v events/s over %v s, %v s in commit", r.Query, r.Store, r.EventsPerSecond, r.EngineSeconds, r.CommitSeconds)
		}
		if r.CheckpointBytes <= 0 || r.CheckpointBytesPerBatch != float64(r.CheckpointBytes)/float64(r.Batches) {
			t.Errorf("%s/%s: %d checkpoint bytes, %v per batch", r.Query, r.Store, r.CheckpointBytes, r.CheckpointBytesPerBatch)
		}
		// Recovery reopens the last checkpoint: the final state, at the
		// version of the last batch (the restart keeps the batch ids).
		if r.RecoveredRows != q.FinalStateRows || r.RecoveredVersion != q.Batches || r.RecoverySeconds <= 0 {
			t.Errorf("%s/%s: recovered %d rows at version %d in %v s; want %d rows at version %d",
				r.Query, r.Store, r.RecoveredRows, r.RecoveredVersion, r.RecoverySeconds, q.FinalStateRows, q.Batches)
		}
		switch r.Store {
		case scenario.StoreMemory:
			if r.GoHeapPeakBytes == nil || *r.GoHeapPeakBytes <= 0 || r.DiskPeakBytes != nil || r.MemTablePeakBytes != nil {
				t.Errorf("%s/memory: heap %v, disk %v, memtable %v; want a heap only", r.Query, r.GoHeapPeakBytes, r.DiskPeakBytes, r.MemTablePeakBytes)
			}
		case scenario.StorePebble:
			if r.GoHeapPeakBytes != nil || r.DiskPeakBytes == nil || *r.DiskPeakBytes <= 0 || r.MemTablePeakBytes == nil || *r.MemTablePeakBytes <= 0 {
				t.Errorf("%s/pebble: heap %v, disk %v, memtable %v; want disk and memtable only", r.Query, r.GoHeapPeakBytes, r.DiskPeakBytes, r.MemTablePeakBytes)
			}
		}
	}

	dir := filepath.Join(t.TempDir(), "out")
	var rendered []string
	render := func(d string) error {
		if _, err := os.Stat(filepath.Join(d, metrics.StoresFile)); err != nil {
			t.Errorf("the report is drawn before stores.json is written: %v", err)
		}
		rendered = append(rendered, d)
		return nil
	}
	if err := Write(dir, res, render); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rendered, []string{dir}) {
		t.Errorf("the report was drawn into %v, want %s once", rendered, dir)
	}
	for _, f := range []string{"summary.json", "timeseries.csv", "stores.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
	}
	back, err := metrics.ReadStoreBench(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != len(sb.Runs) || back.Runs[3].RecoveredRows != sb.Runs[3].RecoveredRows {
		t.Errorf("stores.json does not read back as written")
	}
}

// Compare names the first field that differs, so that a disagreement of
// the backends fails loudly and usefully.
func TestCompareNamesTheDifference(t *testing.T) {
	s := load(t)
	s.Faults = nil
	s.Queries = s.Queries[:1]
	a, err := runner.Run(context.Background(), s, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := runner.Run(context.Background(), s, runner.Options{Store: scenario.StorePebble})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := Compare(a, b); err != nil {
		t.Fatalf("identical runs: %v", err)
	}
	b.Summary.Queries[0].MissedDuplicates++
	err = Compare(a, b)
	if err == nil || !strings.Contains(err.Error(), "query within: missedDuplicates") {
		t.Errorf("changed summary: got %v, want an error naming query within and missedDuplicates", err)
	}
	b.Summary.Queries[0].MissedDuplicates--
	// The same run, read back from its results files with one cell of
	// the timeseries changed.
	dir := t.TempDir()
	if err := runner.WriteFiles(dir, b); err != nil {
		t.Fatal(err)
	}
	ts := filepath.Join(dir, "timeseries.csv")
	data, err := os.ReadFile(ts)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	cells := strings.Split(lines[4], ",")
	col := slices.Index(metrics.TimeseriesHeader, "stateRows")
	n, _ := strconv.Atoi(cells[col])
	cells[col] = strconv.Itoa(n + 1)
	lines[4] = strings.Join(cells, ",")
	if err := os.WriteFile(ts, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := runner.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = Compare(a, changed)
	if err == nil || !strings.Contains(err.Error(), "stateRows") || !strings.Contains(err.Error(), "batch 3") {
		t.Errorf("changed timeseries: got %v, want an error naming stateRows and batch 3", err)
	}
	// The timeseries as it was, and a progress file one line short, then
	// changed past its first block.
	if err := os.WriteFile(ts, data, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "progress", "within.jsonl")
	orig, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if same, err := runner.ReadResults(dir); err != nil || Compare(a, same) != nil {
		t.Fatalf("the results read back differ: %v", err)
	}
	short := orig[:bytes.LastIndexByte(orig[:len(orig)-1], '\n')+1]
	late := bytes.Clone(orig)
	late[len(late)-3] ^= 1
	for what, content := range map[string][]byte{"one line short": short, "a byte changed at the end": late} {
		if err := os.WriteFile(prog, content, 0o644); err != nil {
			t.Fatal(err)
		}
		changed, err := runner.ReadResults(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := Compare(a, changed); err == nil || !strings.Contains(err.Error(), "progress/within.jsonl differs") {
			t.Errorf("progress %s: got %v, want an error naming progress/within.jsonl", what, err)
		}
	}
}

// TestRepeatsAndCheckpointParts: with Repeats each backend runs that many
// times, the wall-clock numbers are the median of the runs kept beside
// them; every run says which part of its checkpoint bytes was compacted
// state (snapshots, flushed sstables) and Pebble how often it flushed, so
// the two backends' checkpoint bytes count the same things.
func TestRepeatsAndCheckpointParts(t *testing.T) {
	res, err := Run(context.Background(), load(t), Options{TempDir: t.TempDir(), Repeats: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	for _, r := range res.Bench.Runs {
		name := r.Query + "/" + r.Store
		if len(r.EventsPerSecondRuns) != 3 || len(r.RecoverySecondsRuns) != 3 {
			t.Errorf("%s: %d speeds and %d recoveries, want one per run (3)", name, len(r.EventsPerSecondRuns), len(r.RecoverySecondsRuns))
			continue
		}
		s := slices.Clone(r.EventsPerSecondRuns)
		slices.Sort(s)
		if r.EventsPerSecond != s[1] {
			t.Errorf("%s: events/s %v, want the median of %v", name, r.EventsPerSecond, r.EventsPerSecondRuns)
		}
		if r.CompactBytes == nil || *r.CompactBytes < 0 || *r.CompactBytes > r.CheckpointBytes {
			t.Errorf("%s: compacted bytes %v of %d checkpoint bytes", name, r.CompactBytes, r.CheckpointBytes)
		}
		if (r.Store == scenario.StorePebble) != (r.Flushes != nil) {
			t.Errorf("%s: flushes %v, want a count for pebble only", name, r.Flushes)
		}
	}
	// Each backend's whole runs, timed in wall and CPU seconds, one value
	// per repetition, the medians beside them.
	if len(res.Bench.Backends) != len(Backends()) {
		t.Fatalf("backends timed: %+v, want %v", res.Bench.Backends, Backends())
	}
	for i, b := range res.Bench.Backends {
		if b.Store != Backends()[i] || len(b.WallSecondsRuns) != 3 || len(b.CPUSecondsRuns) != 3 {
			t.Errorf("backend %d: %+v, want %s with 3 runs of each", i, b, Backends()[i])
			continue
		}
		if b.CPUSeconds <= 0 || b.WallSeconds <= 0 || b.CPUSeconds != median(b.CPUSecondsRuns) || b.WallSeconds != median(b.WallSecondsRuns) {
			t.Errorf("%s: CPU %v s and wall %v s, want above 0 and the medians of %v and %v", b.Store, b.CPUSeconds, b.WallSeconds, b.CPUSecondsRuns, b.WallSecondsRuns)
		}
	}
	if got := median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median of 3, 1, 2, 10 = %v, want 2.5", got)
	}
}
