package pebblestore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

var _ engines.Snapshotter = (*Store)(nil)

// smallOpts make overlays flush every few batches, so that checkpoints
// hold sstables (hard links) as well as changelogs.
var smallOpts = Options{CacheSize: 1 << 20, MemTableSize: 64 << 10}

// runBatch adds 300 keys of batch b, expiring at b+10, and evicts what
// expires at b: the state changes every batch, and keys come and go.
func runBatch(t *testing.T, s *Store, b int64) {
	t.Helper()
	for i := range 300 {
		if _, err := s.Add([]byte(fmt.Sprintf("key-%04d-%03d", b, i)), b+10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Evict(b); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s, b)
}

// hashTree returns every file and folder under dir with the hash of its
// content.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %s changed or vanished", what, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

// checkpointVersions lists the checkpoint folders of the store in dir.
func checkpointVersions(t *testing.T, dir string) []int64 {
	t.Helper()
	v, err := listCheckpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenAtRestoresSnapshotVersions(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "state", "0")
	s, err := OpenAt(dir, 0, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{} // version -> Range rendering
	for b := int64(0); b < 12; b++ {
		runBatch(t, s, b)
		v := b + 1
		want[v] = rangeAll(t, s)
		if v == 4 || v == 7 || v == 9 {
			if err := s.Snapshot(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := checkpointVersions(t, dir); !slices.Equal(got, []int64{7, 9}) {
		t.Fatalf("checkpoints %v, want the two newest, [7 9]", got)
	}
	if ssts, _ := filepath.Glob(filepath.Join(CheckpointsDir(dir), "9", "*.sst")); len(ssts) == 0 {
		t.Fatal("the checkpoint holds no sstable: the test does not exercise the hard links")
	}
	if err := s.Snapshot(3); err == nil || !strings.Contains(err.Error(), "version 12") {
		t.Fatalf("a snapshot of a version the store is not at: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The live store at its own version: opened as it is.
	s, err = OpenAt(dir, 12, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got := rangeAll(t, s); got != want[12] {
		t.Fatal("reopened live store differs")
	}
	s.Close()

	// An older version: rebuilt from its checkpoint, later ones dropped.
	s, err = OpenAt(dir, 9, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got := rangeAll(t, s); got != want[9] || s.Len() != strings.Count(want[9], ";") {
		t.Fatalf("state at version 9 differs (Len %d)", s.Len())
	}
	if b, ok := s.LastCommitted(); !ok || b != 8 {
		t.Fatalf("LastCommitted = %d, %v; want 8", b, ok)
	}
	// Redo batch 9 differently: the checkpoint must not change through
	// the hard links the restored store shares with it.
	for i := range 2000 {
		s.Add([]byte(fmt.Sprintf("other-%05d", i)), 100)
	}
	mustCommit(t, s, 9)
	s.Close()
	s, err = OpenAt(dir, 9, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got := rangeAll(t, s); got != want[9] {
		t.Fatal("the checkpoint of version 9 changed after the restored store was written to")
	}
	s.Close()
	if got := checkpointVersions(t, dir); !slices.Equal(got, []int64{7, 9}) {
		t.Fatalf("checkpoints %v after reopening at 9, want [7 9]", got)
	}
	s, err = OpenAt(dir, 7, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got := rangeAll(t, s); got != want[7] {
		t.Fatal("state at version 7 differs")
	}
	s.Close()
	if got := checkpointVersions(t, dir); !slices.Equal(got, []int64{7}) {
		t.Fatalf("checkpoints %v after reopening at 7, want [7]: 9 is of an abandoned run", got)
	}

	// A version with no checkpoint: a clear error, and nothing changed.
	before := hashTree(t, root)
	_, err = OpenAt(dir, 4, smallOpts)
	if err == nil || !strings.Contains(err.Error(), "no state of version 4") || !strings.Contains(err.Error(), "[7]") {
		t.Fatalf("OpenAt a version without a checkpoint: %v", err)
	}
	if err := CheckAt(dir, 4, smallOpts); err == nil {
		t.Fatal("CheckAt accepted a version without a checkpoint")
	}
	if err := CheckAt(dir, 7, smallOpts); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "a failed OpenAt", before, hashTree(t, root))
}

// TestOpenAtAfterKilledRestore: a process killed in the middle of a restore
// leaves the live folder missing and temporary folders beside it; OpenAt
// restores again and removes them.
func TestOpenAtAfterKilledRestore(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "0")
	s, err := OpenAt(dir, 0, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for b := int64(0); b < 6; b++ {
		runBatch(t, s, b)
		if b == 3 {
			want = rangeAll(t, s)
			if err := s.Snapshot(4); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	if err := os.Rename(dir, filepath.Join(root, ".0.replaced-123")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".0.restoring-456"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err = OpenAt(dir, 4, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := rangeAll(t, s); got != want {
		t.Fatal("restored state differs")
	}
	ents, _ := os.ReadDir(root)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"0", "0.checkpoints"}) {
		t.Fatalf("folder holds %v, want [0 0.checkpoints]", names)
	}
}

func TestOpenReadOnlyWritesNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "0")
	s, err := Open(dir, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	for b := int64(0); b < 5; b++ {
		runBatch(t, s, b)
	}
	want := rangeAll(t, s)
	// Killed rather than closed: the read-only open has changelogs to replay.
	s.db.Close()
	before := hashTree(t, root)
	r, err := OpenReadOnly(dir, smallOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got := rangeAll(t, r); got != want {
		t.Fatal("read-only store differs")
	}
	if b, ok := r.LastCommitted(); !ok || b != 4 {
		t.Fatalf("LastCommitted = %d, %v", b, ok)
	}
	r.Add([]byte("new"), 1)
	if err := r.Commit(5); err == nil {
		t.Fatal("a read-only store committed")
	}
	r.Close()
	sameTree(t, "OpenReadOnly", before, hashTree(t, root))
	if _, err := OpenReadOnly(t.TempDir(), smallOpts); err == nil {
		t.Fatal("OpenReadOnly accepted an empty folder")
	}
}
