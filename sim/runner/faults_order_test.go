package runner

import (
	"context"
	"encoding/json"
	"testing"
)

// TestFaultsFireInTimeOrder checks that faults fire in time order whatever
// order the scenario lists them in: listing a lost checkpoint at 10m after
// a restart at 20m gives the results of listing them in order.
func TestFaultsFireInTimeOrder(t *testing.T) {
	const base = `name: faults
seed: 4
duration: 30m
workload:
  rate: 50/s
  arrivalDelay: {dist: exponential, mean: 2s}
  retries: {probability: 0.2, delay: {dist: uniform, min: 10s, max: 5m}, timestamp: restamp}
queries:
  - {name: within, query: 'withWatermark("event_time", "2 minutes").dropDuplicatesWithinWatermark(["event_id"])'}
faults:
`
	run := func(faults string) string {
		res, err := Run(context.Background(), load(t, base+faults), Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		q := res.Summary.Queries[0]
		q.EventsPerSecond, q.WallSeconds = 0, 0
		return formatSummary(q)
	}
	inOrder := run("  - {at: 10m, kind: lose-checkpoint}\n  - {at: 20m, kind: restart}\n")
	reversed := run("  - {at: 20m, kind: restart}\n  - {at: 10m, kind: lose-checkpoint}\n")
	only20 := run("  - {at: 20m, kind: lose-checkpoint}\n  - {at: 25m, kind: restart}\n")
	if reversed != inOrder {
		t.Errorf("faults listed out of order give other results:\nin order %s\nreversed %s", inOrder, reversed)
	}
	if only20 == inOrder {
		t.Fatalf("losing the checkpoint at 10m or 20m gives the same results: the test cannot tell the order")
	}
}

func formatSummary(q any) string {
	b, err := json.Marshal(q)
	if err != nil {
		panic(err)
	}
	return string(b)
}
