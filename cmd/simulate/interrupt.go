package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// interruptible runs work and returns its error, or ctx's error as soon as
// ctx is done (the first Ctrl-C or SIGTERM, see withSignals), without
// waiting for work: the process then exits with 130 or 143 and work ends
// with it. It is for commands whose library calls take no context and
// either write nothing (state, compare) or replace what they write in one
// atomic step that a kill at any moment leaves whole (report).
func interruptible(ctx context.Context, work func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// secondSignalEnds returns a context cancelled by the first SIGINT or
// SIGTERM, as withSignals does; a second signal ends the process at once
// with 128 plus its number, for work whose cancellation takes a while (a
// plan waits for the simulations it runs to stop). What an abrupt end
// leaves is what a kill leaves: every folder as it was, staging aside.
func secondSignalEnds(parent context.Context, stderr io.Writer) (context.Context, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	ctx, stop := onSignals(parent, ch, stderr, os.Exit)
	return ctx, func() {
		signal.Stop(ch)
		stop()
	}
}

// onSignals is secondSignalEnds over the signals of ch, ending the
// process with exit.
func onSignals(parent context.Context, ch <-chan os.Signal, stderr io.Writer, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		first := true
		for {
			select {
			case sig := <-ch:
				s, _ := sig.(syscall.Signal)
				if first {
					first = false
					fmt.Fprintln(stderr, "interrupting: stopping the running simulations (again to end at once)")
					cancel(&signalError{sig: s})
					continue
				}
				fmt.Fprintln(stderr, "interrupted")
				exit(128 + int(s))
				return
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}
