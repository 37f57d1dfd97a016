package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
)

// TestDowntimeHoldsTriggers follows spark.downtime on a trace worked by
// hand: trigger 10 s, no cost, dropDuplicates(["event_id"]) (no
// watermark, so no no-data batch), one row every 10 s from 5 s to 65 s,
// and the query down from 25 s for 30 s, [25 s, 55 s):
//
//	batch 0 at 10 s: the row of 5 s
//	batch 1 at 20 s: the row of 15 s
//	30, 40, 50 s: in the downtime, no trigger
//	batch 2 at 55 s, the downtime's end, at once: the rows of 25, 35, 45
//	         and 55 s (arrived by then); lag 55 - 25 = 30 s
//	batch 3 at 60 s, the next boundary: nothing arrived since, no batch
//	batch 3 at 70 s: the row of 65 s
//
// With maxRowsPerBatch 2 the backlog takes two batches: 55 s (25 and 35
// s) and 60 s (45 and 55 s, lag 60 - 45 = 15 s), then 70 s.
func TestDowntimeHoldsTriggers(t *testing.T) {
	doc := `name: down
start: 2026-01-01T00:00:00Z
duration: 70s
trigger: 10s
workload: {rate: 1/s, ids: int}
queries:
  - name: q
    query: dropDuplicates(["event_id"])
spark:
  partitions: 1
  maxRowsPerBatch: %d
  downtime:
    - {at: 25s, for: 30s}
`
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var rows []generators.Row
	for i := range int64(7) {
		at := start + (5+10*i)*1_000_000
		rows = append(rows, generators.Row{EventNum: i, EventTime: at, IngestTime: at, Arrival: at, Truth: generators.Truth{Event: uint64(i), Copies: 1}})
	}
	sec := func(s float64) string { return metrics.FormatMillis(start/1000 + int64(s*1000)) }
	type batch struct {
		at, lag float64
		rows    int64
	}
	for _, c := range []struct {
		limit int
		want  []batch
	}{
		{0, []batch{{10, 5, 1}, {20, 5, 1}, {55, 30, 4}, {70, 5, 1}}},
		{2, []batch{{10, 5, 1}, {20, 5, 1}, {55, 30, 2}, {60, 15, 2}, {70, 5, 1}}},
	} {
		res := sparkTrace(t, fmt.Sprintf(doc, c.limit), rows)
		got, err := res.SparkRows()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("maxRowsPerBatch %d: %d batches, want %d: %+v", c.limit, len(got), len(c.want), got)
		}
		for i, w := range c.want {
			g := got[i]
			if g.Start != sec(w.at) || g.InputRows != w.rows || g.ProcessingLagSeconds == nil || *g.ProcessingLagSeconds != w.lag {
				t.Errorf("maxRowsPerBatch %d, batch %d: %+v; want at %s, %d rows, lag %g s", c.limit, i, g, sec(w.at), w.rows, w.lag)
			}
		}
		if l := res.Summary.Queries[0].MaxProcessingLagSeconds; l == nil || *l != 30 {
			t.Errorf("maxRowsPerBatch %d: max lag %v, want 30 s", c.limit, l)
		}
	}
}
