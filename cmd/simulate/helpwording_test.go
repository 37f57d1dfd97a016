package main

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagHelpStatesDefaultsOnce checks that no flag's help says its
// default in words and has cobra print "(default X)" after it too, which
// read "(default: the scenario's spark: block, else 1) (default 1)".
func TestFlagHelpStatesDefaultsOnce(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	cmds := append(root.Commands(), root)
	n := 0
	for _, c := range cmds {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			n++
			if !strings.Contains(f.Usage, "(default") {
				return
			}
			switch f.DefValue {
			case "", "0", "false", "[]", "0s":
				return
			}
			t.Errorf("%s --%s: the help says %q and cobra adds (default %s)", c.Name(), f.Name, f.Usage, f.DefValue)
		})
	}
	if n == 0 {
		t.Fatal("no flags visited")
	}
}

// TestPlanHelpSaysOneThingOfScaling checks that plan's help does not say
// both that state is scaled to --production-rate and that nothing is
// scaled: it is simulated at that rate.
func TestPlanHelpSaysOneThingOfScaling(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	for _, c := range root.Commands() {
		if c.Name() != "plan" {
			continue
		}
		var b strings.Builder
		c.SetOut(&b)
		c.SetErr(&b)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		help := b.String()
		if strings.Contains(help, "scaled to it") {
			t.Errorf("plan --help says state is scaled to --production-rate; it is simulated there:\n%s", help)
		}
		if !strings.Contains(help, "never scaled") && !strings.Contains(help, "nothing is scaled") {
			t.Errorf("plan --help no longer says that nothing is scaled after the fact")
		}
		return
	}
	t.Fatal("no plan command")
}

// TestReadmeOpeningCommands checks the README's two opening commands: the
// main job writes outside the committed results/ (a new user's first run
// must not rewrite tracked files), and the test line does not chain the
// oracles behind go test with &&, so that a failing go test does not hide
// whether the real engines agree.
func TestReadmeOpeningCommands(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	inBlock := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "```") {
			if inBlock {
				break
			}
			inBlock = true
			continue
		}
		if inBlock {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("the README opens with %d commands, want 2 (the main job and the tests): %q", len(lines), lines)
	}
	job := strings.Fields(strings.SplitN(lines[0], "#", 2)[0])
	i := slices.Index(job, "--out")
	if i < 0 || i+1 >= len(job) || strings.HasPrefix(job[i+1], "results/") {
		t.Errorf("the main job %q must name --out outside the committed results/", lines[0])
	}
	tests := strings.SplitN(lines[1], "#", 2)[0]
	if !strings.Contains(tests, "go test") || !strings.Contains(tests, "oracles/run") {
		t.Errorf("the test line %q must run go test and oracles/run", lines[1])
	}
	if strings.Contains(tests, "&&") {
		t.Errorf("the test line %q chains the oracles behind go test: a failing go test hides them", lines[1])
	}
}

// TestMissingArgumentSaysWhat checks that every command that takes
// arguments, given none, says in one line what it wants with an example,
// never cobra's "accepts 1 arg(s), received 0".
func TestMissingArgumentSaysWhat(t *testing.T) {
	for _, c := range newRootCmd(io.Discard, io.Discard).Commands() {
		if c.Args == nil || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		code, _, stderr := simulate(t, c.Name())
		line := strings.TrimSpace(stderr)
		if code == 0 || strings.Contains(line, "accepts") || !strings.Contains(line, "want") || !strings.Contains(line, "e.g. simulate") || strings.Contains(line, "\n") {
			t.Errorf("simulate %s with no argument: exit %d, %q; want one line saying what it wants, with an example", c.Name(), code, stderr)
		}
	}
}

// TestPlanWarnsOfABareShareAboveOnePercent: --max-missed-rate 0.1 is 10%;
// a bare fraction above 1% gets a warning, a percentage or a small
// fraction none. (The query named is absent, so plan stops right after.)
func TestPlanWarnsOfABareShareAboveOnePercent(t *testing.T) {
	for _, c := range []struct {
		flag, value string
		warn        bool
	}{
		{"--max-missed-rate", "0.1", true},
		{"--max-false-drop-rate", "0.05", true},
		{"--max-missed-rate", "0.1%", false},
		{"--max-missed-rate", "0.01", false},
		{"--max-false-drop-rate", "0.0001", false},
	} {
		_, _, stderr := simulate(t, "plan", "../../experiments/capacity-plan.yaml", "--query", "no-such-query", c.flag, c.value)
		got := strings.Contains(stderr, "warning: "+c.flag+" "+c.value+" is a fraction")
		if got != c.warn {
			t.Errorf("plan %s %s: warned %v, want %v; stderr %q", c.flag, c.value, got, c.warn, stderr)
		}
	}
}

// TestDocsClaims checks sentences of the docs that were found wrong once:
// each pattern must not come back.
func TestDocsClaims(t *testing.T) {
	for _, c := range []struct{ file, bad, why string }{
		{"../../docs/scenario.md", "bytes 0 (not modelled), and", "Flink's state bytes are modelled (docs/flink.md, State bytes)"},
		{"../../README.md", "with one command (about a minute)", "regenerating every committed result takes far longer than a minute"},
	} {
		data, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(strings.Fields(string(data)), " "), c.bad) {
			t.Errorf("%s says %q: %s", c.file, c.bad, c.why)
		}
	}
}
