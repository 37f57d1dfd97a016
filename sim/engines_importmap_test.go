package sim_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	simregistry "github.com/dedupsim/dedupsim/sim/registry"
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
	err := walkGoFiles(root, func(p, rel string) error {
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

// namesAllowed are the folders, besides the engines' own (engineFolders),
// whose code may name an engine: the registry maps the names to their
// parts, and everything else asks it.
var namesAllowed = []string{registry}

// TestNoEngineNamedOutsideItsFolders checks that no Go code outside the
// engines' folders and the registry names an engine other than Spark by a
// string literal (a switch case, a comparison, a map key): what the
// harness knows of an engine is sim/registry's (Harness), so adding an
// engine is one folder and one registration. Left out, knowingly: test
// files (their fixtures are scenarios and summaries of every engine),
// comments and longer strings (help text and messages that list the
// engines), and "spark", the default engine, whose micro-batch executor
// is the harness's own (the spark: block, Spark's folders).
func TestNoEngineNamedOutsideItsFolders(t *testing.T) {
	names := map[string]bool{}
	for _, e := range registryEngines() {
		if e != "spark" {
			names[e] = true
		}
	}
	if len(names) < 3 {
		t.Fatalf("the registry lists only %v", names)
	}
	root := moduleRoot(t)
	var bad []string
	err := walkGoFiles(root, func(p, rel string) error {
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if engineOf(pkg) != "" || slices.ContainsFunc(namesAllowed, func(f string) bool { return within(pkg, f) }) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		bad = append(bad, engineLiterals(fset, f, names, filepath.ToSlash(rel))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// engineLiterals lists the string literals of f (struct tags aside) that
// are an engine's name, as "file:line: "name"".
func engineLiterals(fset *token.FileSet, f *ast.File, names map[string]bool, file string) []string {
	var out []string
	tags := map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if fl, ok := n.(*ast.Field); ok && fl.Tag != nil {
			tags[fl.Tag] = true
		}
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || tags[lit] {
			return true
		}
		if v, err := strconv.Unquote(lit.Value); err == nil && names[v] {
			out = append(out, fmt.Sprintf("%s:%d: %s names an engine: ask sim/registry instead", file, fset.Position(lit.Pos()).Line, lit.Value))
		}
		return true
	})
	return out
}

// registryEngines returns the names of the engines the registry lists.
func registryEngines() []string {
	var out []string
	for _, e := range simregistry.Engines() {
		out = append(out, e.Name)
	}
	return out
}

// TestEngineLiterals pins what engineLiterals flags: a name in a
// comparison, a case or a map key, not in a struct tag or a longer text.
func TestEngineLiterals(t *testing.T) {
	src := `package p
type T struct{ E string ` + "`want:\"flink\"`" + ` }
func f(e string) string {
	if e == "beam" { return "x" }
	switch e { case "kafka-streams": }
	_ = map[string]int{"flink": 1}
	return "flink, beam or kafka-streams"
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := engineLiterals(fset, f, map[string]bool{"flink": true, "beam": true, "kafka-streams": true}, "p.go")
	want := []string{"p.go:4:", "p.go:5:", "p.go:6:"}
	if len(got) != len(want) {
		t.Fatalf("flagged %q, want lines 4, 5, 6", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("flagged %q, want %s...", got[i], want[i])
		}
	}
}
