package reports

import (
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// TestFormatHorizon: a query's horizon by its own name, never "delay
// none" for a query that forgets.
func TestFormatHorizon(t *testing.T) {
	ten, twenty := 600.0, 1200.0
	for _, c := range []struct {
		q    metrics.QuerySummary
		want string
	}{
		{metrics.QuerySummary{Delay: &ten}, "10m"},
		{metrics.QuerySummary{}, "none"},
		{metrics.QuerySummary{Engine: "flink", Horizon: &metrics.Horizon{Name: "TTL", Seconds: &ten}}, "TTL 10m"},
		{metrics.QuerySummary{Engine: "flink", Horizon: &metrics.Horizon{Name: "TTL"}}, "TTL none"},
		{metrics.QuerySummary{Engine: "kafka-streams", Horizon: &metrics.Horizon{Name: "W", Seconds: &twenty}}, "W 20m"},
		{metrics.QuerySummary{Engine: "beam", Horizon: &metrics.Horizon{Name: "d", Seconds: &ten}}, "d 10m"},
	} {
		if got := formatHorizon(&c.q); got != c.want {
			t.Errorf("%+v: %q, want %q", c.q, got, c.want)
		}
	}
}

// TestContentsKeepSectionsWhole: report.html's two-column contents box
// keeps each section with its charts in one column (a section split over
// the columns read as two).
func TestContentsKeepSectionsWhole(t *testing.T) {
	if !strings.Contains(htmlTemplate(), "nav.toc > ul > li { break-inside: avoid; }") {
		t.Error("report.html's contents box lets a section break across its columns")
	}
}
