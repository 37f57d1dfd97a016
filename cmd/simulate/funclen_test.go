package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function of the command may span:
// longer ones are split by what they do (flags, input, cluster, output).
const maxFuncLines = 120

// TestCommandFunctionsAreShort checks every function of this package's
// non-test files against maxFuncLines (a command's help and examples are
// constants, not lines of its function).
func TestCommandFunctionsAreShort(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) < 10 {
		t.Fatalf("found %d Go files (%v)", len(files), err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s spans %d lines, more than %d: split it by what it does", name, fd.Name.Name, n, maxFuncLines)
			}
		}
	}
}
