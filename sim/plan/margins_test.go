package plan

import (
	"strings"
	"testing"
	"time"
)

// TestMarginsTellAMissFromAMeet: a worst seed of 0.10146% against a 0.1%
// target must not print as "0.10% against 0.10%": the margins give the
// digits that show it over (strings derived by hand).
func TestMarginsTellAMissFromAMeet(t *testing.T) {
	d := 10 * time.Minute
	r := &Result{
		Targets:     Targets{MaxMissedRate: 0.001, MaxFalseDropRate: 0.0001},
		Recommended: &d,
		Seeds:       []SeedResult{{}, {}},
		Spread: Spread{
			MissedRate:    MinMedMax{Max: 0.0010146},
			FalseDropRate: MinMedMax{Max: 0.00009999},
		},
	}
	got := r.marginsText()
	for _, want := range []string{"missed duplicates 0.101% against 0.10%", "false drops 0.009999% against 0.010%"} {
		if !strings.Contains(got, want) {
			t.Errorf("margins %q do not say %q", got, want)
		}
	}
}
