package fileio

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileNoSync checks that the unsynced write replaces the file
// whole and leaves no temporary behind, and that IsTemp recognizes the
// temporaries Create makes, and nothing else.
func TestWriteFileNoSync(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "7")
	for _, content := range []string{"v1\n{}\n", "v1\n{\"a\":1}\n"} {
		if err := WriteFileNoSync(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != content {
			t.Fatalf("file holds %q, want %q", got, content)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want the file alone", len(entries))
	}
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if name := filepath.Base(f.Name()); !IsTemp(name) {
		t.Errorf("IsTemp(%q) = false for Create's temporary", name)
	}
	for _, name := range []string{"7", "metadata", "12.delta", ".hidden", "a.tmp", ".5.old-ab12"} {
		if IsTemp(name) {
			t.Errorf("IsTemp(%q) = true", name)
		}
	}
}

// TestIsCheckpointTemp checks that checkpoint readers skip the temporaries
// of both kinds, and nothing else.
func TestIsCheckpointTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".7.tmp-ab12cd34ef56": true, "7.tmp": true, "metadata.tmp": true, ".3.tmp": true,
		"7": false, "metadata": false, "12.delta": false, "tmp": false,
	} {
		if IsCheckpointTemp(name) != want {
			t.Errorf("IsCheckpointTemp(%q) = %v, want %v", name, !want, want)
		}
	}
}
