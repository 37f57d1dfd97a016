//go:build unix

package pebblestore

import (
	"syscall"
	"time"
)

// cpuTime is the user and system CPU time the process used so far, Pebble's
// background flushes and compactions included. On a shared machine it is a
// steadier measure than wall time, which also counts other processes.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
