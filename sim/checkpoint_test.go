package sim

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCheckpointLogsAreBounded checks that a long run's checkpoint keeps
// the last MinBatchesToRetain offsets and commits entries, as Spark does,
// and still recovers from them.
func TestCheckpointLogsAreBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	c, err := CreateCheckpoint(dir, CheckpointMeta{Query: "q", Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	const batches = 250
	for id := int64(0); id < batches; id++ {
		if err := c.WriteOffsets(id, OffsetEntry{BatchWatermarkMs: id}); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteCommit(id, CommitEntry{NextBatchWatermarkMs: id + 1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, kind := range []string{"offsets", "commits"} {
		ents, err := os.ReadDir(filepath.Join(dir, kind))
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != MinBatchesToRetain {
			t.Errorf("%s holds %d entries after %d batches, want %d", kind, len(ents), batches, MinBatchesToRetain)
		}
		if _, err := os.Stat(filepath.Join(dir, kind, "150")); err != nil {
			t.Errorf("%s lost batch 150, one of the last %d: %v", kind, MinBatchesToRetain, err)
		}
	}
	r, err := c.Recover()
	if err != nil {
		t.Fatal(err)
	}
	if r.LastCommitted != batches-1 || r.State.Watermark != batches {
		t.Errorf("recovered batch %d, watermark %d; want %d, %d", r.LastCommitted, r.State.Watermark, batches-1, batches)
	}
}

// TestRetainHoldsLogEntries checks the checkpoint's side: entries from
// the held batch on survive any number of commits, those before it go at
// the next commit, and a reopened checkpoint purges what an earlier hold
// kept.
func TestRetainHoldsLogEntries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	c, err := CreateCheckpoint(dir, CheckpointMeta{Query: "q", Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	write := func(c *Checkpoint, from, to int64) {
		for id := from; id < to; id++ {
			if err := c.WriteOffsets(id, OffsetEntry{}); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteCommit(id, CommitEntry{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func() (n int, oldest int) {
		ents, err := os.ReadDir(filepath.Join(dir, "offsets"))
		if err != nil {
			t.Fatal(err)
		}
		oldest = -1
		for _, e := range ents {
			id, err := strconv.Atoi(e.Name())
			if err != nil {
				t.Fatal(err)
			}
			if oldest < 0 || id < oldest {
				oldest = id
			}
		}
		return len(ents), oldest
	}
	c.Retain(7)
	write(c, 0, 300)
	if n, oldest := count(); n != 293 || oldest != 7 {
		t.Fatalf("held from 7: %d entries from %d, want 293 from 7", n, oldest)
	}
	c2, _, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	c2.Retain(150)
	write(c2, 300, 301)
	if n, oldest := count(); n != 151 || oldest != 150 {
		t.Fatalf("reopened, held from 150: %d entries from %d, want 151 from 150", n, oldest)
	}
	c2.Retain(-1)
	write(c2, 301, 302)
	if n, oldest := count(); n != 100 || oldest != 202 {
		t.Fatalf("no hold: %d entries from %d, want 100 from 202", n, oldest)
	}
}
