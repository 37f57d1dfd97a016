package scenario

import (
	"strings"
	"testing"
)

// TestDowntimeBadInputOneLineEach: each bad span of spark.downtime is one
// line naming the file, the key path and what was expected; a good one
// loads, and shows in the resolved scenario.
func TestDowntimeBadInputOneLineEach(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{"spark: {downtime: [{at: 0s, for: 10s}]}", "scenario s.yaml: spark.downtime[0].at: must be above 0, got 0s"},
		{"spark: {downtime: [{at: 20s, for: 0s}]}", "scenario s.yaml: spark.downtime[0].for: must be above 0, got 0s"},
		{"spark: {downtime: [{at: 5s, for: 10s}]}", "scenario s.yaml: spark.downtime[0].at: must be at least the trigger, 10s (the query's first batch runs there), got 5s"},
		{"spark: {downtime: [{at: 50s, for: 20s}]}", "scenario s.yaml: spark.downtime[0].for: must end within the duration, 1m: at 50s plus 20s ends at 1m10s"},
		{"spark: {downtime: [{at: 20s, for: 20s}, {at: 30s, for: 5s}]}", "scenario s.yaml: spark.downtime[1].at: must be at or after the end of the span before it (40s), got 30s: spans go in time order, without overlapping"},
		{"spark: {downtime: [{at: 20s}]}", "scenario s.yaml: spark.downtime[0].for: must be set to a duration such as 30m, got nothing"},
		{"spark: {downtime: [{at: 20s, for: soon}]}", "scenario s.yaml: spark.downtime[0].for: must be a duration such as 90s, 20m, 1h30m, 7d or \"20 minutes\", got soon"},
	} {
		_, err := Parse([]byte(sparkBase+c.block+"\n"), "s.yaml")
		if err == nil {
			t.Errorf("%s: accepted", c.block)
			continue
		}
		if got := err.Error(); got != c.want || strings.Contains(got, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.block, got, c.want)
		}
	}
	s, err := Parse([]byte(sparkBase+"spark: {downtime: [{at: 20s, for: 20s}, {at: 40s, for: 10s}]}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Spark.Downtime) != 2 || s.Spark.Downtime[1].At.Micros() != 40e6 || s.Spark.Downtime[1].For.Micros() != 10e6 {
		t.Errorf("downtime %+v; want 20s for 20s, then 40s for 10s", s.Spark.Downtime)
	}
}
