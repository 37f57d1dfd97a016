package pebblestore_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
)

var (
	_ engines.Store  = (*pebblestore.Store)(nil)
	_ engines.Ranger = (*pebblestore.Store)(nil)
)

// TestNoExpiryKeysAreNeverEvicted checks that a key stored with
// engines.NoExpiry is never evicted, even by the largest watermark.
func TestNoExpiryKeysAreNeverEvicted(t *testing.T) {
	s, err := pebblestore.Open(filepath.Join(t.TempDir(), "s"), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Add([]byte("forever"), engines.NoExpiry); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Evict(math.MaxInt64); err != nil || n != 0 || s.Len() != 1 {
		t.Fatalf("Evict(MaxInt64) = %d, %v; Len %d: a NoExpiry key was evicted", n, err, s.Len())
	}
}
