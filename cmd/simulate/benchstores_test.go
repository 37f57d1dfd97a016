package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchStores(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "cli.yaml")
	if err := os.WriteFile(sc, []byte(smallScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := simulate(t, "bench-stores", sc, "--quiet", "--seed", "9", "--out", out)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"sim speed", "recovery", "memory", "pebble", "identical results", "wall clock", "results: " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"stores.json", "stores.md", "stores.png", "summary.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(out, "stores.json")); !strings.Contains(string(data), `"seed": 9`) {
		t.Error("--seed 9 is not the seed of stores.json")
	}
	if data, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(data), "## State store backends") {
		t.Error("report.md lacks the store comparison")
	}
}

func TestBenchStoresErrorsAreOneLine(t *testing.T) {
	dir := t.TempDir()
	cases := [][]string{
		{"bench-stores"},
		{"bench-stores", filepath.Join(dir, "missing.yaml")},
		{"bench-stores", filepath.Join(dir, "missing.yaml"), "--bogus"},
	}
	for _, args := range cases {
		code, stdout, stderr := simulate(t, args...)
		if code == 0 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "simulate bench-stores: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one error line", args, code, stdout, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an error wrote %d files", len(entries))
	}
}
