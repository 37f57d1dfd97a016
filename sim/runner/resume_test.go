package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// stopAfter is a generator that cancels the run after n rows: a stand-in
// for a killed process (the real SIGKILL test is in cmd/simulate).
type stopAfter struct {
	*generators.Generator
	n      int
	cancel func()
}

func (s *stopAfter) Next(r *generators.Row) bool {
	if s.n--; s.n == 0 {
		s.cancel()
	}
	return s.Generator.Next(r)
}

func summaryJSON(t *testing.T, r *Results) string {
	t.Helper()
	s := *r.Summary
	s.Queries = append([]metrics.QuerySummary(nil), s.Queries...)
	for i := range s.Queries {
		s.Queries[i].EventsPerSecond, s.Queries[i].WallSeconds = 0, 0
	}
	data, err := metrics.MarshalSummary(&s)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestResumeAfterInterruptionMatchesUninterrupted(t *testing.T) {
	sc := load(t, small+"faults:\n  - {at: 100s, kind: restart}\n  - {at: 170s, kind: lose-checkpoint}\n")
	want := run(t, sc, 2)
	dir := filepath.Join(t.TempDir(), "ck")
	for _, stop := range []int{9000, 30000, 52000} {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := Run(ctx, sc, Options{
			Workers: 2, CheckpointDir: dir, SnapshotEvery: time.Nanosecond,
			NewSource: func(s *scenario.Scenario) (Source, error) {
				g, err := generators.New(s)
				return &stopAfter{Generator: g, n: stop, cancel: cancel}, err
			},
		})
		cancel()
		if err == nil {
			t.Fatalf("run interrupted after %d rows did not fail", stop)
		}
	}
	got, err := Run(context.Background(), sc, Options{Workers: 2, CheckpointDir: dir, SnapshotEvery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := summaryJSON(t, want), summaryJSON(t, got); a != b {
		t.Fatalf("resumed summary differs:\n%s\n%s", a, b)
	}
	var x, y bytes.Buffer
	metrics.WriteTimeseries(&x, want.Records)
	metrics.WriteTimeseries(&y, got.Records)
	if !bytes.Equal(x.Bytes(), y.Bytes()) {
		t.Fatal("resumed timeseries differs")
	}
	for name, p := range want.Progress {
		if !bytes.Equal(p, got.Progress[name]) {
			t.Fatalf("resumed progress of %s differs", name)
		}
	}
	// Running again over the finished checkpoint gives the same results.
	again, err := Run(context.Background(), sc, Options{Workers: 1, CheckpointDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if summaryJSON(t, again) != summaryJSON(t, want) {
		t.Fatal("rerun over a finished checkpoint differs")
	}
}

func TestCheckpointFolderIsNeverTakenOver(t *testing.T) {
	sc := load(t, small)
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	if _, err := Run(context.Background(), sc, Options{CheckpointDir: foreign}); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("a foreign folder was used: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(data) != "mine" {
		t.Fatal("the foreign folder was modified")
	}
	dir := filepath.Join(t.TempDir(), "ck")
	short := load(t, strings.Replace(small, "duration: 4m", "duration: 1m", 1))
	if _, err := Run(context.Background(), short, Options{CheckpointDir: dir}); err != nil {
		t.Fatal(err)
	}
	other := load(t, strings.Replace(small, "seed: 7", "seed: 8", 1))
	if _, err := Run(context.Background(), other, Options{CheckpointDir: dir}); err == nil || !strings.Contains(err.Error(), "another run") {
		t.Fatalf("a checkpoint of another seed was reused: %v", err)
	}
}
