package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/spark/export"
)

// addForceFlag registers --force on a command that writes a folder: a
// folder of dedupsim's that holds files dedupsim did not write is refused
// without it.
func addForceFlag(cmd *cobra.Command, force *bool) {
	cmd.Flags().BoolVar(force, "force", false, "delete what dedupsim did not write in the folder (files you added to an earlier one), saying what, and replace it; without it such a folder is refused")
}

// forceOut is --force: when force is set, it deletes from the folder out
// (a results folder, or an export folder when exportKind) every entry
// dedupsim did not write, and says on stderr what it deleted, in one line.
func forceOut(stderr io.Writer, force bool, out string, exportKind bool) error {
	if !force {
		return nil
	}
	remove := runner.RemoveForeign
	if exportKind {
		remove = export.RemoveForeign
	}
	gone, err := remove(out)
	if err != nil || len(gone) == 0 {
		return err
	}
	shown := gone
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(gone)-5)
	}
	names := make([]string, len(shown))
	for i, g := range shown {
		names[i] = fileio.Show(g)
	}
	fmt.Fprintf(stderr, "--force: deleted from %s what dedupsim did not write: %s%s\n", fileio.ShowPath(out), strings.Join(names, ", "), more)
	return nil
}

// defaultOutChecks checks the folder a command writes, out, once it is
// known (the default of an unset --out included): the --cpuprofile must not
// be inside it (main checks a given --out before the profile starts), and
// --force deletes what dedupsim did not write in it.
func defaultOutChecks(cmd *cobra.Command, force bool, out string, exportKind bool) error {
	if p := cmd.Flag("cpuprofile"); p != nil {
		if err := checkOutside("--out", out, "--cpuprofile", p.Value.String()); err != nil {
			return err
		}
	}
	return forceOut(cmd.ErrOrStderr(), force, out, exportKind)
}
