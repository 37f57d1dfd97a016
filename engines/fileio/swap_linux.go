package fileio

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps two existing paths atomically (renameat2 RENAME_EXCHANGE).
// It reports errExchangeUnsupported when the file system cannot.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errExchangeUnsupported
	}
	return err
}

const nonblock = unix.O_NONBLOCK
