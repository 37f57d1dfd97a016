//go:build unix

package enginetest

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used.
// Benchmarks report it beside the wall clock because it does not count the
// time the process waits for a core, which is most of the noise on a
// shared machine; it does count the garbage collector's background work,
// which the wall clock hides on an idle second core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
