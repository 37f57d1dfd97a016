package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readme returns README.md with its line breaks as spaces, so that a
// sentence reads the same wherever it wraps.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(data)), " ")
}

// TestReadmeCountsReplayTraces: the README's counts of replay traces are
// the files': the conformance traces not named own-... are ported from
// Spark's tests, the own-... ones and every case are our own.
func TestReadmeCountsReplayTraces(t *testing.T) {
	conf, _ := filepath.Glob("../../sim/spark/replay/testdata/conformance/*.json")
	cases, _ := filepath.Glob("../../sim/spark/replay/testdata/cases/*.json")
	own := 0
	for _, f := range conf {
		if strings.HasPrefix(filepath.Base(f), "own-") {
			own++
		}
	}
	ported := len(conf) - own
	want := "pinned by " + strconv.Itoa(ported) + " replay traces ported from Spark's own test suites and " +
		strconv.Itoa(own+len(cases)) + " of our own: " + strconv.Itoa(own) + " beside them in `sim/spark/replay/testdata/conformance` (named `own-...`) and " +
		strconv.Itoa(len(cases)) + " in `sim/spark/replay/testdata/cases`"
	if !strings.Contains(readme(t), want) {
		t.Errorf("README.md does not say %q", want)
	}
}

// TestReadmeRowsInScope: the README's rows in scope of the model's
// accuracy are docs/model-accuracy.md's.
func TestReadmeRowsInScope(t *testing.T) {
	doc, err := os.ReadFile("../../docs/model-accuracy.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Over the (\d+) rows in scope`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/model-accuracy.md gives no rows in scope")
	}
	if want := "over the " + string(m[1]) + " rows in scope"; !strings.Contains(readme(t), want) {
		t.Errorf("README.md does not say %q, as docs/model-accuracy.md does", want)
	}
}

// TestReadmeUpdateCommand: the README's command that rewrites golden
// files names exactly the packages whose tests define -update (go test
// fails in a package that does not).
func TestReadmeUpdateCommand(t *testing.T) {
	decl := "flag.Bool(" + strconv.Quote("update") // split, so that this file does not match
	var have []string
	filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(data), decl) {
			have = append(have, "./"+filepath.ToSlash(filepath.Dir(strings.TrimPrefix(p, "../../"))))
		}
		return err
	})
	slices.Sort(have)
	have = slices.Compact(have)
	m := regexp.MustCompile(`go test ((?:\./[\w/]+ )+)-update `).FindStringSubmatch(readme(t))
	if m == nil {
		t.Fatal("README.md has no `go test PKG... -update` command")
	}
	got := strings.Fields(m[1])
	slices.Sort(got)
	if !slices.Equal(got, have) {
		t.Errorf("README.md's -update command names %v; the packages with -update are %v", got, have)
	}
}
