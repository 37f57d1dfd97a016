package main

import (
	"io"
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
