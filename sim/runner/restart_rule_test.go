package runner

import (
	"context"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// handRows is a Source of rows written by hand.
type handRows struct{ rows []generators.Row }

func (h *handRows) Next(r *generators.Row) bool {
	if len(h.rows) == 0 {
		return false
	}
	*r, h.rows = h.rows[0], h.rows[1:]
	return true
}

// TestRestartRunsNoNoDataBatchUntilData runs the brief's example through
// the scenario runner's batch loop, by hand from Spark's
// MicroBatchExecution (trigger 10 s, delay 10 s, times from start):
//
//	t=10s  batch 0: a (event time 100 s, arrived at 5 s), watermark 0;
//	       the watermark becomes 90 s.
//	t=20s  restart (fault at 15 s): the query starts from its checkpoint
//	       with no last execution, so this idle trigger runs no no-data
//	       batch, though the recovered watermark (90 s) is ahead of batch
//	       0's (0).
//	t=30s  batch 1: c (event time 50 s, arrived at 25 s), eviction
//	       watermark 90 s, late-row watermark batch 0's, 0: c is emitted.
//	       The watermark stays 90 s (50 - 10 < 90): no no-data batch.
//
// Before the rule, an idle no-data batch 1 ran at t=20s with watermark
// 90 s and c, in batch 2, was dropped as late.
func TestRestartRunsNoNoDataBatchUntilData(t *testing.T) {
	sc, err := scenario.Parse([]byte(`name: restart-rule
start: 2026-01-01T00:00:00Z
duration: 40s
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: q
    query: withWatermark("event_time", "10 seconds").dropDuplicates(["event_id"])
faults:
  - {at: 15s, kind: restart}
`), "restart-rule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	start := sc.Start.UnixMicro()
	sec := int64(time.Second / time.Microsecond)
	row := func(id int64, eventTime, arrival int64) generators.Row {
		return generators.Row{EventNum: id, EventTime: start + eventTime*sec, IngestTime: start + arrival*sec,
			Arrival: start + arrival*sec, Truth: generators.Truth{Event: uint64(id), Copies: 1}}
	}
	res, err := Run(context.Background(), sc, Options{
		Workers: 1,
		hooks: testHooks{NewSource: func(*scenario.Scenario) (Source, error) {
			return &handRows{rows: []generators.Row{row(0, 100, 5), row(1, 50, 25)}}, nil
		},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := res.Summary.Queries[0]
	if q.Batches != 2 || q.NoDataBatches != 0 || q.EmittedRows != 2 || q.DroppedByWatermark != 0 || q.Restarts != 1 {
		t.Fatalf("batches %d (no-data %d), emitted %d, dropped late %d, restarts %d; want 2 (0), 2, 0, 1",
			q.Batches, q.NoDataBatches, q.EmittedRows, q.DroppedByWatermark, q.Restarts)
	}
	// Batch 0 runs with the epoch, batch 1 with start + 90 s (ms).
	startMs := start / 1000
	want := []struct{ id, at, wm int64 }{{0, startMs + 10_000, 0}, {1, startMs + 30_000, startMs + 90_000}}
	defer res.Close()
	records, err := res.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != len(want) {
		t.Fatalf("%d batch records, want %d", len(records), len(want))
	}
	for i, r := range records {
		w := want[i]
		if r.BatchID != w.id || r.ProcessingTime != w.at || r.Watermark != w.wm || r.NoData {
			t.Errorf("record %d: batch %d at %d, watermark %d, no-data %v; want batch %d at %d, watermark %d",
				i, r.BatchID, r.ProcessingTime, r.Watermark, r.NoData, w.id, w.at, w.wm)
		}
	}
}
