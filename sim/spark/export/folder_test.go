package export

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/spark/replay"
)

// readTree returns every file under dir, by path relative to it.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A seed fixes every byte of an export: two exports of one scenario, with
// faults, are the same files, byte for byte, in either format.
func TestExportIsDeterministic(t *testing.T) {
	for _, f := range []Format{Parquet, JSON} {
		sc := loadScenario(t, withFaults("  - {at: 1m, kind: restart}\n  - {at: 2m, kind: lose-checkpoint}\n"))
		a, _ := exportScenario(t, sc, f)
		b, _ := exportScenario(t, sc, f)
		ta, tb := readTree(t, a), readTree(t, b)
		if len(ta) < 20 || len(ta) != len(tb) {
			t.Fatalf("%s: %d and %d files", f, len(ta), len(tb))
		}
		for name, data := range ta {
			if !bytes.Equal(data, tb[name]) {
				t.Errorf("%s: %s differs between two exports of one scenario", f, name)
			}
		}
	}
}

// The export folder: absent, empty or an earlier export is written (an
// earlier export replaced whole); anything else is refused in one line,
// and left as it was; a failing export writes nothing.
func TestExportFolder(t *testing.T) {
	sc := loadScenario(t, fmt.Sprintf(small, "int"))
	ctx := context.Background()
	parent := t.TempDir()
	put := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(out, why string) {
		t.Helper()
		before := readTree(t, filepath.Dir(out))
		_, err := Scenario(ctx, sc, out, Options{})
		if err == nil || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: error %v, want one line with %q", out, err, why)
		}
		after := readTree(t, filepath.Dir(out))
		if len(after) != len(before) {
			t.Fatalf("%s: refused, but files changed beside it: %d files before, %d after", out, len(before), len(after))
		}
		for p, data := range before {
			if !bytes.Equal(after[p], data) {
				t.Fatalf("%s: refused, but %s changed", out, p)
			}
		}
	}

	foreign := filepath.Join(parent, "foreign", "out")
	put(filepath.Join(foreign, "notes.txt"), "mine")
	refused(foreign, "is not a dedupsim export")

	results := filepath.Join(parent, "results", "out")
	put(filepath.Join(results, ".dedupsim-results"), "a results folder")
	refused(results, "is not a dedupsim export")

	file := filepath.Join(parent, "file", "out")
	put(file, "a file")
	refused(file, "is a file")

	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Scenario(ctx, sc, empty, Options{}); err != nil {
		t.Fatalf("an empty folder: %v", err)
	}
	// A file dedupsim did not write is kept: the export is refused
	// naming it, and replaces the folder once it is removed (--force).
	put(filepath.Join(empty, "stale.txt"), "left by hand")
	if _, err := Scenario(ctx, sc, empty, Options{Format: JSON}); err == nil || !strings.Contains(err.Error(), "holds stale.txt, which dedupsim did not write") {
		t.Fatalf("an earlier export with a file of the user's: %v; want it refused naming stale.txt", err)
	}
	if gone, err := RemoveForeign(empty); err != nil || len(gone) != 1 || gone[0] != "stale.txt" {
		t.Fatalf("RemoveForeign = %q, %v; want stale.txt", gone, err)
	}
	if _, err := Scenario(ctx, sc, empty, Options{Format: JSON}); err != nil {
		t.Fatalf("an earlier export: %v", err)
	}
	tree := readTree(t, empty)
	if _, ok := tree["stale.txt"]; ok || tree[MarkerFile] == nil || tree[filepath.Join(batchesDir, "batch-000000000.json")] == nil {
		t.Errorf("the earlier export is not replaced whole: %d files, stale.txt kept %v", len(tree), tree["stale.txt"] != nil)
	}

	if _, err := Scenario(ctx, sc, filepath.Join(parent, "csv"), Options{Format: "csv"}); err == nil || !strings.Contains(err.Error(), `format: want parquet or json, got "csv"`) {
		t.Errorf("format csv: %v", err)
	}

	// A trace whose query Spark fails at its second batch: refused, after
	// the first batches were written to the staging folder, which goes.
	failing := filepath.Join(parent, "failing", "out")
	tr, err := replay.LoadFile("../replay/testdata/cases/own-error-redefining-watermark.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Trace(ctx, tr, "t.json", failing, Options{}); err == nil || !strings.Contains(err.Error(), "not exportable") {
		t.Fatalf("a failing query: %v", err)
	}
	for _, dir := range []string{filepath.Join(parent, "csv"), filepath.Dir(failing)} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("%s holds %d entries after a failed export", dir, len(entries))
			}
		}
	}
}
