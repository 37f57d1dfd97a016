package microbatch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logBatches returns the batches of the offsets and commit records in
// the log of the checkpoint in dir, as a reopened checkpoint reads them.
func logBatches(t *testing.T, dir string) (offsets, commits []int64) {
	t.Helper()
	c, _, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	offsets, commits, err = c.LogBatches()
	if err != nil {
		t.Fatal(err)
	}
	return offsets, commits
}

// TestCheckpointLogsAreBounded checks that a long run's checkpoint keeps
// at least the last MinBatchesToRetain offsets and commits records, as
// Spark does, at most twice as many, and still recovers from them.
func TestCheckpointLogsAreBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	c, err := CreateCheckpoint(dir, CheckpointMeta{Query: "q", Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	const batches = 1000
	for id := int64(0); id < batches; id++ {
		if err := c.WriteOffsets(id, OffsetEntry{BatchWatermarkMs: id}); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteCommit(id, CommitEntry{NextBatchWatermarkMs: id + 1}); err != nil {
			t.Fatal(err)
		}
		if id%97 != 0 && id != batches-1 {
			continue
		}
		offsets, commits := logBatches(t, dir)
		for kind, ids := range map[string][]int64{"offsets": offsets, "commits": commits} {
			if len(ids) > 2*MinBatchesToRetain || ids[len(ids)-1] != id || ids[len(ids)-1]-ids[0]+1 != int64(len(ids)) ||
				int64(len(ids)) < min(id+1, MinBatchesToRetain) {
				t.Fatalf("after batch %d the %s records are of batches %d to %d (%d), want the last %d to %d of them", id, kind, ids[0], ids[len(ids)-1], len(ids), MinBatchesToRetain, 2*MinBatchesToRetain)
			}
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	// About 60 bytes a record.
	if fi.Size() > 2*MinBatchesToRetain*2*80 {
		t.Errorf("the log holds %d bytes after %d batches", fi.Size(), batches)
	}
	c2, _, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c2.Recover()
	if err != nil {
		t.Fatal(err)
	}
	if r.LastCommitted != batches-1 || r.State.Watermark != batches {
		t.Errorf("recovered batch %d, watermark %d; want %d, %d", r.LastCommitted, r.State.Watermark, batches-1, batches)
	}
}

// TestRetainHoldsLogEntries checks the checkpoint's side: records from
// the held batch on survive any number of commits, those before it go
// once retention compacts the log, and a reopened checkpoint drops what
// an earlier hold kept.
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
	// has checks that the log holds every batch from..to, and none
	// before keepFrom.
	has := func(what string, from, to, keepFrom int64) {
		t.Helper()
		offsets, commits := logBatches(t, dir)
		for _, ids := range [][]int64{offsets, commits} {
			if ids[0] < keepFrom || ids[0] > from || ids[len(ids)-1] != to || ids[len(ids)-1]-ids[0]+1 != int64(len(ids)) {
				t.Fatalf("%s: records of batches %d to %d (%d), want all of %d to %d, none before %d", what, ids[0], ids[len(ids)-1], len(ids), from, to, keepFrom)
			}
		}
	}
	c.Retain(7)
	write(c, 0, 300)
	has("held from 7", 7, 299, 0)
	c2, _, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	c2.Retain(150)
	write(c2, 300, 301)
	has("reopened, held from 150", 150, 300, 150)
	c2.Retain(-1)
	write(c2, 301, 400)
	has("no hold", 400-MinBatchesToRetain, 399, 0)
	write(c2, 400, 500)
	has("no hold, later", 500-MinBatchesToRetain, 499, 499-2*MinBatchesToRetain)
}

// TestTornLogTailIsNotWritten cuts the log at every byte of its last
// record, as a kill or a crash in the middle of an append would: the
// record is read as never written (the batch is pending again, or not
// started), and the next append truncates it away.
func TestTornLogTailIsNotWritten(t *testing.T) {
	base := filepath.Join(t.TempDir(), "ck")
	c, err := CreateCheckpoint(base, CheckpointMeta{Query: "q", Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(0); id < 3; id++ {
		if err := c.WriteOffsets(id, OffsetEntry{BatchWatermarkMs: 10 * id}); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteCommit(id, CommitEntry{NextBatchWatermarkMs: 10*id + 5}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WriteOffsets(3, OffsetEntry{BatchWatermarkMs: 30}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	full, err := os.ReadFile(filepath.Join(base, logName))
	if err != nil {
		t.Fatal(err)
	}
	last := c.log.recs[len(c.log.recs)-1]
	cut := len(full) - len(last.frame)
	for n := cut; n < len(full); n++ {
		dir := filepath.Join(t.TempDir(), "ck")
		if err := os.MkdirAll(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		meta, _ := os.ReadFile(filepath.Join(base, "metadata"))
		os.WriteFile(filepath.Join(dir, "metadata"), meta, 0o644)
		// A torn record: cut short, or its last bytes zeroes.
		torn := append([]byte(nil), full[:n]...)
		if n > cut+logHeader {
			torn = append(torn, make([]byte, len(full)-n)...)
		}
		os.WriteFile(filepath.Join(dir, logName), torn, 0o644)
		c, _, err := OpenCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Recover()
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if r.LastCommitted != 2 || r.Pending != nil || r.State.Watermark != 25 {
			t.Fatalf("cut at %d: recovered %+v, want batch 2 committed and nothing pending", n, r)
		}
		// A shorter record than the torn one: nothing of it may remain.
		if err := c.WriteOffsets(3, OffsetEntry{BatchWatermarkMs: 3}); err != nil {
			t.Fatal(err)
		}
		c.Close()
		got, _ := os.ReadFile(filepath.Join(dir, logName))
		want := append(full[:cut:cut], frameRecord(kindOffsets, 3, []byte(`{"batchWatermarkMs":3,"batchTimestampMs":0}`))...)
		if string(got) != string(want) {
			t.Fatalf("cut at %d: the append after the torn record left %q, want %q", n, got[cut:], want[cut:])
		}
	}
}

// TestDamagedLogRecordIsRefused flips a byte of a record that is not the
// last: that is damage, not a torn append, and Recover says where.
func TestDamagedLogRecordIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	c, err := CreateCheckpoint(dir, CheckpointMeta{Query: "q", Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(0); id < 3; id++ {
		c.WriteOffsets(id, OffsetEntry{BatchWatermarkMs: id})
		c.WriteCommit(id, CommitEntry{NextBatchWatermarkMs: id})
	}
	c.Close()
	path := filepath.Join(dir, logName)
	data, _ := os.ReadFile(path)
	data[len(logMagic)+logHeader+logBodyMin+3] ^= 1
	os.WriteFile(path, data, 0o644)
	c2, _, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c2.Recover()
	if !errors.Is(err, ErrNotCheckpoint) || !strings.Contains(err.Error(), path+": damaged record at byte 8") {
		t.Fatalf("want the damaged record named, got %v", err)
	}
}

// TestDiscardFromDropsLaterRecords: a resumed run redoes the batches
// after its snapshot; their records go, and a restart recovers the
// snapshot's batch.
func TestDiscardFromDropsLaterRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	c, err := CreateCheckpoint(dir, CheckpointMeta{Query: "q", Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(0); id < 6; id++ {
		c.WriteOffsets(id, OffsetEntry{BatchWatermarkMs: id})
		c.WriteCommit(id, CommitEntry{NextBatchWatermarkMs: id})
	}
	c.WriteOffsets(6, OffsetEntry{BatchWatermarkMs: 6})
	c.Close()
	os.WriteFile(filepath.Join(dir, "."+logName+".tmp-x"), []byte("left by a kill"), 0o644)
	c2, _, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.DiscardFrom(4); err != nil {
		t.Fatal(err)
	}
	c2.Close()
	offsets, commits := logBatches(t, dir)
	if offsets[len(offsets)-1] != 3 || commits[len(commits)-1] != 3 {
		t.Fatalf("after DiscardFrom(4): offsets %v, commits %v", offsets, commits)
	}
	if _, err := os.Stat(filepath.Join(dir, "."+logName+".tmp-x")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the killed rewrite's temporary file is still there: %v", err)
	}
	c3, _, _ := OpenCheckpoint(dir)
	r, err := c3.Recover()
	if err != nil || r.LastCommitted != 3 || r.Pending != nil {
		t.Fatalf("recovered %+v, %v; want batch 3 committed", r, err)
	}
}

// TestOldLayoutIsRefused: a checkpoint of the file-per-batch layout is
// refused with one line saying the layout changed.
func TestOldLayoutIsRefused(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "offsets"), 0o777)
	os.WriteFile(filepath.Join(dir, "metadata"), []byte(`{"format":"dedupsim-checkpoint/1","query":"q","store":"memory"}`+"\n"), 0o644)
	_, _, err := OpenCheckpoint(dir)
	if !errors.Is(err, ErrNotCheckpoint) || !strings.Contains(err.Error(), "does not read the old layout") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want one line saying the layout changed, got %v", err)
	}
}

// TestSyncAfterReopenAndRewrite: Sync works on a checkpoint that has
// appended nothing itself (a restart reopened it; an earlier handle wrote
// the records) and after a rewrite, and changes nothing.
func TestSyncAfterReopenAndRewrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	c, err := CreateCheckpoint(dir, CheckpointMeta{Query: "q", Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(0); id < 2*MinBatchesToRetain+1; id++ {
		c.WriteOffsets(id, OffsetEntry{})
		c.WriteCommit(id, CommitEntry{})
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	before, _ := os.ReadFile(filepath.Join(dir, logName))
	c2, _, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Sync(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, logName)); string(after) != string(before) {
		t.Fatal("Sync changed the log")
	}
}
