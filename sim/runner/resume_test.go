package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runfolder"
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
			Workers:       2,
			CheckpointDir: dir,
			SnapshotEvery: time.Nanosecond,
			hooks: testHooks{NewSource: func(s *scenario.Scenario) (Source, error) {
				g, err := generators.New(s.Generator())
				return &stopAfter{Generator: g, n: stop, cancel: cancel}, err
			},
			},
		})
		cancel()
		if err == nil {
			t.Fatalf("run interrupted after %d rows did not fail", stop)
		}
	}
	got, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: dir, SnapshotEvery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := summaryJSON(t, want), summaryJSON(t, got); a != b {
		t.Fatalf("resumed summary differs:\n%s\n%s", a, b)
	}
	if !bytes.Equal(timeseries(t, want), timeseries(t, got)) {
		t.Fatal("resumed timeseries differs")
	}
	for _, j := range want.Jobs {
		if !bytes.Equal(progress(t, want, j.FileName), progress(t, got, j.FileName)) {
			t.Fatalf("resumed progress of %s differs", j.FileName)
		}
	}
	// Running again over the finished checkpoint gives the same results,
	// once the first results let go of the folder.
	got.Close()
	again, err := runOpts(t, sc, Options{Workers: 1, CheckpointDir: dir})
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
	res, err := Run(context.Background(), short, Options{CheckpointDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	other := load(t, strings.Replace(small, "seed: 7", "seed: 8", 1))
	if _, err := Run(context.Background(), other, Options{CheckpointDir: dir}); err == nil || !strings.Contains(err.Error(), "another run") {
		t.Fatalf("a checkpoint of another seed was reused: %v", err)
	}
}

// interrupted runs sc with a checkpoint in dir, snapshots after batch
// snapAfter only, and stops the run once its first job has read stop rows
// (one worker: the other jobs have not started).
func interrupted(t *testing.T, sc *scenario.Scenario, dir, store string, snapAfter int64, stop int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Run(ctx, sc, Options{
		Workers:       1,
		CheckpointDir: dir,
		Store:         store,
		hooks: testHooks{SnapshotAt: func(_ string, next int64) bool { return next == snapAfter+1 },
			NewSource: func(s *scenario.Scenario) (Source, error) {
				g, err := generators.New(s.Generator())
				return &stopAfter{Generator: g, n: stop, cancel: cancel}, err
			},
		},
	})
	if err == nil {
		t.Fatalf("run interrupted after %d rows did not fail", stop)
	}
}

// sameResults compares two runs apart from wall-clock fields and store.
func sameResults(t *testing.T, want, got *Results) {
	t.Helper()
	norm := func(r *Results) string {
		s := *r.Summary
		s.Queries = append([]metrics.QuerySummary(nil), s.Queries...)
		for i := range s.Queries {
			s.Queries[i].Store = ""
		}
		return summaryJSON(t, &Results{Summary: &s})
	}
	if a, b := norm(want), norm(got); a != b {
		t.Fatalf("summaries differ:\n%s\n%s", a, b)
	}
	if !bytes.Equal(timeseries(t, want), timeseries(t, got)) {
		t.Fatal("timeseries differ")
	}
	for _, j := range want.Jobs {
		if !bytes.Equal(progress(t, want, j.FileName), progress(t, got, j.FileName)) {
			t.Fatalf("progress of %s differs", j.FileName)
		}
	}
}

const faulty = `
name: faulty
seed: 5
duration: 4m
trigger: 10s
workload:
  rate: 100/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.2
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: restamp
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
  - name: unbounded
    query: dropDuplicates(["event_id"])
faults:
  - {at: 100s, kind: restart}
  - {at: 170s, kind: lose-checkpoint}
`

// TestResumeDiscardsTheAbandonedRun kills a run after both faults while
// its last snapshot is from before them: the resumed run must not recover
// the restart from the killed run's later commits, nor reuse the
// checkpoint folder the killed run made when it lost its checkpoint. With
// Pebble, the stores reopen at the snapshot's version from checkpoints.
func TestResumeDiscardsTheAbandonedRun(t *testing.T) {
	sc := load(t, faulty)
	want := run(t, sc, 2)
	for _, store := range []string{"memory", "pebble"} {
		t.Run(store, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ck")
			// Batch 5 ends at 60 s; 22000 rows is past 200 s.
			interrupted(t, sc, dir, store, 5, 22000)
			if _, err := os.Stat(filepath.Join(dir, "within", "query.1")); err != nil {
				t.Fatal("the interrupted run did not get past the lost checkpoint")
			}
			got, err := runOpts(t, sc, Options{Workers: 2, CheckpointDir: dir, Store: store})
			if err != nil {
				t.Fatal(err)
			}
			sameResults(t, want, got)
		})
	}
}

// hashTree returns every file and folder under dir with a hash of its
// content.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDamagedRunCheckpointIsRefusedUnchanged damages an interrupted run's
// checkpoint in one place at a time: the resume fails with one error
// naming the file, and leaves every file of the folder as it was.
func TestDamagedRunCheckpointIsRefusedUnchanged(t *testing.T) {
	sc := load(t, faulty)
	base := filepath.Join(t.TempDir(), "ck")
	// A snapshot after batch 5 (version 6: the deltas 1 .. 6 in 1.log,
	// no snapshot file yet), stopped at about 90 s, before any fault.
	interrupted(t, sc, base, "memory", 5, 11000)
	if _, err := os.Stat(filepath.Join(base, "within", runfolder.JobStateFile)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, file string
		damage     func(path string) error
	}{
		{"corrupted job.state", "within/job.state", func(p string) error {
			return os.WriteFile(p, []byte(`{"format": "dedupsim-job/1", "source": "`), 0o644)
		}},
		{"truncated delta", "within/query.0/state/0/1.log", func(p string) error {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, data[:len(data)/2], 0o644)
		}},
		{"truncated part file", "within/" + runfolder.TimeseriesPart, func(p string) error {
			return os.Truncate(p, 10)
		}},
		{"foreign file in the run folder", "notes.txt", func(p string) error {
			return os.WriteFile(p, []byte("mine"), 0o644)
		}},
		{"foreign file in a job folder", "within/old-results.csv", func(p string) error {
			return os.WriteFile(p, []byte("a,b\n"), 0o644)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ck")
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, c.file)
			if err := c.damage(path); err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, dir)
			_, err := Run(context.Background(), sc, Options{Workers: 2, CheckpointDir: dir})
			if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line naming %s, got %v", path, err)
			}
			t.Log(err)
			after := hashTree(t, dir)
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s changed or vanished", k)
				}
			}
			for k := range after {
				if _, ok := before[k]; !ok {
					t.Errorf("%s appeared", k)
				}
			}
		})
	}
}
