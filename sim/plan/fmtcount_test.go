package plan

import (
	"math"
	"testing"
)

// TestFmtCountExtremes: negating math.MinInt64 overflows, so the sign
// fmtCount took by negating came out twice ("--9,223,...").
func TestFmtCountExtremes(t *testing.T) {
	for v, want := range map[float64]string{
		math.MinInt64: "-9,223,372,036,854,775,808",
		-1234567:      "-1,234,567",
		1234.4:        "1,234",
		math.Inf(1):   "unbounded",
	} {
		if got := fmtCount(v); got != want {
			t.Errorf("fmtCount(%v) = %q, want %q", v, got, want)
		}
	}
}
