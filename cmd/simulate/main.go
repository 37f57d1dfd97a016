// Command simulate is dedupsim's command line: it replays conformance
// traces, explains query chains, runs scenarios and sweeps, plans watermark
// delays and renders reports. Each subcommand parses its arguments and
// calls the library; errors surface here, in one place, as one line each.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/sim/registry"
)

func main() {
	ctx, stop := withSignals(context.Background())
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// withSignals returns a context cancelled, with the signal as its cause,
// at the first SIGINT or SIGTERM. After that first signal the default
// handling returns, so a second Ctrl-C kills at once.
func withSignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(&signalError{sig: sig.(syscall.Signal)})
			stopAnyway(done, sig.(syscall.Signal))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// signalGrace is how long a command may take to stop after the first
// SIGINT or SIGTERM before the process ends anyway.
const signalGrace = 5 * time.Second

// stopAnyway ends the process, 128 plus sig, when the command has not
// returned (done not closed) signalGrace after the signal: a job waiting
// on something that never returns (a Pebble flush stuck in its write
// stall) ignored the first SIGTERM. Ending here is a kill -9 at a
// moment of the process's choosing: every checkpoint is resumable after
// one, and a staging folder left behind is removed by the next run.
func stopAnyway(done <-chan struct{}, sig syscall.Signal) {
	select {
	case <-done:
	case <-time.After(signalGrace):
		fmt.Fprintf(os.Stderr, "simulate: interrupted; still stopping after %v (waiting on a state store?): exiting now (a checkpoint resumes as after kill -9)\n", signalGrace)
		os.Exit(128 + int(sig))
	}
}

// signalError is the cause of a context cancelled by a signal.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return "interrupted" }

// run executes the command line and returns the process exit code. A
// command stopped by a signal prints "interrupted" and returns 128 plus
// the signal's number (130 for SIGINT), as shells do.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	var prof profiler
	prof.addFlag(root)
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		// A profile inside the folder a command writes (run, sweep,
		// merge, plan, export, bench-stores: every --out) would be lost
		// when the folder is replaced: refuse it before creating it.
		if out := c.Flags().Lookup("out"); out != nil && out.Changed && out.Value.String() != "" {
			if err := checkOutside("--out", out.Value.String(), "--cpuprofile", prof.path); err != nil {
				return err
			}
		}
		// report DIR replaces DIR as --out does: a profile in it would
		// be refused as a foreign file, or deleted by --force.
		if c.Name() == "report" && len(args) == 1 && args[0] != "" {
			if err := checkOutside("report's folder", args[0], "--cpuprofile", prof.path); err != nil {
				return err
			}
		}
		return prof.start()
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if perr := prof.stop(); err == nil {
		err = perr
	}
	if err != nil {
		var se *signalError
		if errors.As(context.Cause(ctx), &se) {
			fmt.Fprintf(stderr, "%s: interrupted\n", cmd.CommandPath())
			return 128 + int(se.sig)
		}
		// One line per problem (a scenario reports every problem at
		// once, one per line), each made safe to print: control
		// characters escaped, long quoted values cut.
		for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), fileio.Clean(line))
			}
		}
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
	if e := (*exitCodeError)(nil); errors.As(err, &e) {
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
and of the other engines' dedups, and measures, against ground truth, what each
query keeps in state, which duplicates slip through and which real events it
loses. The engines (a query or trace of any but Spark names its engine with an
"engine" key):

` + registry.Describe(),
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
		newMergeCmd(stdout, stderr),
		newReplayCmd(stdout),
		newExplainCmd(stdout),
		newReportCmd(stdout),
		newPlanCmd(stdout, stderr),
		newBenchStoresCmd(stdout, stderr),
		newStateCmd(stdout),
		newExportCmd(stdout),
		newCompareCmd(stdout),
		newCalibrateCmd(stdout),
		newFitCmd(stdout, stderr),
	)
	return root
}
