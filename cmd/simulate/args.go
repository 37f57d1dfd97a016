package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/dedupsim/dedupsim/reports"
)

// oneArg accepts exactly one argument, and otherwise says in one line
// what the argument is and gives an example, instead of cobra's "accepts
// 1 arg(s), received 0".
func oneArg(what, example string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want %s, got %d arguments (e.g. %s)", what, len(args), example)
		}
		return nil
	}
}

// tableWidth is the width a table printed on stdout may take: the
// terminal's (reports.TerminalWidth when it cannot be read), or 0, no
// limit, when stdout is not a terminal, where a wrapped name would only
// break what a script or a log reads.
func tableWidth(stdout io.Writer) int {
	f, ok := stdout.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 40 {
		return w
	}
	return reports.TerminalWidth
}
