package pebblestore

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
)

// TestInterruptEndsAWaitOnAStalledFlush reproduces, deterministically, the
// deadlock of a Pebble run resumed after a full disk: the flush goroutine
// stuck in Pebble's write stall (here held at the "stall" hook, where
// deleteFlushes applies its range deletions and Pebble's makeRoomForWrite
// waits), and the job waiting on it (WaitFlush, as a Commit that starts
// the next flush does) for ever, ignoring SIGTERM. Interrupt, which a
// cancelled run calls, ends the wait with an error, Close returns without
// closing the DB under the stuck goroutine, and the files reopen at the
// last Commit.
func TestInterruptEndsAWaitOnAStalledFlush(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	parked, release := make(chan struct{}), make(chan struct{})
	var armed bool // written before the flush starts, read by it after
	s, err := Open(dir, Options{MemTableSize: 1 << 30, hook: func(point string) {
		if point == "stall" && armed {
			close(parked)
			<-release
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 1000
	commit := func(b int64) {
		for i := range rows {
			if _, err := s.Add(fmt.Appendf(nil, "key-%d-%d", b, i), engines.NoExpiry); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	// A first flush of keys that never expire holds no expiring entry:
	// the next flush supersedes it, and deletes it (deleteFlushes).
	commit(0)
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	commit(1)
	armed = true
	if err := s.startFlush(); err != nil {
		t.Fatal(err)
	}
	job := s.job
	select {
	case <-parked:
	case <-time.After(time.Minute):
		t.Fatal("the flush never reached the stall")
	}
	waited := make(chan error, 1)
	go func() { waited <- s.WaitFlush() }()
	s.Interrupt()
	select {
	case err := <-waited:
		if err == nil || !strings.Contains(err.Error(), errInterrupted.Error()) {
			t.Fatalf("WaitFlush after Interrupt = %v, want it interrupted", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("WaitFlush still waits on the stalled flush a minute after Interrupt")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after Interrupt: %v", err)
	}
	// The stall ends; the goroutine finishes on the DB Close left open.
	close(release)
	<-job.done
	s.db.Close()
	s, err = Open(dir, Options{MemTableSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if id, ok := s.LastCommitted(); !ok || id != 1 || s.Len() != 2*rows {
		t.Fatalf("reopened at batch %d (%v) with %d keys, want batch 1 with %d", id, ok, s.Len(), 2*rows)
	}
}
