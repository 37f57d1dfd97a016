package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

func TestCheckReplaceable(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, files ...string) string {
		p := filepath.Join(dir, name)
		os.Mkdir(p, 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(p, f), []byte("x"), 0o644)
		}
		return p
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(mk("ours-target", MarkerFile), link)
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(dir, "absent"), true},
		{mk("empty"), true},
		{mk("ours", MarkerFile, "summary.json"), true},
		{mk("theirs", "summary.json"), false},
		{mk("marker-is-a-folder"), false},
		{file, false},
		{link, false},
		{"/", false},
	} {
		if c.path == filepath.Join(dir, "marker-is-a-folder") {
			os.Mkdir(filepath.Join(c.path, MarkerFile), 0o755)
		}
		err := CheckReplaceable(c.path)
		if (err == nil) != c.ok {
			t.Errorf("CheckReplaceable(%s) = %v, want ok=%v", c.path, err, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
}

func TestStageSweepsOnlyDeadStagingFolders(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "res")
	live, err := Stage(target)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Discard()
	// A killed run's staging folder: its lock file is free.
	dead := fileio.TempName(target, resultsFolder().StagingKind)
	os.Mkdir(dead, 0o755)
	os.WriteFile(dead+".lock", []byte("999999\n"), 0o644)
	next, err := Stage(target)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Discard()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead staging folder survived the next Stage: %v", err)
	}
	if _, err := os.Stat(live.Dir); err != nil {
		t.Errorf("a live staging folder was swept: %v", err)
	}
	os.WriteFile(filepath.Join(next.Dir, "summary.json"), []byte("{}"), 0o644)
	if err := next.Publish(); err != nil {
		t.Fatal(err)
	}
	if !IsResultsFolder(target) {
		t.Errorf("published folder has no marker")
	}
	live.Discard()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries left, want the results folder only", len(entries))
	}
}
