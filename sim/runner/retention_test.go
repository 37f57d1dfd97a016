package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/microbatch"
)

// fast is a query that runs many more than microbatch.MinBatchesToRetain batches
// between two job snapshots: a 1 s trigger over 5 minutes, with a restart
// fault in the middle (a restart reopens the query checkpoint).
const fast = `
name: fast
seed: 3
duration: 5m
trigger: 1s
workload:
  rate: 20/s
  arrivalDelay: {dist: exponential, mean: 2s}
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
faults:
  - {at: 150s, kind: restart}
`

// TestRetentionKeepsWhatTheSnapshotNeeds snapshots after batch 5 only and
// stops the run past batch 250: retention kept the last 100 log entries,
// which dropped batch 5's, so the resume failed with "stat
// .../offsets/5: no such file". The entries the newest job snapshot
// resumes from must survive, and so must those of the snapshot a resumed
// run started from, until its own first snapshot.
func TestRetentionKeepsWhatTheSnapshotNeeds(t *testing.T) {
	sc := load(t, fast)
	want := run(t, sc, 1)
	for _, store := range []string{"memory", "pebble"} {
		t.Run(store, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ck")
			// About 20 rows a second: 5000 rows is past batch 250.
			interrupted(t, sc, dir, store, 5, 5000)
			if _, _, ok, err := microbatch.BatchRecords(filepath.Join(dir, "within", "query.0"), 5); err != nil || !ok {
				t.Fatalf("retention dropped what the snapshot needs: %v", err)
			}
			// Resumed from batch 5 and killed again before any snapshot,
			// past batch 250 once more.
			ctx, cancel := context.WithCancel(context.Background())
			_, err := Run(ctx, sc, Options{
				Workers:       1,
				CheckpointDir: dir,
				Store:         store,
				hooks: testHooks{SnapshotAt: func(string, int64) bool { return false },
					NewSource: func(s *scenario.Scenario) (Source, error) {
						g, err := generators.New(s.Generator())
						return &stopAfter{Generator: g, n: 4000, cancel: cancel}, err
					},
				},
			})
			cancel()
			if err == nil {
				t.Fatal("the second interrupted run did not fail")
			}
			got, err := runOpts(t, sc, Options{Workers: 1, CheckpointDir: dir, Store: store})
			if err != nil {
				t.Fatal(err)
			}
			sameResults(t, want, got)
		})
	}
}

// TestRunToRefusesCheckpointInsideOut: publishing replaces the results
// folder whole, so a checkpoint inside it (or equal to it) was lost.
func TestRunToRefusesCheckpointInsideOut(t *testing.T) {
	sc := load(t, fast)
	dir := t.TempDir()
	out := filepath.Join(dir, "o")
	for _, ck := range []string{out, filepath.Join(out, "ck"), dir} {
		_, err := RunTo(context.Background(), sc, Options{CheckpointDir: ck}, out, nil)
		if err == nil || !strings.Contains(err.Error(), "checkpoint "+ck) {
			t.Fatalf("checkpoint %s, results %s: %v", ck, out, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the refused runs wrote %v", ents)
	}
}

// TestResumeOfAMissingFileSaysSo: a resume whose snapshot names a file
// that is gone failed with the raw "stat PATH: no such file or
// directory"; it must say, in one line, what is missing and what to do.
func TestResumeOfAMissingFileSaysSo(t *testing.T) {
	sc := load(t, fast)
	dir := filepath.Join(t.TempDir(), "ck")
	interrupted(t, sc, dir, "memory", 5, 2000)
	gone := filepath.Join(dir, "within", "query.0", microbatch.LogName)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), sc, Options{Workers: 1, CheckpointDir: dir})
	if err == nil || strings.Contains(err.Error(), "stat ") || !strings.Contains(err.Error(), gone+": missing, yet the job snapshot") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want one line saying %s is missing, got %v", gone, err)
	}
}
