package main

import "context"

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
