package memstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeltaRecordsEvictionsByWatermark checks that a batch that evicts
// many keys writes a delta of one record, not one per key, and that
// reopening replays it to the same state, at the version of the eviction
// and at the one before it.
func TestDeltaRecordsEvictionsByWatermark(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if _, err := c.Add([]byte(fmt.Sprintf("key-%04d", i)), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Commit(0); err != nil {
		t.Fatal(err)
	}
	before := contents(t, c)
	if n, err := c.Evict(599); err != nil || n != 600 {
		t.Fatalf("Evict evicted %d keys (%v), want 600", n, err)
	}
	c.Add([]byte("late"), 2000)
	if err := c.Commit(1); err != nil {
		t.Fatal(err)
	}
	after := contents(t, c)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "1.log"))
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := parseLog("1.log", data, 1)
	if err != nil || len(recs) != 2 {
		t.Fatalf("1.log: %d records (%v), want 2", len(recs), err)
	}
	if n := recs[1].end - recs[1].off; n > 64 {
		t.Fatalf("the delta of version 2 holds %d bytes for an eviction of 600 keys and one put: want one record per eviction", n)
	}
	// Newest first: Open at a version truncates the deltas after it.
	for _, v := range []int64{2, 1} {
		want := map[int64]map[string]int64{1: before, 2: after}[v]
		r, err := Open(dir, v, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := contents(t, r); !maps.Equal(got, want) {
			t.Fatalf("reopened at version %d: %d keys, want %d", v, len(got), len(want))
		}
		r.Close()
	}
}

// TestOlderDeltaFormatIsRefused checks that the delta files of the older
// layouts (a file per batch: DDSMDLT1, which logged removed keys one by
// one, and DDSMDLT2, evictions as watermarks) are refused in one line
// naming the file and asking for a new folder, by Open, Load, Check and
// StateFiles, rather than misread or ignored.
func TestOlderDeltaFormatIsRefused(t *testing.T) {
	for _, old := range []string{"DDSMDLT1R\x01a", "DDSMDLT2P\x01a\x02"} {
		dir := t.TempDir()
		body := []byte(old)
		data := binary.BigEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
		path := filepath.Join(dir, "1.delta")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOpen := Open(dir, 1, Options{})
		_, errLoad := Load(dir, 1)
		_, errFiles := StateFiles(dir, 1)
		for _, err := range []error{errOpen, errLoad, Check(dir, 1), errFiles} {
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "older dedupsim") || !strings.Contains(err.Error(), "new checkpoint folder") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line naming %s as a delta of an older dedupsim, got %v", path, err)
			}
		}
	}
}
