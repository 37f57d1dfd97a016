package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func testKind() *Folder {
	return &Folder{Noun: "results folder", A: "a results folder", Ours: "dedupsim results folder", Example: "results/NAME",
		Marker: ".dedupsim-test", MarkerText: "written by dedupsim\n", StagingKind: "dedupsim-test-staging"}
}

// publishTo stages a folder of k at target holding files, and publishes it.
func publishTo(t *testing.T, k *Folder, target string, files ...string) error {
	t.Helper()
	st, err := k.Stage(target)
	if err != nil {
		return err
	}
	defer st.Discard()
	for _, f := range files {
		p := filepath.Join(st.Dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return st.Publish()
}

// TestForeignEntriesAreRefused: a user's own files inside a results folder
// (notes.txt, an analysis/ folder) were deleted without a word by the next
// publish into it. The marker now lists what dedupsim wrote; a folder
// holding anything else is refused in one line naming the first such
// entry, at Stage and again at Publish, and nothing is touched;
// RemoveForeign (--force) deletes exactly those entries.
func TestForeignEntriesAreRefused(t *testing.T) {
	k := testKind()
	out := filepath.Join(t.TempDir(), "out")
	if err := publishTo(t, k, out, "summary.json", "progress/q.jsonl"); err != nil {
		t.Fatal(err)
	}
	// Republishing what dedupsim wrote is fine.
	if err := publishTo(t, k, out, "summary.json", "progress/q.jsonl", "charts/a.png"); err != nil {
		t.Fatalf("republishing dedupsim's own folder: %v", err)
	}
	if f, err := k.Foreign(out); err != nil || len(f) != 0 {
		t.Fatalf("Foreign of a folder dedupsim wrote = %q, %v; want none", f, err)
	}

	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	os.MkdirAll(filepath.Join(out, "analysis", "deep"), 0o755)
	os.WriteFile(filepath.Join(out, "analysis", "deep", "x.ipynb"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(out, "progress", "mine.jsonl"), []byte("mine"), 0o644)

	err := k.Check(out)
	var fe *ForeignError
	if !errors.As(err, &fe) {
		t.Fatalf("Check = %v; want a *ForeignError", err)
	}
	if want := []string{"analysis/", "notes.txt", "progress/mine.jsonl"}; !slices.Equal(fe.Entries, want) {
		t.Fatalf("foreign entries %q, want %q", fe.Entries, want)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "holds analysis/ and 2 more, which dedupsim did not write") || !strings.Contains(msg, "--force") {
		t.Fatalf("message %q: want one line naming analysis/, the count of the others and --force", msg)
	}
	if err := publishTo(t, k, out, "summary.json"); !errors.As(err, &fe) {
		t.Fatalf("publishing over the user's files: %v; want a *ForeignError", err)
	}
	for _, f := range []string{"notes.txt", "analysis/deep/x.ipynb", "progress/mine.jsonl", "charts/a.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatalf("%s is gone after a refused publish: %v", f, err)
		}
	}

	// A file that appears between Stage and Publish is refused by
	// Publish's own check.
	st, err := k.Stage(filepath.Join(filepath.Dir(out), "late"))
	if err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(filepath.Dir(out), "late")
	if err := publishTo(t, k, late, "a"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(late, "mine"), nil, 0o644)
	if err := st.Publish(); !errors.As(err, &fe) {
		t.Fatalf("Publish over a file added after Stage: %v; want a *ForeignError", err)
	}
	st.Discard()

	gone, err := RemoveForeign(out, k)
	if err != nil || !slices.Equal(gone, []string{"analysis/", "notes.txt", "progress/mine.jsonl"}) {
		t.Fatalf("RemoveForeign = %q, %v", gone, err)
	}
	if err := k.Check(out); err != nil {
		t.Fatalf("Check after RemoveForeign: %v", err)
	}
	for _, f := range []string{"summary.json", "progress/q.jsonl", "charts/a.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatalf("RemoveForeign removed dedupsim's %s: %v", f, err)
		}
	}
	// RemoveForeign leaves alone a folder that is not of the kind.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644)
	if gone, err := RemoveForeign(other, k); gone != nil || err != nil {
		t.Fatalf("RemoveForeign of someone else's folder = %q, %v; want nothing", gone, err)
	}
	if _, err := os.Stat(filepath.Join(other, "notes.txt")); err != nil {
		t.Fatal("RemoveForeign touched someone else's folder")
	}
}

// TestPublishedFolderInsideIsOurs: experiments/regenerate.sh runs a
// scenario into results/capacity-plan and then plan --out
// results/capacity-plan/review; the next run refused the folder for
// holding review/. A folder published inside is dedupsim's while it holds
// the kind's marker and nothing foreign; a user's file inside it, or a
// folder with a copied marker beside the user's files, is foreign.
func TestPublishedFolderInsideIsOurs(t *testing.T) {
	k := testKind()
	out := filepath.Join(t.TempDir(), "out")
	if err := publishTo(t, k, out, "summary.json"); err != nil {
		t.Fatal(err)
	}
	if err := publishTo(t, k, filepath.Join(out, "review"), "report.md", "plan.json"); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(out); err != nil {
		t.Fatalf("Check with a published review/ inside: %v", err)
	}
	if err := publishTo(t, k, out, "summary.json", "timeseries.csv"); err != nil {
		t.Fatalf("republishing over a published review/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "review")); !os.IsNotExist(err) {
		t.Fatalf("review/ after the republish: %v; want it replaced with the folder", err)
	}
	if err := publishTo(t, k, filepath.Join(out, "review"), "report.md"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "review", "notes.txt"), []byte("mine"), 0o644)
	var fe *ForeignError
	if err := k.Check(out); !errors.As(err, &fe) || !slices.Equal(fe.Entries, []string{"review/"}) {
		t.Fatalf("Check with the user's notes inside review/: %v; want review/ foreign", err)
	}
	mine := filepath.Join(out, "mine")
	os.MkdirAll(mine, 0o755)
	data, _ := os.ReadFile(filepath.Join(out, k.Marker))
	os.WriteFile(filepath.Join(mine, k.Marker), data, 0o644) // a copied marker lists summary.json only
	os.WriteFile(filepath.Join(mine, "analysis.ipynb"), []byte("mine"), 0o644)
	if err := k.Check(out); !errors.As(err, &fe) || !slices.Contains(fe.Entries, "mine/") {
		t.Fatalf("Check with a folder of the user's holding a copied marker: %v; want mine/ foreign", err)
	}
}

// TestMarkerWithoutAListVouchesForTheFolder: a marker written before the
// list existed keeps meaning what it meant (the whole folder is dedupsim's).
func TestMarkerWithoutAListVouchesForTheFolder(t *testing.T) {
	k := testKind()
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, k.Marker), []byte(k.MarkerText), 0o644)
	os.WriteFile(filepath.Join(out, "summary.json"), nil, 0o644)
	if err := k.Check(out); err != nil {
		t.Fatal(err)
	}
}
