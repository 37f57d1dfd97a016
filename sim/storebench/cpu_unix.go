//go:build unix

package storebench

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used so far, user and
// system, every thread (getrusage RUSAGE_SELF); 0 where it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
