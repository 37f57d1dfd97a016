//go:build !unix

package pebblestore

import "time"

// cpuTime is not measured on this platform; the CPU metrics read 0.
func cpuTime() time.Duration { return 0 }
