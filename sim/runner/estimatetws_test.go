package runner

import (
	"strings"
	"testing"
)

// TestEstimateCountsProcessingTimeBatches: a transformWithState dedup runs
// a batch at every trigger until its state has expired, up to its TTL after
// the traffic. The estimate counted rows only, so a 5-minute scenario with
// a TTL of 106,751 days (922 million empty batches, hours) ran unannounced
// and one of 1,000,000 days (a day and more) was not refused.
func TestEstimateCountsProcessingTimeBatches(t *testing.T) {
	scen := func(ttl string) string {
		return "name: tws\nseed: 2\nduration: 5m\ntrigger: 10s\nworkload:\n  rate: 20/s\nqueries:\n  - name: t\n    query: 'groupBy(\"event_id\").transformWithState(DedupProcessor(ttl=\"" + ttl + "\"))'\n"
	}
	e, err := EstimateRun(load(t, scen("30 days")), 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := (300.0 + 30*86400) / 10; e.Batches != want || e.Seconds < want/EstimateBatchesPerSecond {
		t.Errorf("30-day TTL: %v batches in %v s, want %v batches and at least %v s", e.Batches, e.Seconds, want, want/EstimateBatchesPerSecond)
	}
	e, err = EstimateRun(load(t, scen("106751 days")), 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if !e.Long() || e.Check(false) != nil {
		t.Errorf("106,751-day TTL: %s: want a long run, not refused", e)
	}
	e, err = EstimateRun(load(t, scen("1000000 days")), 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(false); err == nil || !strings.Contains(err.Error(), "batches of processing-time queries") {
		t.Errorf("1,000,000-day TTL: %v: want the run refused, naming its batches", err)
	}
}
