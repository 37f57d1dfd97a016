package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestHelpExamples runs every example line of every command's --help, as
// written, from the repository root, so that an example can never name a
// file that does not exist or a flag that was renamed. What an example
// writes goes to the test's folder instead: a path under /tmp/ is moved
// into it, a results folder an example names (results/NAME) is a copy of
// the committed one made there first, a run without --out gets one there,
// and progress bars are turned off. An example line may chain commands
// with &&; each must exit 0 (plan may also exit 2, "no recommended
// delay", which its help documents).
func TestHelpExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Chdir(root)
	cmds := newRootCmd(io.Discard, io.Discard).Commands()
	n := 0
	for _, c := range cmds {
		for _, line := range strings.Split(c.Example, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			for _, part := range strings.Split(line, "&&") {
				args := shellWords(t, part)
				if len(args) < 2 || args[0] != "simulate" {
					t.Fatalf("%s --help: example %q does not start with simulate COMMAND", c.Name(), part)
				}
				args = safeArgs(t, cmds, args[1:], root, tmp)
				start := time.Now()
				code, _, stderr := simulate(t, args...)
				t.Logf("%s (%.1fs)", strings.Join(args, " "), time.Since(start).Seconds())
				if code != 0 && !(args[0] == "plan" && code == exitNoPlan) {
					t.Errorf("%s --help: example %q exits %d: %s", c.Name(), strings.TrimSpace(part), code, stderr)
				}
				n++
			}
		}
	}
	if n < 15 {
		t.Fatalf("ran %d examples; every command should have some", n)
	}
}

// safeArgs rewrites an example's arguments so that it writes only into
// tmp (see TestHelpExamples).
func safeArgs(t *testing.T, cmds []*cobra.Command, args []string, root, tmp string) []string {
	t.Helper()
	i := slices.IndexFunc(cmds, func(c *cobra.Command) bool { return c.Name() == args[0] })
	if i < 0 {
		t.Fatalf("example of an unknown command %q", args[0])
	}
	c := cmds[i]
	out := []string{args[0]}
	hasOut := false
	for _, a := range args[1:] {
		switch {
		case strings.HasPrefix(a, "/tmp/"):
			a = filepath.Join(tmp, strings.TrimPrefix(a, "/tmp/"))
		case strings.HasPrefix(a, "results/"):
			a = copyResults(t, root, tmp, a)
		}
		hasOut = hasOut || a == "--out"
		out = append(out, a)
	}
	if c.Flags().Lookup("out") != nil && !hasOut {
		// The default results/<scenario name>, in tmp: the scenario files
		// are named after their scenario.
		name := strings.TrimSuffix(filepath.Base(args[1]), ".yaml")
		out = append(out, "--out", filepath.Join(tmp, "results", name))
	}
	if c.Flags().Lookup("quiet") != nil {
		out = append(out, "--quiet")
	}
	return fewerSeeds(t, out)
}

// longTests reports whether DEDUPSIM_LONG_TESTS asks for the examples as
// written, every seed of every plan (CI sets it): without it a plan
// example runs on one seed, which takes the same path at a fraction of
// the cost, so that the whole go test stays short on a busy machine.
func longTests() bool { return os.Getenv("DEDUPSIM_LONG_TESTS") != "" }

// fewerSeeds rewrites a plan example's --seeds to 1 (adding it when the
// example takes the default), unless longTests.
func fewerSeeds(t *testing.T, args []string) []string {
	if longTests() || len(args) == 0 || args[0] != "plan" {
		return args
	}
	for i, a := range args {
		if a == "--seeds" && i+1 < len(args) {
			if args[i+1] != "1" {
				t.Logf("plan example: --seeds %s run as --seeds 1 (DEDUPSIM_LONG_TESTS=1 runs it as written)", args[i+1])
			}
			args[i+1] = "1"
			return args
		}
	}
	t.Logf("plan example: run with --seeds 1 (DEDUPSIM_LONG_TESTS=1 runs it as written)")
	return append(args, "--seeds", "1")
}

// copyResults returns the folder in tmp standing for the results folder
// rel: a copy of the committed one, made the first time it is named
// (an earlier example may have written it there instead).
func copyResults(t *testing.T, root, tmp, rel string) string {
	t.Helper()
	dst := filepath.Join(tmp, rel)
	if _, err := os.Stat(dst); err == nil {
		return dst
	}
	src := filepath.Join(root, rel)
	if _, err := os.Stat(src); err != nil {
		return dst // a folder no results hold: the command says so
	}
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, r), 0o777)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, r), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// shellWords splits a command line as a shell does for the quoting the
// examples use: words separated by spaces, '...' and "..." quoting.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(ch)
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
