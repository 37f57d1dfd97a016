package reports

import (
	"math"
	"testing"
)

// TestLogTicksBetweenDecades: a log axis over four decades has a minor,
// unlabelled tick at 2 to 9 times each decade (so 3e-3 can be read), and
// over two decades 2 and 5 are labelled.
func TestLogTicksBetweenDecades(t *testing.T) {
	has := func(lo, hi, v float64, labelled bool) bool {
		for _, tk := range (logTicks{format: humanNumber}).Ticks(lo, hi) {
			if math.Abs(tk.Value-math.Log10(v)) < 1e-9 {
				return (tk.Label != "") == labelled
			}
		}
		return false
	}
	for _, v := range []float64{3e-3, 7e-2, 2e-4, 9e-1} {
		if !has(-4, 0, v, false) {
			t.Errorf("four decades: no unlabelled tick at %g", v)
		}
	}
	if !has(0, 2, 20, true) || !has(0, 2, 5, true) || !has(0, 2, 30, false) {
		t.Errorf("two decades: want 20 and 5 labelled, 30 a minor tick")
	}
	if !has(-4, 0, 1e-2, true) {
		t.Errorf("four decades: the decade 0.01 lost its label")
	}
}
