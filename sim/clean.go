package sim

import "github.com/dedupsim/dedupsim/engines/fileio"

// CleanMessage makes an error message, which may echo what a user wrote
// (a query, a trace, a path), safe to print as one line: control
// characters escaped, long quoted values cut (fileio.Clean). Cleaning a
// clean message changes nothing. The command line prints every error
// through it, once.
func CleanMessage(msg string) string { return fileio.Clean(msg) }
