package sim_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// engineFolders are the folders that serve one engine each. An engine's
// folders never import another engine's, so that each engine can be read,
// changed or removed alone.
var engineFolders = map[string][]string{
	"spark":         {"sim/spark", "engines/spark"},
	"flink":         {"sim/flink", "engines/flink"},
	"kafka-streams": {"sim/kstreams", "engines/kstreams"},
	"beam":          {"sim/beam", "engines/beam"},
}

// registered are the engines' front ends that only the registry (and the
// engine's own folders) may import: `simulate` reaches them through it.
var registered = []string{"sim/flink", "sim/kstreams", "sim/beam"}

// registry is the one package that maps engine names to their parts.
const registry = "sim/registry"

// TestEngineImports checks every import of every Go file of the module,
// tests included, against the engines' rules (engineFolders, registered)
// and lists each import that breaks them as "file: package -> import".
func TestEngineImports(t *testing.T) {
	root := moduleRoot(t)
	var bad []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		pkg := filepath.ToSlash(filepath.Dir(rel))
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			target, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(target, module+"/") {
				continue
			}
			target = strings.TrimPrefix(target, module+"/")
			if why := engineBreaks(pkg, target); why != "" {
				bad = append(bad, filepath.ToSlash(rel)+": "+pkg+" -> "+target+" ("+why+")")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestEngineBreaks pins the rules on imports that break them and on
// imports that keep them.
func TestEngineBreaks(t *testing.T) {
	for _, c := range []struct {
		pkg, target string
		breaks      bool
	}{
		{"sim/kstreams", "sim/beam", true},
		{"sim/beam", "engines/kstreams", true},
		{"engines/flink", "engines/beam", true},
		{"engines/spark", "engines/flink", true},
		{"sim/spark/replay", "sim/flink", true},
		{"sim/flink", "sim/spark/chain", true},
		{"cmd/simulate", "sim/flink", true},
		{"sim/runner", "sim/kstreams", true},
		{"sim/registry", "sim/beam", false},
		{"sim/registry", "sim/spark/replay", false},
		{"sim/kstreams", "engines/kstreams", false},
		{"sim/spark/replay", "sim/spark/chain", false},
		{"sim/flink", "sim/enginetrace", false},
		{"cmd/simulate", "sim/spark/chain", false},
		{"sim/flinkish", "sim/beamer", false},
	} {
		if got := engineBreaks(c.pkg, c.target) != ""; got != c.breaks {
			t.Errorf("%s -> %s: breaks %v, want %v", c.pkg, c.target, got, c.breaks)
		}
	}
}

// engineBreaks says why the package pkg may not import target under the
// engines' rules, or "".
func engineBreaks(pkg, target string) string {
	from, to := engineOf(pkg), engineOf(target)
	if from != "" && to != "" && from != to {
		return "the " + from + " folders never import the " + to + " folders"
	}
	for _, r := range registered {
		if within(target, r) && pkg != registry && from != to {
			return "only " + registry + " imports " + r
		}
	}
	return ""
}

// engineOf returns the engine whose folders hold pkg, or "".
func engineOf(pkg string) string {
	for engine, folders := range engineFolders {
		for _, f := range folders {
			if within(pkg, f) {
				return engine
			}
		}
	}
	return ""
}

// within reports whether pkg is folder or below it.
func within(pkg, folder string) bool {
	return pkg == folder || strings.HasPrefix(pkg, folder+"/")
}
