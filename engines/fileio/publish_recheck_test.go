package fileio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testFolder is a folder kind for the publish tests.
func testFolder() *Folder {
	return &Folder{
		Noun: "results folder", A: "a results folder", Ours: "dedupsim results folder",
		Example: "results/NAME", Marker: ".test-marker", MarkerText: "test\n", StagingKind: "test",
	}
}

// TestPublishRechecksTheTargetUnderItsLock: Stage checked the target when
// nothing was there; a folder that someone else writes there afterwards
// (here before Publish) is refused by Publish's second check, under the
// publish lock, in one line naming the target: the foreign folder keeps
// its file, nothing of the staging folder lands in it. A folder of the
// kind (with its marker) written there meanwhile is replaced, and a file
// is refused.
func TestPublishRechecksTheTargetUnderItsLock(t *testing.T) {
	k := testFolder()
	target := filepath.Join(t.TempDir(), "out")

	s, err := k.Stage(target)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Discard()
	if err := os.WriteFile(filepath.Join(s.Dir, "summary.json"), []byte("ours\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(target, "notes.txt")
	if err := os.MkdirAll(target, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte("a user's notes\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	err = s.Publish()
	if err == nil || !strings.Contains(err.Error(), target) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Publish over a foreign folder written after Stage: %v; want one line refusing %s", err, target)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "a user's notes\n" {
		t.Fatalf("the foreign folder's file after Publish: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(target, "summary.json")); err == nil {
		t.Fatal("the staging folder's file landed in the foreign folder")
	}
	if _, err := os.Stat(filepath.Join(target, k.Marker)); err == nil {
		t.Fatal("the foreign folder got the marker")
	}
	s.Discard()

	// A file at the target: refused too.
	os.RemoveAll(target)
	s, err = k.Stage(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("a file\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(); err == nil || !strings.Contains(err.Error(), target) {
		t.Fatalf("Publish over a file written after Stage: %v", err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "a file\n" {
		t.Fatalf("the file after Publish: %q, %v", b, err)
	}
	s.Discard()

	// Our own kind of folder written meanwhile: replaced.
	os.Remove(target)
	s, err = k.Stage(target)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Discard()
	if err := os.WriteFile(filepath.Join(s.Dir, "summary.json"), []byte("new\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(target, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, k.Marker), []byte(k.MarkerText), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(); err != nil {
		t.Fatalf("Publish over a folder of its kind: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(target, "summary.json")); err != nil || string(b) != "new\n" {
		t.Fatalf("after Publish the target holds %q, %v; want the staged file", b, err)
	}
}
