//go:build !unix

package enginetest

import "time"

// processCPU is not measured on this platform: the cpu- metrics read 0.
func processCPU() time.Duration { return 0 }
