package plan

import (
	"context"
	"strings"
	"testing"
)

// TestPlanKafkaStreamsKeepLastRefused: a Kafka Streams keep-last query
// has no window; plan refuses it in one line, naming the query, before
// any simulation.
func TestPlanKafkaStreamsKeepLastRefused(t *testing.T) {
	yaml := strings.Replace(enginesSmall, "    window: 2 minutes\n    time: stream\n", "    mode: keep-last\n", 1)
	_, err := Search(context.Background(), parse(t, yaml), "kstreams-stream", Targets{MaxMissedRate: 0.02}, Options{Seeds: 1})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "queries[1]: a keep-last (toTable, reduce) query has no window to sweep or plan") {
		t.Fatalf("got %v, want a one-line refusal of queries[1]", err)
	}
}
