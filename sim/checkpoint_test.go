package sim

import (
	"os"
	"path/filepath"
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
