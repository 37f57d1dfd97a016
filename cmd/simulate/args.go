package main

import (
	"fmt"

	"github.com/spf13/cobra"
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
