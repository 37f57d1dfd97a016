package oatable

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// backwardShift matches the test of backward-shift deletion, "(j-home)
// & mask >= (j-i) & mask" however its names are spelled: the line a
// second copy of the table would carry.
var backwardShift = regexp.MustCompile(`\(\s*\w+\s*-\s*\w*home\w*\s*\)\s*&\s*[\w.]*mask`)

// TestOneCopyOfTheTable: no Go file of the module outside this package
// carries the backward-shift deletion: the stores' hash tables are this
// one (engines/memstore and engines/flink carried a copy each before).
func TestOneCopyOfTheTable(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p == self || (p != root && (n == "testdata" || n == "results" || strings.HasPrefix(n, "."))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if loc := backwardShift.FindIndex(b); loc != nil {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s carries a backward-shift deletion (%q): use engines/internal/oatable", rel, b[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files under %s: the walk missed the module", files, root)
	}
	if !backwardShift.MatchString("if (j-home)&t.mask >= (j-i)&t.mask {") {
		t.Fatal("the pattern does not match this package's own line")
	}
}
