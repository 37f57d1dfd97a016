package interval

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseBytes parses a memory size: a number of bytes with an optional
// unit, binary (KiB, MiB, GiB, TiB; also Ki, Mi, Gi, Ti) or decimal (KB,
// MB, GB, TB), case-insensitive: "4GiB", "512MiB", "1.5GB", "1000000".
// The size must be above 0.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{
		"": 1, "b": 1,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
		"ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if mult == 0 || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("%q: want a size above 0 such as 512MiB, 4GiB or 2GB", s)
	}
	return int64(math.Round(v * mult)), nil
}
