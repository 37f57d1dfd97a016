package reports

import (
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// TestSaturationAdviceIsADurationAScenarioHolds: a query saturated at a
// delay of 106,752 days was told to "run for 640513d (duration:
// 640513d)", a duration the scenario loader refuses. Advice past the
// longest duration a scenario holds says to shorten the horizon instead;
// advice within it is a duration the loader takes.
func TestSaturationAdviceIsADurationAScenarioHolds(t *testing.T) {
	for _, c := range []struct {
		name     string
		horizon  float64
		want     string
		parsable bool
	}{
		{"day", 2*86400 + 10, "(duration: 7d)", true},
		{"years", 2*106752*86400 + 10, "no duration resolves it", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, d := c.horizon, c.horizon/2
			s := &metrics.Summary{Windows: &metrics.Windows{TrafficEnd: 600},
				Queries: []metrics.QuerySummary{{Name: "q", Delay: &d, KeyHorizonSeconds: &h, Saturated: true}}}
			w := SaturationWarnings(s)
			if len(w) != 1 || !strings.Contains(w[0], c.want) || strings.Contains(w[0], "\n") {
				t.Fatalf("warnings %q: want one line with %q", w, c.want)
			}
			if c.parsable {
				i := strings.Index(w[0], "(duration: ")
				text := strings.TrimSuffix(w[0][i+len("(duration: "):], ")")
				if _, err := interval.Parse(text); err != nil {
					t.Fatalf("advised duration %q does not load: %v", text, err)
				}
			}
		})
	}
}
