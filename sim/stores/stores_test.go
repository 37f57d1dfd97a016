package stores

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
)

// TestBackends opens every backend in a checkpoint folder, commits two
// batches, and reads the state back through Read and Resume at each
// version: the keys of that version, and Files naming what it is read
// from.
func TestBackends(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			be, err := Lookup(name, filepath.Join(root, "scratch"))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "state", "0")
			s, err := be.Open(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			for batch, keys := range [][]string{{"a", "b"}, {"c"}} {
				for _, k := range keys {
					if ok, err := s.Add([]byte(k), 10); err != nil || !ok {
						t.Fatalf("add %s: %v, %v", k, ok, err)
					}
				}
				if err := s.Commit(int64(batch)); err != nil {
					t.Fatal(err)
				}
			}
			if sn, ok := s.(interface{ Snapshot(int64) error }); ok {
				if err := sn.Snapshot(2); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			st, err := be.Read(dir, 2)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			st.Store.Range(func(k []byte, _ int64) bool { got = append(got, string(k)); return true })
			st.Store.Close()
			slices.Sort(got)
			if !slices.Equal(got, []string{"a", "b", "c"}) || !st.HasBatch || st.Batch != 1 {
				t.Errorf("Read at version 2: keys %v, batch %d (%v); want a, b, c at batch 1", got, st.Batch, st.HasBatch)
			}
			if files, err := be.Files(dir, 2); err != nil || len(files) == 0 {
				t.Errorf("Files at version 2: %v, %v", files, err)
			}
			r, err := be.Resume(dir, 2)
			if err != nil {
				t.Fatal(err)
			}
			if r.Len() != 3 {
				t.Errorf("Resume at version 2 holds %d keys, want 3", r.Len())
			}
			r.Close()
		})
	}
	if _, err := Lookup("redis", ""); err == nil || !strings.Contains(err.Error(), "want memory or pebble") {
		t.Errorf("an unknown backend: %v", err)
	}
}

// TestPebbleMemory checks that each Pebble store Lookup and LookupMemory
// open, new or resumed, gets the memory budget asked for, split in halves
// between its block cache and its overlay.
func TestPebbleMemory(t *testing.T) {
	for _, c := range []struct {
		memory int64
		half   int64
	}{{0, DefaultPebbleMemory / 2}, {8 << 20, 4 << 20}} {
		root := t.TempDir()
		be, err := LookupMemory(Pebble, filepath.Join(root, "scratch"), c.memory)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, "state")
		s, err := be.Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		check := func(how string, s engines.Store) {
			t.Helper()
			cache, overlay := s.(*pebblestore.Store).MemorySizes()
			if cache != c.half || overlay != c.half {
				t.Errorf("memory %d, %s: cache %d, overlay %d, want %d each", c.memory, how, cache, overlay, c.half)
			}
		}
		check("Open", s)
		if err := s.Commit(0); err != nil {
			t.Fatal(err)
		}
		if err := s.(engines.Snapshotter).Snapshot(1); err != nil {
			t.Fatal(err)
		}
		s.Close()
		r, err := be.Resume(dir, 1)
		if err != nil {
			t.Fatal(err)
		}
		check("Resume", r)
		r.Close()
		tmp, err := be.Open("", 0)
		if err != nil {
			t.Fatal(err)
		}
		check("Open without a folder", tmp)
		tmp.Close()
	}
	if _, err := LookupMemory(Pebble, "", -1); err == nil || !strings.Contains(err.Error(), "memory budget -1") {
		t.Errorf("a negative budget: %v", err)
	}
}
