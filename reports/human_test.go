package reports

import "testing"

// TestHugeDelaysPrintAsDays: a watermark delay of 106,752 days or more (past
// what a time.Duration holds) prints as days in the run table, the warnings
// and report.md, never as a wrapped negative duration (issue 33).
func TestHugeDelaysPrintAsDays(t *testing.T) {
	const day = 86_400.0
	d := 106_752 * day
	if got, want := formatDelay(&d), "106752d"; got != want {
		t.Errorf("formatDelay(106752 days) = %q, want %q", got, want)
	}
	cases := []struct {
		sec  float64
		want string
	}{
		{2*d + 10, "213504d"},
		{3 * (2*d + 10), "640512d"},
		{90, "1m30s"},
		{23*3600 + 40*60, "23h40m"},
		{6*day + 23*3600, "6d23h"},
		{day + 29*60, "1d"},
	}
	for _, c := range cases {
		if got := formatSpan(c.sec); got != c.want {
			t.Errorf("formatSpan(%v) = %q, want %q", c.sec, got, c.want)
		}
	}
}
