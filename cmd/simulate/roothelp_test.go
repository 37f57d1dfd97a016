package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/sim/registry"
)

// TestRootHelpNamesEveryEngine: `simulate --help` names every engine the
// registry knows, each with its summary, so that an engine added there
// shows up in the first help a user reads.
func TestRootHelpNamesEveryEngine(t *testing.T) {
	code, out, errs := simulate(t, "--help")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, e := range registry.Engines() {
		if !strings.Contains(out, e.Name) || !strings.Contains(out, e.Summary) {
			t.Errorf("simulate --help does not name engine %q with its summary %q:\n%s", e.Name, e.Summary, out)
		}
	}
}

// TestExitCodeFindsAWrappedCode: an exit code survives wrapping (a
// command that adds context with %w keeps compare's or plan's code).
func TestExitCodeFindsAWrappedCode(t *testing.T) {
	inner := &exitCodeError{code: 3, err: errors.New("no recommended delay")}
	for _, c := range []struct {
		err  error
		want int
	}{
		{inner, 3},
		{fmt.Errorf("plan: %w", inner), 3},
		{fmt.Errorf("outer: %w", fmt.Errorf("plan: %w", inner)), 3},
		{errors.Join(errors.New("first"), inner), 3},
		{errors.New("plain"), 1},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
