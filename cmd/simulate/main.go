// Command simulate is dedupsim's command line: it replays conformance
// traces, explains query chains, runs scenarios and sweeps, plans watermark
// delays and renders reports. Each subcommand parses its arguments and
// calls the library; errors surface here, in one place, as one line each.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err != nil {
		msg := strings.TrimSpace(err.Error())
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), msg)
		return exitCode(err)
	}
	return 0
}

// exitCodeError carries a specific exit code.
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string { return e.err.Error() }
func (e *exitCodeError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if e, ok := err.(*exitCodeError); ok {
		return e.code
	}
	return 1
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate Spark Structured Streaming deduplication against ground truth",
		Long: `simulate runs synthetic, duplicate-laden event streams through exact models of
Spark's streaming dedup operators (dropDuplicates and dropDuplicatesWithinWatermark)
and measures, against ground truth, what each query keeps in state, which
duplicates slip through and which real events it loses.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%v (see %s --help)", err, c.CommandPath())
	})
	root.AddCommand(
		newRunCmd(stdout, stderr),
		newSweepCmd(stdout, stderr),
		newReplayCmd(stdout),
		newExplainCmd(stdout),
		newReportCmd(stdout),
		newPlanCmd(stdout, stderr),
		newBenchStoresCmd(stdout, stderr),
		newStateCmd(stdout),
	)
	return root
}
