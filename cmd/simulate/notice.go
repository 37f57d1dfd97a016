package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// noticePrinter returns the run's notices printer: one line each on
// stderr, "notice: ...", from any job's goroutine.
func noticePrinter(stderr io.Writer) func(string) {
	var mu sync.Mutex
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(stderr, fileio.Clean("notice: "+msg))
	}
}
