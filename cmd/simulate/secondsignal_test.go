package main

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"
)

// TestSecondSignalEndsAtOnce: the first signal cancels the work's context
// and nothing exits; the second ends the process with 128 plus its
// number (here a recorded exit, not the test's).
func TestSecondSignalEndsAtOnce(t *testing.T) {
	ch := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var stderr bytes.Buffer
	ctx, stop := onSignals(context.Background(), ch, &stderr, func(code int) { exited <- code })
	defer stop()
	ch <- syscall.SIGINT
	<-ctx.Done()
	select {
	case code := <-exited:
		t.Fatalf("exit %d after the first signal", code)
	default:
	}
	ch <- syscall.SIGINT
	if code := <-exited; code != 130 {
		t.Errorf("exit %d after the second SIGINT, want 130", code)
	}
}
