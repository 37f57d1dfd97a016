//go:build !linux

package fileio

import "syscall"

func exchange(a, b string) error { return errExchangeUnsupported }

const nonblock = syscall.O_NONBLOCK
