package runner

import (
	"context"
	"testing"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

const twsScenario = `name: tws
seed: 3
duration: 1m
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: tws
    query: groupBy("event_id").transformWithState(DedupProcessor(ttl="30 seconds"))
`

// TestTransformWithStateInARun runs Spark 4's transformWithState dedup
// (TTL 30 s of processing time) on four rows and checks every total
// against a derivation by hand (seconds after start; a batch's timestamp
// is its trigger's time, and a processing-time query runs a batch at
// every trigger once it has run one):
//
//	10 e0 (arrived 5): emitted, expires at 40
//	20 no-data; 30 e0's copy: 30 < 40, dropped (a duplicate caught)
//	40 e1 (35): emitted, expires at 70; e0 expired (40 >= 40), removed
//	50 no-data; 60 e0's last copy (55): no state, emitted (missed), expires at 90
//	70 no-data: e1 removed; 80 no-data; 90 no-data: e0 removed, no state
//	   left and the stream over: the run ends (Spark would go on).
//
// 9 batches, 3 emitted, 1 missed, 1 dropped, peak 2 rows, final 0.
func TestTransformWithStateInARun(t *testing.T) {
	sc := load(t, twsScenario)
	start := sc.Start.UnixMicro()
	rows := []generators.Row{
		{EventNum: 0, Arrival: start + 5e6, Attempt: 0, Truth: generators.Truth{Event: 0, Copy: 0, Copies: 3}},
		{EventNum: 0, Arrival: start + 25e6, Attempt: 1, Truth: generators.Truth{Event: 0, Copy: 1, Copies: 3}},
		{EventNum: 1, Arrival: start + 35e6, Attempt: 0, Truth: generators.Truth{Event: 1, Copy: 0, Copies: 1}},
		{EventNum: 0, Arrival: start + 55e6, Attempt: 2, Truth: generators.Truth{Event: 0, Copy: 2, Copies: 3}},
	}
	for i := range rows {
		rows[i].EventTime = rows[i].Arrival
		rows[i].IngestTime = rows[i].Arrival
	}
	res, err := Run(context.Background(), sc, Options{
		Workers: 1,
		hooks: testHooks{NewSource: func(*scenario.Scenario) (Source, error) {
			return &listSource{rows: rows}, nil
		},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	q := res.Summary.Queries[0]
	type totals struct {
		InputRows, LogicalEvents, TrueDuplicates, EmittedRows, MissedDuplicates, DroppedDuplicates, FalseDrops, Batches, PeakStateRows, FinalStateRows int64
	}
	got := totals{q.InputRows, q.LogicalEvents, q.TrueDuplicates, q.EmittedRows, q.MissedDuplicates, q.DroppedDuplicates, q.FalseDrops, q.Batches, q.PeakStateRows, q.FinalStateRows}
	want := totals{4, 2, 2, 3, 1, 1, 0, 9, 2, 0}
	if got != want {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
	if q.Horizon == nil || q.Horizon.Name != "TTL" || q.Horizon.Seconds == nil || *q.Horizon.Seconds != 30 {
		t.Errorf("horizon %+v, want TTL 30 s", q.Horizon)
	}
}
