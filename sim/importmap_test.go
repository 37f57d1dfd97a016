package sim_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the module path of dedupsim.
const module = "github.com/dedupsim/dedupsim"

// folderImports is the one-way map of the top folders: which other top
// folders the packages of each may import. A package may always import
// the packages of its own folder, and the leaves.
var folderImports = map[string][]string{
	"cmd":        {"sim", "reports"},
	"sim":        {"generators", "engines", "metrics"},
	"metrics":    {"generators", "engines"},
	"reports":    {"metrics"},
	"generators": {},
	"engines":    {},
	"internal":   {"engines"},
}

// testOnly are the packages of test scaffolding: only test files (and
// the files built with the tag dedupsim_testhooks, cmd's test hooks)
// import them, from any folder.
var testOnly = map[string]bool{
	// The engines' benchmark workload and loops, shared with sim's
	// executor benchmark (which lives outside engines/).
	"internal/enginetest": true,
	// The runner's test hooks for other packages' tests (and cmd's hooks,
	// built only with the tag dedupsim_testhooks).
	"sim/runner/runnertest": true,
}

// testTag is the build tag of the files that hold cmd/simulate's test
// hooks: such a file may import the test scaffolding too.
const testTag = "//go:build dedupsim_testhooks"

// leaves are the packages every folder may import (they import nothing of
// the module but other leaves), except the folders listed against them,
// which reach them through the layers below instead.
var leaves = map[string][]string{
	// Durations, Spark's interval grammar, and the human form of counts,
	// sizes and rates, printed by every folder and so the same everywhere.
	"engines/interval": {},
	// cmd stages its own results folders (plan --out) and cleans the
	// messages it prints with fileio directly, not through shims in sim.
	// reports reaches it through metrics (whose staging it redraws in).
	"engines/fileio": {"reports", "generators"},
}

// TestImportMap checks every import of every Go file of the module, tests
// included, against the one-way map of the folders (folderImports) and
// lists each import that breaks it as "file: package -> import".
func TestImportMap(t *testing.T) {
	root := moduleRoot(t)
	var bad []string
	files := 0
	err := walkGoFiles(root, func(p, rel string) error {
		files++
		pkg := filepath.ToSlash(filepath.Dir(rel))
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		tagged := false
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				tagged = tagged || c.Text == testTag
			}
		}
		for _, im := range f.Imports {
			target, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			if target != module && !strings.HasPrefix(target, module+"/") {
				continue
			}
			target = strings.TrimPrefix(strings.TrimPrefix(target, module), "/")
			if testOnly[target] {
				if !strings.HasSuffix(p, "_test.go") && !tagged {
					bad = append(bad, filepath.ToSlash(rel)+": "+pkg+" -> "+target+" (test scaffolding: test files only)")
				}
				continue
			}
			if why := breaks(pkg, target); why != "" {
				bad = append(bad, filepath.ToSlash(rel)+": "+pkg+" -> "+target+" ("+why+")")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("found only %d Go files under %s", files, root)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// breaks says why the package pkg may not import target, or "".
func breaks(pkg, target string) string {
	folder := func(p string) string { f, _, _ := strings.Cut(p, "/"); return f }
	from, to := folder(pkg), folder(target)
	if _, ok := leaves[pkg]; ok {
		if _, leaf := leaves[target]; leaf && target != pkg {
			return ""
		}
		return "a leaf imports nothing of the module but other leaves"
	}
	if not, ok := leaves[target]; ok {
		if slices.Contains(not, from) {
			return from + " reaches " + path.Base(target) + " through the layers below"
		}
		return ""
	}
	if from == to {
		return ""
	}
	allowed, ok := folderImports[from]
	if !ok {
		return "folder " + from + " is not in the map"
	}
	if !slices.Contains(allowed, to) {
		return from + " may import only " + strings.Join(append([]string{from}, allowed...), ", ") + " and the leaves"
	}
	return ""
}

// moduleRoot returns the folder holding go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// TestSimRootHoldsNoCode checks that the root of sim/ holds only what
// every engine shares: its doc comment and the checks of the whole module
// (tests). An engine's code lives in the engine's folder (Spark's
// micro-batch executor in sim/spark/microbatch), the harness's in its own
// subfolder.
func TestSimRootHoldsNoCode(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(moduleRoot(t), "sim"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") {
			continue
		}
		if n != "doc.go" && !strings.HasSuffix(n, "_test.go") {
			t.Errorf("sim/%s: the root of sim/ holds only doc.go and the module's checks (tests); move it to the folder of what it serves", n)
		}
	}
}

// walkGoFiles calls visit for every Go file of the module below root
// (folders named testdata or results and hidden ones left out) with its
// path and its path relative to root.
func walkGoFiles(root string, visit func(p, rel string) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || n == "results" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return visit(p, rel)
	})
}
