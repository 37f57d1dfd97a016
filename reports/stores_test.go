package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dedupsim/dedupsim/metrics"
)

// storeBench is a stores.json of the single-run fixture's queries on both
// backends.
func storeBench(s *metrics.Summary) *metrics.StoreBench {
	sb := &metrics.StoreBench{Format: metrics.StoresFormat, Scenario: "toy", Seed: s.Seed, Identical: true,
		Machine: metrics.StoreMachine{GOOS: "linux", GOARCH: "amd64", CPUs: 2, GOMAXPROCS: 2, GoVersion: "go1.26"}}
	heap, disk, mem := int64(30<<20), int64(55<<20), int64(32<<20)
	for _, q := range s.Queries {
		sb.Runs = append(sb.Runs,
			metrics.StoreRun{Query: q.Name, Store: "memory", InputRows: q.InputRows, Batches: q.Batches, EngineSeconds: 0.5, CommitSeconds: 0.1,
				EventsPerSecond: 500000, PeakStateRows: q.PeakStateRows, ModelPeakBytes: q.PeakStateBytes, GoHeapPeakBytes: &heap,
				CheckpointBytes: 1 << 20, CheckpointBytesPerBatch: 1000, RecoverySeconds: 0.2, RecoveredRows: q.FinalStateRows},
			metrics.StoreRun{Query: q.Name, Store: "pebble", InputRows: q.InputRows, Batches: q.Batches, EngineSeconds: 5, CommitSeconds: 1,
				EventsPerSecond: 60000, PeakStateRows: q.PeakStateRows, ModelPeakBytes: q.PeakStateBytes, DiskPeakBytes: &disk,
				MemTablePeakBytes: &mem, CheckpointBytes: 1 << 19, CheckpointBytesPerBatch: 500, RecoverySeconds: 0.05, RecoveredRows: q.FinalStateRows})
	}
	return sb
}

// TestRenderStoreSection renders a results folder that holds a
// stores.json: the report gains the store comparison (its own files, a
// section before the charts in report.md and report.html), and rendering
// again gives the same files.
func TestRenderStoreSection(t *testing.T) {
	s, ts := singleRun(t)
	dir := writeResults(t, s, ts)
	if err := metrics.WriteStoreBench(dir, storeBench(s)); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	md := read("report.md")
	for _, want := range []string{"## State store backends", "![State store backends](stores.png)", "| pebble "} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if i, j := strings.Index(md, "## State store backends"), strings.Index(md, "## Charts"); i < 0 || j < i {
		t.Errorf("the store section is not before the charts")
	}
	if !strings.Contains(read("report.html"), `<h2 id="state-store-backends">State store backends</h2>`) {
		t.Error("report.html lacks the store section")
	}
	smd := read("stores.md")
	for _, want := range []string{"wall", "machine-dependent", "query at a time", "recovery", "Where the engine time went"} {
		if !strings.Contains(smd, want) {
			t.Errorf("stores.md does not say %q", want)
		}
	}
	before := read("stores.svg")
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	if read("report.md") != md || read("stores.svg") != before {
		t.Error("rendering twice changed report.md or stores.svg")
	}
}

// TestStoresVerdict: the line on speed differences names the queries whose
// two backends' ranges overlap, says nothing when every pair is apart, and
// with one run each says that no range exists (cases worked out by hand).
func TestStoresVerdict(t *testing.T) {
	run := func(q, store string, eps ...float64) metrics.StoreRun {
		return metrics.StoreRun{Query: q, Store: store, EventsPerSecond: eps[0], EventsPerSecondRuns: eps}
	}
	apart := &metrics.StoreBench{Runs: []metrics.StoreRun{
		run("a", "memory", 900, 1000, 1100), run("a", "pebble", 300, 350, 400),
	}}
	if v := StoresVerdict(apart); v != "" {
		t.Errorf("ranges 900-1100 and 300-400: %q, want no line", v)
	}
	overlap := &metrics.StoreBench{Runs: []metrics.StoreRun{
		run("a", "memory", 900, 1000, 1100), run("a", "pebble", 300, 350, 400),
		run("b", "memory", 400, 700, 1000), run("b", "pebble", 950, 980, 990), // 950-990 inside 400-1000
		run("c", "memory", 100, 200), run("c", "pebble", 200, 300), // touching at 200
	}}
	if v := StoresVerdict(overlap); !strings.Contains(v, "overlap for b, c:") || !strings.Contains(v, "--repeat 5") {
		t.Errorf("got %q, want the overlap of b and c named", v)
	}
	one := &metrics.StoreBench{Runs: []metrics.StoreRun{{Query: "a", Store: "memory", EventsPerSecond: 10}, {Query: "a", Store: "pebble", EventsPerSecond: 5}}}
	if v := StoresVerdict(one); !strings.Contains(v, "One run per backend") {
		t.Errorf("one run each: %q", v)
	}
	times := &metrics.StoreBench{Backends: []metrics.StoreBackendTime{{Store: "memory", WallSeconds: 4, CPUSeconds: 1.5, WallSecondsRuns: []float64{3, 4, 5}, CPUSecondsRuns: []float64{1.4, 1.5, 1.6}}}}
	if v := StoresTimes(times); !strings.Contains(v, "memory 1.50 s CPU (1.40 s-1.60 s) in 4.00 s wall (3.00 s-5.00 s)") {
		t.Errorf("times line %q", v)
	}
}

// TestStoreTableFitsATerminal: the terminal store table leaves the runs'
// ranges to stores.md and the chart, and stays under 150 columns (it was
// 260 with ranges and one-line headers).
func TestStoreTableFitsATerminal(t *testing.T) {
	run := func(q, store string) metrics.StoreRun {
		heap := int64(29_000_000)
		return metrics.StoreRun{Query: q, Store: store, EventsPerSecond: 974_825, EventsPerSecondRuns: []float64{664_903, 974_825, 1_284_746},
			RecoverySeconds: 0.4042, RecoverySecondsRuns: []float64{0.4012, 0.4042, 0.4073}, ModelPeakBytes: 55_574_528, GoHeapPeakBytes: &heap,
			CheckpointBytesPerBatch: 431_104}
	}
	sb := &metrics.StoreBench{Runs: []metrics.StoreRun{run("within-watermark", "memory"), run("within-watermark", "pebble")}}
	var b strings.Builder
	if err := StoreTable(&b, sb, false); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 150 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	if strings.Contains(b.String(), "664,903") {
		t.Errorf("the terminal table shows the runs' range:\n%s", b.String())
	}
}
