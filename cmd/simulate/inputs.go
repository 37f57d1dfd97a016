package main

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// cleanError is an error whose message may echo what the user wrote (a
// query, a trace, a path), made safe to print as one line: control
// characters escaped, long quoted values cut (fileio.Clean). It unwraps to
// the original error.
type cleanError struct{ err error }

func (e *cleanError) Error() string { return fileio.Clean(e.err.Error()) }
func (e *cleanError) Unwrap() error { return e.err }

// cleaned wraps err in a cleanError; nil stays nil.
func cleaned(err error) error {
	if err == nil {
		return nil
	}
	return &cleanError{err: err}
}

// readInput reads a file the user named on the command line: a regular
// file of at most limit bytes, refusing a FIFO or a device before opening
// it. Its error names the file once: "FILE: why".
func readInput(path string, limit int64) ([]byte, error) {
	data, err := fileio.ReadFile(path, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, fileio.Reason(err))
	}
	return data, nil
}
