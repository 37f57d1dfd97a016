package pebblestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// TestCloseCancelsARunningFlush closes a store whose flush of a large
// overlay has just started: Close stops it before its ingestion (an
// interrupted run does not wait for the overlay to be written), leaves no
// staged sstable, and a reopen has every committed key from the
// changelogs.
func TestCloseCancelsARunningFlush(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir, Options{MemTableSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	const batches, rows = 20, 50_000
	for b := range int64(batches) {
		for i := range rows {
			exp := engines.NoExpiry
			if i%2 == 0 {
				exp = b + 1000
			}
			if _, err := s.Add(fmt.Appendf(nil, "key-%d-%d", b, i), exp); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	if s.job != nil {
		t.Fatal("a flush started before the test's: the overlay is too small for the test")
	}
	if err := s.startFlush(); err != nil {
		t.Fatal(err)
	}
	job := s.job
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(job.err, errFlushCancelled) {
		t.Fatalf("the flush ended with %v, want it cancelled", job.err)
	}
	if staged, _ := os.ReadDir(filepath.Join(dir, stagingDir)); len(staged) != 0 {
		t.Fatalf("Close left %d staged sstables", len(staged))
	}
	s, err = Open(dir, Options{MemTableSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if id, ok := s.LastCommitted(); !ok || id != batches-1 || s.Len() != batches*rows {
		t.Fatalf("reopened at batch %d (%v) with %d keys, want batch %d with %d", id, ok, s.Len(), batches-1, batches*rows)
	}
	for _, k := range []string{"key-0-0", "key-19-49999", "key-7-12345"} {
		if added, err := s.Add([]byte(k), engines.NoExpiry); err != nil || added {
			t.Fatalf("Add(%s) after the reopen = %v, %v: want the key present", k, added, err)
		}
	}
}
