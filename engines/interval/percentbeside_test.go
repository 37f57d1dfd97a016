package interval

import "testing"

// TestPercentBeside: a rate beside its target prints differently from it
// whenever the two differ (expected strings worked out by hand).
func TestPercentBeside(t *testing.T) {
	for _, c := range []struct {
		r, target float64
		want      string
	}{
		{0.0010146, 0.001, "0.101%"},   // Percent alone gives 0.10%, which reads as the target
		{0.001, 0.001, "0.10%"},        // equal: Percent's form
		{0.0009999, 0.001, "0.09999%"}, // just under
		{0.0012, 0.001, "0.12%"},       // already different
		{0.10004, 0.1, "10.004%"},      // 10.0% beside 10.0%
		{0.0000123, 0.0001, "0.0012%"}, // far from the target
	} {
		if got := PercentBeside(c.r, c.target); got != c.want {
			t.Errorf("PercentBeside(%g, %g) = %q, want %q", c.r, c.target, got, c.want)
		}
	}
}
