package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics/fitfile"
)

// TestRenderFit renders a small fit report and checks that every file is
// there and that the report gives each estimate with its interval and the
// side by side runs.
func TestRenderFit(t *testing.T) {
	r := &fitfile.Report{
		Log: "events.csv", Scenario: "fitted-events.yaml", Command: "simulate fit events.csv",
		Rows: 100, Events: 80, SampledEvents: 80, SampleFraction: 1, Tolerance: 60,
		Estimates: []fitfile.Estimate{
			{Name: "arrival delay: lognormal mu", Key: "workload.arrivalDelay.mu", Value: 0.69, Lo: 0.67, Hi: 0.71, Text: "0.69 [0.67, 0.71]", Method: "percentile bootstrap"},
			{Name: "share of events resent", Key: "workload.retries.probability", Value: 0.15, Lo: 0.13, Hi: 0.17, Text: "0.15 [0.13, 0.17]", Method: "Wilson score interval, 95%"},
		},
		Rate: fitfile.RateSeries{BinSeconds: 1, Rows: []float64{5, 6, 0, 0, 7}, Originals: []float64{4, 5, 0, 0, 6},
			Profile: []fitfile.Segment{{Start: 0, Length: 2, Rate: 4.5}, {Start: 2, Length: 2, Rate: 0}, {Start: 4, Length: 1, Rate: 6}}},
		Delay:    fitfile.Dist{Family: "lognormal", Spec: "lognormal (mu 0.69, sigma 0.8)", N: 3, Observed: []fitfile.XY{{X: 0.5, Y: 0.33}, {X: 2, Y: 0.67}, {X: 9, Y: 1}}, Fitted: []fitfile.XY{{X: 0.5, Y: 0.2}, {X: 2, Y: 0.5}, {X: 9, Y: 0.97}}},
		Lateness: []fitfile.XY{{X: 1, Y: -2}, {X: 3, Y: 180}},
		Copies:   []int64{60, 15, 5},
		Queries:  []string{`q1: dropDuplicates(["event_id"])`},
		Compare:  []fitfile.CompareRow{{Query: "q1", Metric: "missed duplicates", Log: 99, Fitted: 105, Diff: 6.0 / 99}},
	}
	dir := t.TempDir()
	if err := RenderFit(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit.json", "report.md", "report.html", "rate.png", "rate.svg", "arrival-delay.png", "lateness.png", "copies.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "retry-gap.png")); err == nil {
		t.Errorf("a gap chart without gaps")
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	for _, want := range []string{"0.15 [0.13, 0.17]", "Wilson score interval", "| q1 | missed duplicates | 99 | 105 | +6.1% |", "side by side"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, want := range []string{"0.15 [0.13, 0.17]", "6.1%</td>", "<svg"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
