package memstore

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

var _ engines.Snapshotter = (*Checkpointed)(nil)

// fileNames lists dir's files, sorted.
func fileNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// versionFiles renders the expected files: snapshots, and delta logs by
// their first versions.
func versionFiles(snaps []int, logs ...int) []string {
	var out []string
	for _, s := range snaps {
		out = append(out, fmt.Sprintf("%d.snapshot", s))
	}
	for _, v := range logs {
		out = append(out, fmt.Sprintf("%d.log", v))
	}
	slices.Sort(out)
	return out
}

// step runs batch b: 20 new keys expiring at b+5, and eviction at b.
func step(t *testing.T, c *Checkpointed, b int64) {
	t.Helper()
	for i := range 20 {
		if _, err := c.Add([]byte(fmt.Sprintf("k%03d-%02d", b, i)), b+5); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Evict(b); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(b); err != nil {
		t.Fatal(err)
	}
}

func loadContents(t *testing.T, dir string, v int64) model {
	t.Helper()
	s, err := Load(dir, v)
	if err != nil {
		t.Fatalf("Load version %d: %v", v, err)
	}
	return contents(t, s)
}

func TestSnapshotPrunesWhatNoReopenNeeds(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 0, Options{SnapshotEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	states := map[int64]model{}
	runTo := func(v int64) {
		for b := c.version; b < v; b++ {
			step(t, c, b)
			states[b+1] = contents(t, c)
		}
	}
	runTo(12)
	if err := c.Snapshot(12); err != nil {
		t.Fatal(err)
	}
	// The first Snapshot removes nothing.
	if got, want := fileNames(t, dir), versionFiles([]int{10}, 1, 11); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	runTo(27)
	if err := c.Snapshot(27); err != nil {
		t.Fatal(err)
	}
	if got, want := fileNames(t, dir), versionFiles([]int{10, 20}, 11, 21); !slices.Equal(got, want) {
		t.Fatalf("after Snapshot(27): files %v, want %v", got, want)
	}
	for _, v := range []int64{12, 27} {
		if !maps.Equal(loadContents(t, dir, v), states[v]) {
			t.Fatalf("state of version %d differs after pruning", v)
		}
	}
	runTo(35)
	if err := c.Snapshot(35); err != nil {
		t.Fatal(err)
	}
	if got, want := fileNames(t, dir), versionFiles([]int{20, 30}, 21, 31); !slices.Equal(got, want) {
		t.Fatalf("after Snapshot(35): files %v, want %v", got, want)
	}
	if _, err := Load(dir, 12); err == nil || !strings.Contains(err.Error(), "the delta of version 1 is missing") {
		t.Fatalf("Load of a pruned version: %v", err)
	}
	if err := c.Snapshot(34); err == nil {
		t.Fatal("Snapshot of a version the store is not at")
	}
	c.Add([]byte("pending"), 1)
	if err := c.Snapshot(35); err == nil {
		t.Fatal("Snapshot with an uncommitted batch")
	}

	// After a reopen the first Snapshot again removes nothing: the one
	// before the reopen may be the job snapshot on disk.
	c, err = Open(dir, 35, Options{SnapshotEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	runTo(44)
	if err := c.Snapshot(44); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(loadContents(t, dir, 27), states[27]) {
		t.Fatal("the first Snapshot after a reopen removed files of the previous one")
	}
	runTo(51)
	if err := c.Snapshot(51); err != nil {
		t.Fatal(err)
	}
	if got, want := fileNames(t, dir), versionFiles([]int{40, 50}, 41, 51); !slices.Equal(got, want) {
		t.Fatalf("after Snapshot(51): files %v, want %v", got, want)
	}

	// A long run keeps a bounded number of files.
	for v := int64(58); v <= 401; v += 7 {
		runTo(v)
		if err := c.Snapshot(v); err != nil {
			t.Fatal(err)
		}
		if n := len(fileNames(t, dir)); n > 2+10+7+1 {
			t.Fatalf("version %d: %d files", v, n)
		}
	}
	if !maps.Equal(loadContents(t, dir, 401), states[401]) || !maps.Equal(loadContents(t, dir, 394), states[394]) {
		t.Fatal("state differs after a long pruned run")
	}
}

func TestLoadNeverWrites(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 0, Options{SnapshotEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	for b := int64(0); b < 6; b++ {
		step(t, c, b)
	}
	want := contents(t, c)
	hash := func() map[string][32]byte {
		out := map[string][32]byte{}
		for _, n := range fileNames(t, dir) {
			data, _ := os.ReadFile(filepath.Join(dir, n))
			out[n] = sha256.Sum256(data)
		}
		return out
	}
	before := hash()
	if err := Check(dir, 6); err != nil {
		t.Fatal(err)
	}
	if err := Check(filepath.Join(dir, "missing"), 0); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir, 6)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(contents(t, s), want) {
		t.Fatal("loaded state differs")
	}
	s.Add([]byte("x"), 1)
	s.Commit(6)
	if !maps.Equal(before, hash()) {
		t.Fatal("Load or the loaded store wrote to the folder")
	}
	if _, err := Load(filepath.Join(dir, "missing"), 0); err == nil {
		t.Fatal("Load of a missing folder")
	}
	// The delta of version 5, the first of 5.log (a snapshot at 4),
	// with a bit flipped: damage, since the delta of 6 follows it.
	log5 := filepath.Join(dir, "5.log")
	data, err := os.ReadFile(log5)
	if err != nil {
		t.Fatal(err)
	}
	data[logHeader+frameHeader+frameMin] ^= 1
	writeFileOrFail(t, log5, data)
	if _, err := Load(dir, 6); err == nil || !contains(err.Error(), log5) {
		t.Fatalf("corrupted delta: %v", err)
	}
	if err := Check(dir, 6); err == nil || !contains(err.Error(), log5) {
		t.Fatalf("Check of a corrupted delta: %v", err)
	}
	if err := Check(dir, 4); err != nil {
		t.Fatalf("Check of a version that does not read the corrupted delta: %v", err)
	}
	writeFileOrFail(t, filepath.Join(dir, "notes.txt"), nil)
	if _, err := Load(dir, 0); err == nil || !contains(err.Error(), "notes.txt") {
		t.Fatalf("foreign file: %v", err)
	}
}
