package pebblestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// TestCloseCancelsAFlushAtItsIngestion parks a flush at the ingest hook,
// after it has written every sstable, and closes the store: the cancel
// check just before the ingestion stops it there (the cancel that the
// write loop checks comes too late for it), so nothing is ingested and no
// staged sstable is left; a reopen replays the changelogs.
func TestCloseCancelsAFlushAtItsIngestion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	parked, release := make(chan struct{}), make(chan struct{})
	var armed bool // written before the flush starts, read by it after
	s, err := Open(dir, Options{MemTableSize: 1 << 30, hook: func(point string) {
		if point == "ingest" && armed {
			close(parked)
			<-release
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	const batches, rows = 3, 1000
	for b := range int64(batches) {
		for i := range rows {
			if _, err := s.Add(fmt.Appendf(nil, "key-%d-%d", b, i), engines.NoExpiry); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	if s.job != nil {
		t.Fatal("a flush started before the test's")
	}
	armed = true
	if err := s.startFlush(); err != nil {
		t.Fatal(err)
	}
	job := s.job
	select {
	case <-parked:
	case <-time.After(time.Minute):
		t.Fatal("the flush never reached its ingestion")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for !job.cancelled.Load() {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(job.err, errFlushCancelled) {
		t.Fatalf("the flush parked at its ingestion ended with %v, want it cancelled there", job.err)
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
}
