package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
)

// TestMemAt: the estimate of an executor's state memory at another delay
// is the sizing itself at the pick's state, grows with the state for
// both providers, by the HDFS store's bytes per key (its rows and objects,
// two retained maps' entries, one wave of in-flight maps) for hdfs, and
// for rocksdb by less than the block cache it fills.
func TestMemAt(t *testing.T) {
	shape := sparkmodel.Shape{KeyBytes: 56, ValueBytes: 16}
	c := sparkmodel.Config{Partitions: 8, Executors: 2, CoresPerExecutor: 2}
	for _, p := range []string{sparkmodel.HDFS, sparkmodel.RocksDB} {
		if got := memAt(p, 5<<20, 40000, 40000, shape, c); got != 5<<20 {
			t.Errorf("%s at the pick: %d, want the sizing's %d", p, got, 5<<20)
		}
		lo, hi := memAt(p, 5<<20, 20000, 40000, shape, c), memAt(p, 5<<20, 80000, 40000, shape, c)
		if !(lo < 5<<20 && 5<<20 < hi) {
			t.Errorf("%s: %d at half the state, %d at twice: want below and above the pick's", p, lo, hi)
		}
	}
	// 8 partitions on 2 executors: 4 stores each, 2 cores; 8,000 more keys
	// are 1,000 a store.
	perKey := 4*float64(56+16+sparkmodel.HDFSRowObjectBytes+2*sparkmodel.HDFSMapEntryBytes) + 2*sparkmodel.HDFSMapEntryBytes
	if got, want := memAt(sparkmodel.HDFS, 0, 48000, 40000, shape, c), int64(1000*perKey); got != want {
		t.Errorf("hdfs: %d bytes for 1,000 more keys a store, want %d", got, want)
	}
	if got := memAt(sparkmodel.RocksDB, 0, 48000, 40000, shape, c); got <= 0 || got >= 4*(8<<20) {
		t.Errorf("rocksdb: %d bytes for 1,000 more keys a store: want some, under four block caches", got)
	}
}

// TestPlanReviewCarriesTheCurve: plan --out with a cluster writes the
// first seed's curve into plan.json: a point every second, the rates of
// every delay the plan simulated directly on that seed (the review's
// points) equal to the curve's there, and each provider's executor memory
// where the state was tracked; report.html carries the interactive chart.
func TestPlanReviewCarriesTheCurve(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenarioIn(t, dir, smallScenario)
	out := filepath.Join(dir, "review")
	code, _, stderr := simulate(t, "plan", sc, "--query", "within", "--seeds", "1", "--max-missed-rate", "0.01", "--partitions", "4", "--executors", "2", "-q", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rv struct {
		Points []struct {
			DelaySeconds  float64 `json:"delaySeconds"`
			MissedRate    float64 `json:"missedRate"`
			FalseDropRate float64 `json:"falseDropRate"`
		} `json:"points"`
		Curve []struct {
			DelaySeconds        float64 `json:"delaySeconds"`
			MissedRate          float64 `json:"missedRate"`
			FalseDropRate       float64 `json:"falseDropRate"`
			PeakStateRows       *int64  `json:"peakStateRows"`
			ExecutorMemoryBytes []int64 `json:"executorMemoryBytes"`
		} `json:"curve"`
		CurveMemory string `json:"curveMemory"`
	}
	if err := json.Unmarshal(data, &rv); err != nil {
		t.Fatal(err)
	}
	if len(rv.Curve) < 100 || rv.CurveMemory == "" {
		t.Fatalf("%d curve points, memory note %q: want a point a second and the note", len(rv.Curve), rv.CurveMemory)
	}
	checked, tracked := 0, 0
	for _, c := range rv.Curve {
		if c.PeakStateRows != nil {
			tracked++
			if len(c.ExecutorMemoryBytes) != 2 {
				t.Errorf("at %vs: executor memory %v, want hdfs's and rocksdb's", c.DelaySeconds, c.ExecutorMemoryBytes)
			}
		}
		for _, p := range rv.Points {
			if p.DelaySeconds == c.DelaySeconds {
				checked++
				if p.MissedRate != c.MissedRate || p.FalseDropRate != c.FalseDropRate {
					t.Errorf("at %vs: curve %v / %v, direct run %v / %v", c.DelaySeconds, c.MissedRate, c.FalseDropRate, p.MissedRate, p.FalseDropRate)
				}
			}
		}
	}
	if checked == 0 || tracked < 3 {
		t.Errorf("%d delays checked against direct runs, %d with state: want some of each", checked, tracked)
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`<input type="range" id="cv-slider"`, `<script type="application/json" id="curve-data">`, `id="cv-mem-1"`} {
		if !strings.Contains(string(page), w) {
			t.Errorf("report.html lacks %s", w)
		}
	}
}
