package pebblestore

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/dedupsim/dedupsim/engines"
)

func openTemp(t *testing.T, opts Options) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "state"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustAdd(t *testing.T, s *Store, key string, exp int64, want bool) {
	t.Helper()
	got, err := s.Add([]byte(key), exp)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Add(%q, %d) = %v, want %v", key, exp, got, want)
	}
}

func mustEvict(t *testing.T, s *Store, w int64) int {
	t.Helper()
	n, err := s.Evict(w)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustCommit(t *testing.T, s *Store, id int64) {
	t.Helper()
	if err := s.Commit(id); err != nil {
		t.Fatal(err)
	}
}

// rangeAll renders the store as "key=expiry;" in Range order.
func rangeAll(t *testing.T, s *Store) string {
	t.Helper()
	var b strings.Builder
	if err := s.Range(func(k []byte, exp int64) bool {
		fmt.Fprintf(&b, "%s=%d;", k, exp)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func reopen(t *testing.T, s *Store, opts Options) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(s.dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

func TestEdgeKeysAndExpiries(t *testing.T) {
	s := openTemp(t, Options{})
	big := strings.Repeat("z", 1<<20)
	adds := []struct {
		k string
		t int64
	}{
		{"", 5},
		{"a", math.MinInt64},
		{"a\x00", -1},
		{"ab", 0},
		{"abc", engines.NoExpiry},
		{"x", engines.NoExpiry - 1},
		{big, -7},
		{big + "!", 3},
	}
	for _, a := range adds {
		mustAdd(t, s, a.k, a.t, true)
	}
	// A key added earlier in the batch is present, whatever its expiry.
	for _, a := range adds {
		mustAdd(t, s, a.k, 1, false)
	}
	mustCommit(t, s, 0)
	s = reopen(t, s, Options{})
	for _, a := range adds {
		mustAdd(t, s, a.k, 1, false)
	}
	if s.Len() != len(adds) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(adds))
	}
	for _, step := range []struct {
		w    int64
		want int
	}{
		{math.MinInt64, 1},    // a
		{-2, 1},               // big
		{-1, 1},               // a\x00
		{2, 1},                // ab
		{5, 2},                // big+"!", ""
		{engines.NoExpiry, 1}, // x; abc never
		{engines.NoExpiry, 0},
	} {
		if n := mustEvict(t, s, step.w); n != step.want {
			t.Fatalf("Evict(%d) = %d, want %d", step.w, n, step.want)
		}
	}
	if got := rangeAll(t, s); got != "abc=9223372036854775807;" {
		t.Fatalf("after evicting everything left %q", got)
	}
	mustCommit(t, s, 1)
	s = reopen(t, s, Options{})
	if got := rangeAll(t, s); got != "abc=9223372036854775807;" || s.Len() != 1 {
		t.Fatalf("after reopen %q, Len %d", got, s.Len())
	}
}

func TestSameBatchVisibility(t *testing.T) {
	s := openTemp(t, Options{})
	mustAdd(t, s, "old", 10, true)
	mustCommit(t, s, 1)

	mustAdd(t, s, "new", 10, true)
	mustAdd(t, s, "new", 99, false)
	if n := mustEvict(t, s, 10); n != 2 {
		t.Fatalf("Evict(10) = %d, want 2 (old committed, new pending)", n)
	}
	// Evicted in this batch, so absent though the DB still holds "old".
	mustAdd(t, s, "old", 20, true)
	mustAdd(t, s, "new", 30, true)
	if n := mustEvict(t, s, 10); n != 0 {
		t.Fatalf("Evict(10) again = %d, want 0", n)
	}
	// A key later than the watermark, then one below it: low moves back.
	mustAdd(t, s, "late", 5, true)
	if n := mustEvict(t, s, 25); n != 2 {
		t.Fatalf("Evict(25) = %d, want 2 (old, late)", n)
	}
	if got := rangeAll(t, s); got != "new=30;" || s.Len() != 1 {
		t.Fatalf("state %q, Len %d", got, s.Len())
	}
	mustCommit(t, s, 2)
	s = reopen(t, s, Options{})
	if got := rangeAll(t, s); got != "new=30;" || s.Len() != 1 {
		t.Fatalf("after reopen %q, Len %d", got, s.Len())
	}
}

func TestReopenRestoresLastCommit(t *testing.T) {
	s := openTemp(t, Options{})
	if id, ok := s.LastCommitted(); ok {
		t.Fatalf("fresh store LastCommitted = %d, true", id)
	}
	mustAdd(t, s, "a", 1, true)
	mustAdd(t, s, "b", 2, true)
	mustCommit(t, s, 7)
	mustAdd(t, s, "c", 3, true)
	mustEvict(t, s, 1)
	s = reopen(t, s, Options{})
	if id, ok := s.LastCommitted(); !ok || id != 7 {
		t.Fatalf("LastCommitted = %d, %v, want 7", id, ok)
	}
	if got := rangeAll(t, s); got != "a=1;b=2;" || s.Len() != 2 {
		t.Fatalf("state %q, Len %d; want a and b", got, s.Len())
	}
	// The eviction bound is committed too: evicting resumes correctly.
	if n := mustEvict(t, s, 1); n != 1 {
		t.Fatalf("Evict(1) = %d, want 1", n)
	}
}

func TestAbort(t *testing.T) {
	s := openTemp(t, Options{})
	mustAdd(t, s, "a", 1, true)
	mustCommit(t, s, 0)
	mustAdd(t, s, "b", 2, true)
	mustEvict(t, s, 1)
	s.Abort()
	if got := rangeAll(t, s); got != "a=1;" || s.Len() != 1 {
		t.Fatalf("after Abort %q, Len %d", got, s.Len())
	}
	mustAdd(t, s, "b", 2, true)
	mustAdd(t, s, "a", 2, false)
}

func TestOpenCreates(t *testing.T) {
	parent := t.TempDir()
	for _, dir := range []string{
		filepath.Join(parent, "missing", "nested"),
		filepath.Join(parent, "empty"),
	} {
		if strings.HasSuffix(dir, "empty") {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, markerName)); err != nil {
			t.Fatal(err)
		}
	}
	// No temporary directory is left beside the stores.
	for _, d := range []string{parent, filepath.Join(parent, "missing")} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				t.Fatalf("left %s in %s", e.Name(), d)
			}
		}
	}
}

// snapshotDir lists every file under dir with its size and modification
// time, to prove a refused directory is left untouched.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestOpenRefusesForeign(t *testing.T) {
	bareDB := func(t *testing.T, dir string) {
		db, err := pebble.Open(dir, &pebble.Options{Logger: storeLogger{newShared(dir, Options{})}})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Set([]byte("k"), []byte("v"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir string)
		want    []string
	}{
		{"random-file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		}, []string{"not a pebblestore", "notes.txt"}},
		{"bare-pebble-db", bareDB, []string{"not a pebblestore", "no PEBBLESTORE file"}},
		{"bad-marker", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, markerName), []byte("something else"), 0o644)
		}, []string{filepath.Join("bad-marker", markerName), "not a pebblestore marker"}},
		{"marker-without-db", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, markerName), []byte(markerContent), 0o644)
		}, []string{"opening pebble"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.name)
			os.Mkdir(dir, 0o755)
			tc.prepare(t, dir)
			before := snapshotDir(t, dir)
			s, err := Open(dir, Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a foreign directory")
			}
			for _, w := range append(tc.want, dir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tc.name != "marker-without-db" {
				if after := snapshotDir(t, dir); after != before {
					t.Errorf("Open modified the directory:\nbefore\n%safter\n%s", before, after)
				}
			}
		})
	}
	t.Run("not-a-directory", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, nil, 0o644)
		if _, err := Open(file, Options{}); err == nil || !strings.Contains(err.Error(), file) {
			t.Fatalf("Open(file) = %v, want an error naming it", err)
		}
	})
	t.Run("metadata-key-missing", func(t *testing.T) {
		s := openTemp(t, Options{})
		dir := s.dir
		s.Close()
		db, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest, Logger: storeLogger{newShared(dir, Options{})}})
		if err != nil {
			t.Fatal(err)
		}
		// Every flush goes, with the metadata of the newest.
		db.DeleteRange([]byte{flushPrefix}, []byte{flushPrefix + 1}, pebble.Sync)
		db.Close()
		if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "no flush metadata") {
			t.Fatalf("Open = %v, want a missing metadata error", err)
		}
	})
	t.Run("already-open", func(t *testing.T) {
		s := openTemp(t, Options{})
		s2, err := Open(s.dir, Options{})
		if err == nil {
			s2.Close()
			t.Fatal("a store opened twice")
		}
		// The error says which folder is in use, in one line.
		if msg := err.Error(); !strings.Contains(msg, s.dir+": in use") || !strings.Contains(msg, filepath.Join(s.dir, "LOCK")) || strings.Contains(msg, "\n") {
			t.Fatalf("second Open = %q, want one line saying %s is in use", msg, s.dir)
		}
	})
}

func TestOptionsValidate(t *testing.T) {
	_, err := Open(t.TempDir(), Options{CacheSize: -1, MemTableSize: 5 << 30})
	if err == nil || !strings.Contains(err.Error(), "CacheSize") || !strings.Contains(err.Error(), "MemTableSize") {
		t.Fatalf("Open = %v, want both problems reported", err)
	}
}

// TestMemoryBudget opens stores with each way of sizing their memory and
// checks the block cache Pebble got and the overlay that makes a Commit
// flush: MemoryBudget split in halves, or what an explicit size leaves,
// with floors, and the defaults without it.
func TestMemoryBudget(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name           string
		opts           Options
		cache, overlay int64
	}{
		{"defaults", Options{}, DefaultCacheSize, int64(DefaultMemTableSize)},
		{"budget", Options{MemoryBudget: 48 * mib}, 24 * mib, 24 * mib},
		{"budget and cache", Options{MemoryBudget: 48 * mib, CacheSize: 8 * mib}, 8 * mib, 40 * mib},
		{"budget and overlay", Options{MemoryBudget: 48 * mib, MemTableSize: 8 * mib}, 40 * mib, 8 * mib},
		{"both set", Options{MemoryBudget: 48 * mib, CacheSize: 2 * mib, MemTableSize: 4 * mib}, 2 * mib, 4 * mib},
		{"tiny budget", Options{MemoryBudget: 1000}, minCacheSize, minMemTableSize},
		{"no budget", Options{CacheSize: 3 * mib}, 3 * mib, int64(DefaultMemTableSize)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTemp(t, c.opts)
			cache, overlay := s.MemorySizes()
			if cache != c.cache || overlay != c.overlay {
				t.Fatalf("MemorySizes = %d, %d, want %d, %d", cache, overlay, c.cache, c.overlay)
			}
			if got := s.popts.Cache.MaxSize(); got != c.cache {
				t.Fatalf("Pebble's block cache holds %d bytes, want %d", got, c.cache)
			}
		})
	}
	if _, err := Open(t.TempDir(), Options{MemoryBudget: -1}); err == nil || !strings.Contains(err.Error(), "MemoryBudget -1 is negative") {
		t.Fatalf("Open with a negative budget = %v", err)
	}
	// The overlay's share is what makes a Commit flush: 4000 keys fill
	// the 64 KiB overlay of a tiny budget, not the default one.
	for _, c := range []struct {
		opts    Options
		flushes bool
	}{{Options{MemoryBudget: 1000}, true}, {Options{}, false}} {
		s := openTemp(t, c.opts)
		for i := range 4000 {
			mustAdd(t, s, fmt.Sprintf("key-%d", i), int64(i), true)
		}
		mustCommit(t, s, 0)
		if err := s.waitFlush(); err != nil {
			t.Fatal(err)
		}
		if got := s.Metrics().Flushes > 0; got != c.flushes {
			t.Fatalf("%+v: flushed %v, want %v", c.opts, got, c.flushes)
		}
	}
}

// TestCheckpointBatches commits batches that add one key each, far too
// few to fill the overlay: a store flushes every CheckpointBatches batches
// all the same, which deletes the changelogs the flush covers, and a
// reopened store counts the changelogs it replayed towards the next one.
func TestCheckpointBatches(t *testing.T) {
	changelogs := func(s *Store) []int64 {
		t.Helper()
		if err := s.waitFlush(); err != nil {
			t.Fatal(err)
		}
		v, err := listChangelogs(s.fs, s.dir)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	opts := Options{CheckpointBatches: 5}
	s := openTemp(t, opts)
	for b := range int64(23) {
		mustAdd(t, s, fmt.Sprint("key-", b), b, true)
		mustCommit(t, s, b)
	}
	// Flushes at batches 4, 9, 14 and 19; 20, 21 and 22 in changelogs.
	if got, want := changelogs(s), []int64{21, 22, 23}; !slices.Equal(got, want) || s.Metrics().Flushes != 4 {
		t.Fatalf("changelogs of versions %v after %d flushes, want %v after 4", got, s.Metrics().Flushes, want)
	}
	before := rangeAll(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(s.dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := rangeAll(t, s); got != before {
		t.Fatalf("reopened:\n%s\nwant\n%s", got, before)
	}
	for b := int64(23); b < 25; b++ {
		mustAdd(t, s, fmt.Sprint("key-", b), b, true)
		mustCommit(t, s, b)
	}
	if got := changelogs(s); len(got) != 0 || s.Metrics().Flushes != 1 {
		t.Fatalf("reopened, two batches later: changelogs of versions %v after %d flushes, want none after 1", got, s.Metrics().Flushes)
	}
	// The default leaves 23 such batches in changelogs.
	d := openTemp(t, Options{})
	for b := range int64(23) {
		mustAdd(t, d, fmt.Sprint("key-", b), b, true)
		mustCommit(t, d, b)
	}
	if got := changelogs(d); len(got) != 23 || d.Metrics().Flushes != 0 {
		t.Fatalf("by default: %d changelogs after %d flushes, want 23 after none", len(got), d.Metrics().Flushes)
	}
	if _, err := Open(t.TempDir(), Options{CheckpointBatches: -1}); err == nil || !strings.Contains(err.Error(), "CheckpointBatches -1 is negative") {
		t.Fatalf("Open with CheckpointBatches -1 = %v", err)
	}
}

func TestClosed(t *testing.T) {
	s := openTemp(t, Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := s.Add([]byte("a"), 1); err == nil {
		t.Fatal("Add after Close succeeded")
	}
	if err := s.Commit(1); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Commit after Close = %v", err)
	}
}

func TestMetrics(t *testing.T) {
	s := openTemp(t, Options{})
	for i := range 1000 {
		if _, err := s.Add(fmt.Appendf(nil, "key-%d", i), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, s, 0)
	mustEvict(t, s, 499)
	mustCommit(t, s, 1)
	m := s.Metrics()
	if m.Commits != 2 || m.CommitBytes <= m.LastCommitBytes || m.LastCommitBytes <= 0 {
		t.Fatalf("commit counters %+v", m)
	}
	if m.DiskBytes == 0 || m.MemTableBytes == 0 {
		t.Fatalf("pebble sizes %+v", m)
	}
}

func TestAddDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes pools allocate")
	}
	s := openTemp(t, Options{})
	key := []byte("00000000-0000-0000-0000-000000000000")
	var num [20]byte
	i := 0
	add := func() {
		i++
		copy(key, strconv.AppendInt(num[:0], int64(i), 10))
		if _, err := s.Add(key, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	for range 20000 { // grow the batch, the overlay and Pebble's pools
		add()
	}
	mustCommit(t, s, 0)
	for range 20000 {
		add()
	}
	s.Abort() // keeps the grown buffers
	if a := testing.AllocsPerRun(5000, add); a > 0.05 {
		t.Errorf("Add of a new key: %.3f allocs", a)
	}
	i = 0 // keys 1..20000 are committed
	if a := testing.AllocsPerRun(5000, add); a > 0.05 {
		t.Errorf("Add of a present key: %.3f allocs", a)
	}
}

// TestAddBatchFromFlushesDoesNotAllocate checks the hot path once the keys
// live in flushes: AddBatch of keys that Pebble holds (a filter hit and a
// Get each) and of new keys (filter probes of every flush) allocates
// nothing per key.
func TestAddBatchFromFlushesDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes pools allocate")
	}
	s := openTemp(t, Options{MemTableSize: minMemTableSize})
	const n = 20000
	for b := range int64(20) {
		for i := range n / 20 {
			mustAdd(t, s, fmt.Sprintf("key-%08d", int(b)*n/20+i), 1000, true)
		}
		mustCommit(t, s, b)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if len(s.flushes) < 3 || s.ov.len() != 0 {
		t.Fatalf("%d flushes, %d keys in the overlay: want the keys in several flushes", len(s.flushes), s.ov.len())
	}
	const group = 64
	keys := make([]byte, 0, group*12)
	ends := make([]int32, group)
	exps := make([]int64, group)
	added := make([]bool, group)
	next := 0
	// fill writes the keys key-<first> to key-<first+group-1>, without
	// allocating.
	fill := func(first int) {
		keys = keys[:0]
		for i := range group {
			keys = append(keys, "key-00000000"...)
			for j, v := len(keys)-1, first+i; v > 0; j, v = j-1, v/10 {
				keys[j] = byte('0' + v%10)
			}
			ends[i] = int32(len(keys))
			exps[i] = 1000
		}
	}
	present := func() {
		fill(next % (n - group))
		next += group
		if err := s.AddBatch(keys, ends, exps, added); err != nil {
			t.Fatal(err)
		}
		if added[0] {
			t.Fatal("a stored key was added again")
		}
	}
	// Warm Pebble's pools and iterators, then measure without the fill.
	for range 50 {
		present()
	}
	fill(0)
	if a := testing.AllocsPerRun(200, func() {
		if err := s.AddBatch(keys, ends, exps, added); err != nil {
			t.Fatal(err)
		}
	}); a/group > 0.01 {
		t.Errorf("AddBatch of %d stored keys: %.2f allocs, %.3f a key", group, a, a/group)
	}
	if added[0] {
		t.Fatal("a stored key was added again")
	}
	// New keys, each run its own: every one probes the filters, and goes
	// into the overlay, the expiry index and the changelog, which grow in
	// chunks and doublings with the live keys (about 0.015 allocations a
	// key here, some of them Pebble's background work, which AllocsPerRun
	// counts too): not one a key.
	next = n
	if a := testing.AllocsPerRun(200, func() {
		fill(next)
		next += group
		if err := s.AddBatch(keys, ends, exps, added); err != nil {
			t.Fatal(err)
		}
		if !added[group-1] {
			t.Fatal("a new key was not added")
		}
	}); a/group > 0.05 {
		t.Errorf("AddBatch of %d new keys: %.2f allocs, %.3f a key", group, a, a/group)
	}
}

// The helper process of TestCommittedBatchSurvivesSIGKILL: commits
// killBatches batches, reporting each on stdout, starts one more without
// committing it, and waits to be killed.
const (
	killDirEnv  = "PEBBLESTORE_KILL_DIR"
	killBatches = 30
	killRows    = 20
)

func TestKillHelper(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("helper process of TestCommittedBatchSurvivesSIGKILL")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	for b := int64(1); ; b++ {
		for i := range killRows {
			if _, err := s.Add(fmt.Appendf(nil, "%d-%d", b, i), b); err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
		}
		if b > killBatches {
			fmt.Println("uncommitted")
			select {}
		}
		if _, err := s.Evict(b - 5); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		if err := s.Commit(b); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		fmt.Println("committed", b)
	}
}

// TestCommittedBatchSurvivesSIGKILL kills a process that has just committed
// (and then started another batch) and checks that the reopened store is
// exactly its last committed state.
func TestCommittedBatchSurvivesSIGKILL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
	cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "uncommitted" {
				done <- nil
				return
			}
		}
		done <- fmt.Errorf("helper ended without reaching the uncommitted batch")
	}()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		err = fmt.Errorf("helper timed out")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if id, ok := s.LastCommitted(); !ok || id != killBatches {
		t.Fatalf("LastCommitted = %d, %v, want %d", id, ok, killBatches)
	}
	// The last Evict was Evict(killBatches-5): five batches stay.
	want := 5 * killRows
	n := 0
	if err := s.Range(func(k []byte, exp int64) bool {
		b, _, _ := bytes.Cut(k, []byte("-"))
		if string(b) != strconv.FormatInt(exp, 10) || exp <= killBatches-5 || exp > killBatches {
			t.Fatalf("unexpected key %q expiring %d", k, exp)
		}
		n++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if n != want || s.Len() != want {
		t.Fatalf("%d keys, Len %d, want %d", n, s.Len(), want)
	}
}

// The helper process of TestKilledDuringAFlush: commits batches of keys
// that expire, until a background flush reaches the point named by
// killFlushStageEnv, where the flush goroutine stops; the main loop then
// commits nothing more, says so after its last "committed" line, and waits
// to be killed.
const (
	killFlushDirEnv   = "PEBBLESTORE_KILLFLUSH_DIR"
	killFlushStageEnv = "PEBBLESTORE_KILLFLUSH_STAGE"
)

func TestKillInFlushHelper(t *testing.T) {
	dir := os.Getenv(killFlushDirEnv)
	if dir == "" {
		t.Skip("helper process of TestKilledDuringAFlush")
	}
	stage := os.Getenv(killFlushStageEnv)
	reached := make(chan struct{})
	// Creating the store runs a flush too (flush 0, on this goroutine):
	// the hook is armed once Open has returned.
	var armed atomic.Bool
	opts := Options{MemTableSize: minMemTableSize, hook: func(point string) {
		if point == stage && armed.Load() {
			close(reached)
			select {}
		}
	}}
	s, err := Open(dir, opts)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	armed.Store(true)
	for b := int64(1); ; b++ {
		for i := range killRows {
			if _, err := s.Add(fmt.Appendf(nil, "%d-%d", b, i), b); err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
		}
		if _, err := s.Evict(b - 5); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		if err := s.Commit(b); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		fmt.Println("committed", b)
		// A flush this commit started either reaches the hook or ends
		// before the next batch: otherwise the next commit could start
		// a flush of its own, wait for this one, parked in the hook, and
		// never return (the changelog of a batch that was not reported
		// committed would then be durable).
		if s.job != nil {
			select {
			case <-reached:
			case <-s.job.done:
			}
		}
		select {
		case <-reached:
			fmt.Println("in flush")
			select {}
		default:
		}
	}
}

// TestKilledDuringAFlush kills a process whose background flush has
// written its sstables but not ingested them, or ingested them but not been
// installed (its changelogs not yet deleted): the reopened store is
// exactly the last committed batch, and the leftovers are gone.
func TestKilledDuringAFlush(t *testing.T) {
	for _, stage := range []string{"ingest", "ingested"} {
		t.Run(stage, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillInFlushHelper$")
			cmd.Env = append(os.Environ(), killFlushDirEnv+"="+dir, killFlushStageEnv+"="+stage)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			last := int64(-1)
			done := make(chan error, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					line := sc.Text()
					if n, ok := strings.CutPrefix(line, "committed "); ok {
						last, _ = strconv.ParseInt(n, 10, 64)
						continue
					}
					if line == "in flush" {
						done <- nil
						return
					}
					done <- fmt.Errorf("helper: %s", line)
					return
				}
				done <- fmt.Errorf("helper ended before a flush reached %s", stage)
			}()
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				err = fmt.Errorf("helper timed out")
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if stage == "ingest" {
				if staged, _ := os.ReadDir(filepath.Join(dir, stagingDir)); len(staged) == 0 {
					t.Fatal("no staged sstable: the kill did not happen in the flush")
				}
			}
			s, err := Open(dir, Options{MemTableSize: minMemTableSize})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if id, ok := s.LastCommitted(); !ok || id != last {
				t.Fatalf("LastCommitted = %d, %v, want %d", id, ok, last)
			}
			// The last Evict was Evict(last-5): five batches stay.
			want := 5 * killRows
			n := 0
			if err := s.Range(func(k []byte, exp int64) bool {
				b, _, _ := bytes.Cut(k, []byte("-"))
				if string(b) != strconv.FormatInt(exp, 10) || exp <= last-5 || exp > last {
					t.Fatalf("unexpected key %q expiring %d", k, exp)
				}
				n++
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if n != want || s.Len() != want {
				t.Fatalf("%d keys, Len %d, want %d", n, s.Len(), want)
			}
			if staged, _ := os.ReadDir(filepath.Join(dir, stagingDir)); len(staged) != 0 {
				t.Errorf("Open left %d staged sstables", len(staged))
			}
			// And it goes on: a flush, a reopen, the same state.
			before := rangeAll(t, s)
			if err := s.flush(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open(dir, Options{MemTableSize: minMemTableSize})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := rangeAll(t, s); got != before || s.Len() != want {
				t.Fatalf("after a flush and a reopen, Len %d and\n%s\nwant Len %d and\n%s", s.Len(), got, want, before)
			}
		})
	}
}

// TestWaitFlushCountsTheRunningFlush: a flush started by the last Commit
// runs in the background; WaitFlush makes it part of the store, so the
// metrics read after it no longer depend on how far it got (bench-stores
// reported 0 or 1 flushes for one scenario, run to run).
func TestWaitFlushCountsTheRunningFlush(t *testing.T) {
	s := openTemp(t, Options{CheckpointBatches: 5})
	for b := range int64(5) {
		mustAdd(t, s, fmt.Sprint("key-", b), b, true)
		mustCommit(t, s, b)
	}
	if err := s.WaitFlush(); err != nil {
		t.Fatal(err)
	}
	if m := s.Metrics(); m.Flushes != 1 || m.FlushBytes == 0 {
		t.Fatalf("after WaitFlush: %d flushes of %d bytes, want the one batch 4 started", m.Flushes, m.FlushBytes)
	}
	if err := s.WaitFlush(); err != nil {
		t.Fatalf("WaitFlush with no flush running: %v", err)
	}
}
