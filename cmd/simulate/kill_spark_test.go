package main

import (
	"os"
	"strings"
	"testing"
)

// killSparkScenario is killScenario on a modelled Spark cluster: state
// over 5 partitions, a cost that makes batches overrun the trigger at
// times (so triggers fire off the boundaries), and at most 2,000 rows a
// batch.
const killSparkScenario = killScenario + `spark:
  partitions: 5
  executors: 2
  maxRowsPerBatch: 2000
  cost: {batchOverheadMs: 500, scanKeyNs: 2000000}
`

// TestKillWithSparkBlockThenResume extends the kill matrix with a spark:
// block: a real `simulate run --checkpoint` process is killed with SIGKILL
// at every deterministic kill point of each store, run again, and every
// file of its results, spark.csv and the report included, is compared
// with an uninterrupted run's.
func TestKillWithSparkBlockThenResume(t *testing.T) {
	sc := writeScenario(t, killSparkScenario)
	for _, store := range []string{"memory", "pebble"} {
		t.Run(store, func(t *testing.T) {
			ref := referenceRun(t, sc, store)
			for i, p := range killPoints(store) {
				t.Run(p.name, func(t *testing.T) {
					k := newKillRun(t, sc, store, i == 0)
					k.killAt(t, p.hooks, p.wait)
					k.resume(t)
					sameResults(t, ref, k.out)
				})
			}
		})
	}
}

// TestResumeWithOtherPartitionsSaysSo: a run killed with 5 partitions and
// resumed with spark.partitions 3 keeps each query checkpoint's 5, as
// Spark does, and says so on stderr, once per query, with a notice line.
func TestResumeWithOtherPartitionsSaysSo(t *testing.T) {
	sc := writeScenario(t, killSparkScenario)
	k := newKillRun(t, sc, "memory", false)
	k.killAt(t, "snapshot-every=6;pause=*:8", []string{"pair.paused", "within.paused"})
	if err := os.WriteFile(sc, []byte(strings.Replace(killSparkScenario, "partitions: 5", "partitions: 3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, p := runProc(t, "", "", k.args...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, p.stderr.String())
	}
	for _, q := range []string{"pair", "within"} {
		want := "notice: query " + q + ": its checkpoint keeps 5 shuffle partitions, not the 3 of spark.partitions"
		if n := strings.Count(p.stderr.String(), want); n != 1 {
			t.Errorf("stderr has %d lines %q:\n%s", n, want, p.stderr.String())
		}
	}
}
