package memstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// logWorkload runs batches b0..b1-1 of a small workload on c (10 keys a
// batch, eviction at the batch's number), recording each version's state.
func logWorkload(t *testing.T, c *Checkpointed, states map[int64]model, b0, b1 int64) {
	t.Helper()
	for b := b0; b < b1; b++ {
		for i := range 10 {
			if _, err := c.Add([]byte(fmt.Sprintf("key-%03d-%d", b, i)), b+3); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Evict(b); err != nil {
			t.Fatal(err)
		}
		if err := c.Commit(b); err != nil {
			t.Fatal(err)
		}
		if states != nil {
			states[b+1] = contents(t, c)
		}
	}
}

// threeDeltas writes a store folder whose one delta log holds versions 1
// to 3 and returns the folder, the log's bytes, its records and the states.
func threeDeltas(t *testing.T) (string, []byte, []logRec, map[int64]model) {
	t.Helper()
	dir := t.TempDir()
	c, err := Open(dir, 0, Options{SnapshotEvery: 100})
	if err != nil {
		t.Fatal(err)
	}
	states := map[int64]model{0: {}}
	logWorkload(t, c, states, 0, 3)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if names := fileNames(t, dir); !slices.Equal(names, []string{"1.log"}) {
		t.Fatalf("files %v, want 1.log", names)
	}
	data, err := os.ReadFile(filepath.Join(dir, "1.log"))
	if err != nil {
		t.Fatal(err)
	}
	recs, valid, err := parseLog("1.log", data, 1)
	if err != nil || len(recs) != 3 || valid != int64(len(data)) {
		t.Fatalf("1.log: %d records, %d valid bytes of %d (%v)", len(recs), valid, len(data), err)
	}
	return dir, data, recs, states
}

// TestDeltaLogTornTailAtEveryByte cuts the log at every byte, as a kill in
// the middle of an append leaves it: the complete records read, the cut
// one reads as never written (the versions it and after it need are
// missing, in one line naming the log), and Open at the last complete
// version truncates the torn bytes and appends after them.
func TestDeltaLogTornTailAtEveryByte(t *testing.T) {
	dir, data, recs, states := threeDeltas(t)
	path := filepath.Join(dir, "1.log")
	for cut := 0; cut <= len(data); cut++ {
		complete := int64(0)
		for _, r := range recs {
			if r.end <= int64(cut) {
				complete = r.version
			}
		}
		writeFileOrFail(t, path, data[:cut])
		s, err := Load(dir, complete)
		if err != nil {
			t.Fatalf("cut at %d: Load of version %d: %v", cut, complete, err)
		}
		if !maps.Equal(contents(t, s), states[complete]) {
			t.Fatalf("cut at %d: version %d differs", cut, complete)
		}
		s.Close()
		if complete < 3 {
			_, err := Load(dir, complete+1)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("delta of version %d is missing", complete+1)) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("cut at %d: Load of version %d: %v", cut, complete+1, err)
			}
			if complete > 0 && !strings.Contains(err.Error(), path) {
				t.Fatalf("cut at %d: the error does not name the log: %v", cut, err)
			}
		}
		c, err := Open(dir, complete, Options{SnapshotEvery: 100})
		if err != nil {
			t.Fatalf("cut at %d: Open at version %d: %v", cut, complete, err)
		}
		want := int64(len(logMagic) + 8)
		if complete > 0 {
			want = recs[complete-1].end
		}
		if fi, err := os.Stat(path); complete > 0 && (err != nil || fi.Size() != want) {
			t.Fatalf("cut at %d: Open left %d bytes (%v), want %d", cut, fi.Size(), err, want)
		}
		// The batches after it run again, and write the same bytes.
		logWorkload(t, c, nil, complete, 3)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("cut at %d: after the batches ran again the log differs (%d bytes, want %d)", cut, len(got), len(data))
		}
	}
}

// TestDeltaLogBitFlipMidFile flips each bit of every byte of the records
// before the last: the versions that read the damaged record (or any
// after it) are refused in one line naming the log, and a flip in a
// record's checksum or body is damage at its byte offset (not a torn
// tail: records follow it); nothing is misread.
func TestDeltaLogBitFlipMidFile(t *testing.T) {
	dir, data, recs, states := threeDeltas(t)
	path := filepath.Join(dir, "1.log")
	for i := int64(0); i < recs[1].end; i++ {
		for bit := range 8 {
			bad := bytes.Clone(data)
			bad[i] ^= 1 << bit
			writeFileOrFail(t, path, bad)
			_, err := Load(dir, 3)
			if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bit %d of byte %d flipped: Load of version 3: %v", bit, i, err)
			}
			if err := Check(dir, 3); err == nil {
				t.Fatalf("bit %d of byte %d flipped: Check of version 3 passed", bit, i)
			}
			for _, r := range recs[:2] {
				if i >= r.off+4 && i < r.end && !strings.Contains(err.Error(), fmt.Sprintf("damaged record at byte %d", r.off)) {
					t.Fatalf("bit %d of byte %d flipped: the error does not name the record's byte %d: %v", bit, i, r.off, err)
				}
			}
		}
	}
	// A flip in the last record: it reads as torn, the versions before
	// it are intact.
	bad := bytes.Clone(data)
	bad[recs[2].end-1] ^= 1
	writeFileOrFail(t, path, bad)
	s, err := Load(dir, 2)
	if err != nil || !maps.Equal(contents(t, s), states[2]) {
		t.Fatalf("the last record damaged: Load of version 2: %v", err)
	}
}

// TestOpenTruncatesUncommittedVersions runs versions past a snapshot,
// then reopens at an earlier version (the batches after it were never
// committed to the query's commit log): the deltas after it are cut from
// its log, the logs of later versions removed, and the batches run again
// differently are what a later reopen reads.
func TestOpenTruncatesUncommittedVersions(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 0, Options{SnapshotEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	states := map[int64]model{}
	logWorkload(t, c, states, 0, 7)
	c.Abort()
	if names := fileNames(t, dir); !slices.Equal(names, []string{"1.log", "4.snapshot", "5.log"}) {
		t.Fatalf("files %v, want 1.log, 4.snapshot and 5.log", names)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "1.log"))
	recs, _, _ := parseLog("1.log", before, 1)
	c, err = Open(dir, 3, Options{SnapshotEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(contents(t, c), states[3]) {
		t.Fatal("reopened at version 3: the state differs")
	}
	if names := fileNames(t, dir); !slices.Equal(names, []string{"1.log", "4.snapshot"}) {
		t.Fatalf("after Open at 3: files %v, want 1.log and 4.snapshot (5.log holds uncommitted versions)", names)
	}
	if fi, err := os.Stat(filepath.Join(dir, "1.log")); err != nil || fi.Size() != recs[2].end {
		t.Fatalf("after Open at 3: 1.log holds %d bytes (%v), want %d", fi.Size(), err, recs[2].end)
	}
	// Batch 3 runs again, another way.
	if _, err := c.Add([]byte("other"), 100); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(3); err != nil {
		t.Fatal(err)
	}
	want := contents(t, c)
	c.Abort()
	// The log keeps versions 1-3 byte for byte and holds the new 4. The
	// stale 4.snapshot (a query runs a batch again the same way, so it
	// would hold the same state; here it does not) is removed before
	// version 4 is read back from the new delta.
	data, _ := os.ReadFile(filepath.Join(dir, "1.log"))
	newRecs, _, err := parseLog("1.log", data, 1)
	if err != nil || len(newRecs) != 4 || !bytes.Equal(data[:recs[2].end], before[:recs[2].end]) {
		t.Fatalf("1.log after batch 3 ran again: %d records (%v)", len(newRecs), err)
	}
	os.Remove(filepath.Join(dir, "4.snapshot"))
	s, err := Load(dir, 4)
	if err != nil || !maps.Equal(contents(t, s), want) {
		t.Fatalf("Load of the new version 4: %v", err)
	}
}

// TestKillBetweenAppendAndJobSnapshot takes a job snapshot's file list
// (the store's own, with the checksum it took as it wrote), commits more
// batches, then is killed: the list and checksums still hold for the
// folder (StateFiles and a read of the files agree), the store reopens at
// the snapshot's version to its state, and the batches run again append
// the same bytes as before the kill.
func TestKillBetweenAppendAndJobSnapshot(t *testing.T) {
	for _, every := range []int64{1, 4, 100} {
		dir := t.TempDir()
		c, err := Open(dir, 0, Options{SnapshotEvery: every})
		if err != nil {
			t.Fatal(err)
		}
		states := map[int64]model{}
		var snapFiles []engines.StateFile
		var snapV int64
		for v := int64(1); v <= 23; v += 2 {
			logWorkload(t, c, states, c.version, v)
			if err := c.Snapshot(v); err != nil {
				t.Fatal(err)
			}
			files, ok, err := c.StateFiles(v)
			if err != nil {
				t.Fatal(err)
			}
			listed, err := StateFiles(dir, v)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				// A snapshot file the store has not seen finish: the
				// caller lists the folder (not in this test's runs).
				t.Fatalf("every %d, version %d: the store cannot list its files", every, v)
			}
			checkSums(t, files, listed)
			snapFiles, snapV = files, v
		}
		// Two more batches appended, then a kill before the next job
		// snapshot.
		logWorkload(t, c, states, c.version, c.version+2)
		after := readAll(t, dir)
		c.Abort()
		listed, err := StateFiles(dir, snapV)
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, snapFiles, listed)
		r, err := Open(dir, snapV, Options{SnapshotEvery: every})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(contents(t, r), states[snapV]) {
			t.Fatalf("every %d: reopened at version %d: the state differs", every, snapV)
		}
		logWorkload(t, r, nil, snapV, snapV+2)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		for name, data := range readAll(t, dir) {
			if strings.HasSuffix(name, logSuffix) && !bytes.Equal(data, after[name]) {
				t.Fatalf("every %d: %s differs after the batches ran again", every, name)
			}
		}
	}
}

// checkSums checks the store's own list against its folder's, and each
// checksum against the file's bytes.
func checkSums(t *testing.T, files, listed []engines.StateFile) {
	t.Helper()
	if len(files) != len(listed) {
		t.Fatalf("the store lists %v, its folder %v", files, listed)
	}
	for i, f := range files {
		if f.Path != listed[i].Path || f.Len != listed[i].Len {
			t.Fatalf("the store lists %v, its folder %v", files, listed)
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if f.Len >= 0 {
			if int64(len(data)) < f.Len {
				t.Fatalf("%s: %d bytes, %d recorded", f.Path, len(data), f.Len)
			}
			data = data[:f.Len]
		}
		sum := sha256.Sum256(data)
		if f.SHA256 != "" && f.SHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("%s: the store's checksum differs from its first %d bytes'", f.Path, f.Len)
		}
		if strings.HasSuffix(f.Path, logSuffix) && f.SHA256 == "" {
			t.Fatalf("%s: the store took no checksum of its open log", f.Path)
		}
	}
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, n := range fileNames(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = data
	}
	return out
}

// FuzzParseLog checks the delta log's reader on any bytes: no panic, a
// valid part within the data whose records are contiguous versions from
// the log's first, framed end to end, and read again the same from the
// valid part alone (so a truncation there, as Open makes, loses nothing).
// The seeds, run by go test, are a real log, cut and flipped.
func FuzzParseLog(f *testing.F) {
	dir := f.TempDir()
	c, err := Open(dir, 0, Options{SnapshotEvery: 100})
	if err != nil {
		f.Fatal(err)
	}
	for b := int64(0); b < 3; b++ {
		c.Add([]byte(fmt.Sprintf("k%d", b)), b+2)
		c.Evict(b)
		if err := c.Commit(b); err != nil {
			f.Fatal(err)
		}
	}
	c.Close()
	data, err := os.ReadFile(filepath.Join(dir, "1.log"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)-3])
	f.Add(data[:10])
	f.Add(append(bytes.Clone(data), make([]byte, 9)...))
	flipped := bytes.Clone(data)
	flipped[30] ^= 4
	f.Add(flipped)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, valid, err := parseLog("x.log", data, 1)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %v", err)
			}
			return
		}
		if valid < 0 || valid > int64(len(data)) {
			t.Fatalf("valid part %d of %d bytes", valid, len(data))
		}
		at := int64(logHeader)
		for i, r := range recs {
			if r.version != 1+int64(i) || r.off != at || r.end <= r.off || r.end > valid {
				t.Fatalf("record %d: %+v after byte %d, valid %d", i, r, at, valid)
			}
			at = r.end
		}
		if len(recs) > 0 && at != valid {
			t.Fatalf("records end at %d, the valid part at %d", at, valid)
		}
		again, v2, err := parseLog("x.log", data[:valid], 1)
		if err != nil || v2 != valid || !slices.Equal(again, recs) {
			t.Fatalf("the valid part reads differently: %d records, %d bytes (%v)", len(again), v2, err)
		}
	})
}
