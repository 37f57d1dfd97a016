package main

import (
	"fmt"
	"github.com/dedupsim/dedupsim/sim/plan"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes parseSize accepts, longest first.
var sizeUnits = []struct {
	suffix string
	bytes  int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// maxSize is the largest size parseSize accepts.
const (
	maxSize     = 1 << 62
	maxSizeText = "4194304TiB"
)

// parseSize reads a flag's byte size: a whole number with an optional
// unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB). "" is 0 (the default).
func parseSize(flag, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	num, mult := strings.TrimSpace(v), int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil && num != "" && strings.TrimLeft(num, "0123456789") == "" && !strings.HasPrefix(num, "-"):
		// All digits, yet no int64: too large.
		return 0, fmt.Errorf("%s %s: too large: at most %s", flag, plan.ShowValue(v), maxSizeText)
	case err != nil:
		return 0, fmt.Errorf("%s %s: want a whole number with an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), such as 256MiB or 1GiB", flag, plan.ShowValue(v))
	case n <= 0:
		return 0, fmt.Errorf("%s %s: want a size above 0, such as 256MiB or 1GiB", flag, plan.ShowValue(v))
	case n > maxSize/mult:
		return 0, fmt.Errorf("%s %s: too large: at most %s", flag, plan.ShowValue(v), maxSizeText)
	}
	return n * mult, nil
}
