package reports

import (
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/metrics"
)

// TestEnginesCompared: queries on two engines get the comparison, best
// first (fewest lost, then fewest missed, then smallest state), each
// measure ranked, physical state from the engine's counter, and a
// mechanism made of the query's rule and its own numbers; one engine gets
// none. Expected cells worked out by hand from the summaries below.
func TestEnginesCompared(t *testing.T) {
	ten := 600.0
	s := &metrics.Summary{Queries: []metrics.QuerySummary{
		{Name: "spark-within", Delay: &ten, Flavour: metrics.FlavourWithin, TrueDuplicates: 100, MissedDuplicates: 1, LogicalEvents: 1000, FalseDrops: 50,
			FalseDropsByCause: metrics.FalseDropCauses{BadClock: 50}, PeakStateRows: 300},
		{Name: "flink-first", Engine: "flink", Horizon: &metrics.Horizon{Name: "TTL", Seconds: &ten}, Mechanism: "keeps the first row",
			TrueDuplicates: 100, MissedDuplicates: 4, LogicalEvents: 1000, PeakStateRows: 200, EngineCounters: map[string]int64{"peakPhysicalStateRows": 260}},
		{Name: "flink-last", Engine: "flink", Horizon: &metrics.Horizon{Name: "TTL"}, Mechanism: "keeps the last row",
			TrueDuplicates: 100, MissedDuplicates: 100, LogicalEvents: 1000, PeakStateRows: 200, EngineCounters: map[string]int64{"updatesEmitted": 100}},
	}}
	if !enginesCompared(s) {
		t.Fatal("two engines: no comparison")
	}
	rows := enginesComparedRows(s)
	var order []string
	for _, r := range rows {
		order = append(order, r[0])
	}
	if got := strings.Join(order, ","); got != "flink-first,flink-last,spark-within" {
		t.Errorf("order %s, want flink-first (0 lost, 4%% missed), flink-last (0 lost, 100%%), spark-within (5%% lost)", got)
	}
	want := map[string][]string{
		"flink-first":  {"TTL 10m", "4 (4.00%) #2", "0 (0%) #1", "200 / 260 #1", "keeps the first row (TTL 10m); here it emitted 4 copies again; held up to 60 expired entries beyond the live ones."},
		"flink-last":   {"TTL none", "100 (100%) #3", "0 (0%) #1", "200 / 200 #1", "keeps the last row; here it emitted every copy again; 100 of its rows were updates (+U) of a key already emitted."},
		"spark-within": {"10m", "1 (1.00%) #1", "50 (5.00%) #3", "300 / 300 #3", "keeps a key until the watermark passes its first event time + 10m; here it emitted 1 copy again; lost 50 behind a bad clock's watermark."},
	}
	for _, r := range rows {
		if got := r[2:]; strings.Join(got, "|") != strings.Join(want[r[0]], "|") {
			t.Errorf("%s:\n got %q\nwant %q", r[0], got, want[r[0]])
		}
	}
	one := &metrics.Summary{Queries: s.Queries[1:]}
	if enginesCompared(one) {
		t.Error("one engine: a comparison")
	}
}
