package stores

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
