//go:build unix

package runner

import "syscall"

// raiseOpenFiles raises the soft limit on open files to want, or to the
// hard limit if that is lower, and returns the soft limit now in force.
func raiseOpenFiles(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur >= want {
		return lim.Cur, nil
	}
	raised := lim
	raised.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		return lim.Cur, nil
	}
	return raised.Cur, nil
}
