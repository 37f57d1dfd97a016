package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// fastScenario runs far more batches a second than the checkpoint's
// retention keeps (microbatch.MinBatchesToRetain): a 1 s trigger over 20
// simulated minutes, a few rows per batch.
const fastScenario = `# killed and resumed by the tests
name: fast
seed: 5
duration: 20m
trigger: 1s
workload:
  rate: 5/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries:
    probability: 0.1
    delay: {dist: lognormal, median: 20s, p99: 3m}
    timestamp: restamp
queries:
  - name: within
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
`

// TestKillFastQueryAtRandomMoments kills a real run of a fast query with
// SIGKILL at random wall-clock moments while it snapshots on the wall
// clock (every second, the default): a batch takes a few milliseconds,
// so between two snapshots the query runs more than 100 batches, and the
// checkpoint's retention used to delete the log entries the last snapshot
// resumes from, so that every later resume failed with "stat
// .../offsets/N: no such file". Every kill must leave a resumable
// checkpoint, and the resumed results must equal an uninterrupted run's.
// DEDUPSIM_KILL_SEED=N replays one set of kill moments.
func TestKillFastQueryAtRandomMoments(t *testing.T) {
	sc := writeScenario(t, fastScenario)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DEDUPSIM_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("random kills: DEDUPSIM_KILL_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	ref := referenceRun(t, sc, "memory")
	dir := t.TempDir()
	ck, out := filepath.Join(dir, "ck"), filepath.Join(dir, "out")
	args := []string{"run", sc, "--quiet", "--no-report", "--workers", "1", "--checkpoint", ck, "--snapshot-interval", "1s", "--out", out}
	// How long the checkpointed run takes, held at its end so that no
	// kill comes after it.
	pause := filepath.Join(dir, "pause")
	os.Mkdir(pause, 0o755)
	t0 := time.Now()
	p := start(t, "pause=*:end", pause, append(args, "--checkpoint", filepath.Join(dir, "timing"))...)
	p.waitFiles(t, filepath.Join(pause, "within.paused"))
	span := time.Since(t0)
	p.kill(t)
	var ats []time.Duration
	for range 6 {
		// After the first snapshot, a second into the run.
		at := time.Second + time.Duration(rng.Int64N(int64(max(span-time.Second, time.Millisecond))))
		ats = append(ats, at)
		p := start(t, "pause=*:end", pause, args...)
		select {
		case <-time.After(at):
		case <-p.done:
		}
		p.kill(t)
	}
	if code, p := runProc(t, "", "", args...); code != 0 {
		t.Fatalf("resume after kills at %v into each run: exit %d: %s", ats, code, p.stderr.String())
	}
	sameResults(t, ref, out)
	if t.Failed() {
		t.Logf("killed at %v into each run", ats)
	}
}
