package flink

import (
	"slices"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// TestRowTimeMiniBatchEagerWatermarkNeedsMoreThanAnInterval: the SQL
// watermark assigner (WatermarkAssignerOperator) emits a watermark after
// a row only when it has moved strictly more than the auto-watermark
// interval (200 ms) past the last one it emitted (current - last >
// interval). Keep-first, watermark delay 5 s, allow-latency 1 s, size
// 100, all rows arriving before 200 ms (no timer tick). By hand
// (arrival/event time in ms; the assigner's watermarks start at 0):
//
//	1 a 10/6800: watermark 1800, 1800 - 0 > 200: emitted; the
//	  mini-batch assigner forwards it (>= its first end, 999): the flush
//	  emits row 1 (+I). Next mini-batch end: 1999.
//	2 b 20/7000: watermark 2000, 2000 - 1800 = 200, not more than the
//	  interval: not emitted, so nothing reaches 1999: row 2 waits.
//	3 c 30/7001: watermark 2001, 201 > 200: emitted and forwarded (>=
//	  1999): the flush emits rows 2 and 3 (+I each).
//
// Emitting at exactly one interval would flush row 2 alone after row 2,
// and leave row 3 waiting (2001 - 2000 = 1).
func TestRowTimeMiniBatchEagerWatermarkNeedsMoreThanAnInterval(t *testing.T) {
	E := engines.Emitted
	sq, err := ParseScenarioQuery(rowTimeFirstSQL, map[string]string{OptMiniBatch: "true", OptMiniBatchDelay: "1 s", OptMiniBatchSize: "100", OptWatermark: "5 s"})
	if err != nil {
		t.Fatal(err)
	}
	if sq.Watermark.Interval != 200 {
		t.Fatalf("auto-watermark interval %d ms, want the default 200", sq.Watermark.Interval)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	op.Open(0)
	for i, r := range []struct {
		key         string
		proc, event int64
		want        []Verdict
	}{
		{"a", 10, 6800, []Verdict{{1, E}}},
		{"b", 20, 7000, nil},
		{"c", 30, 7001, []Verdict{{2, E}, {3, E}}},
	} {
		if o, n := op.Process([]byte(r.key), nil, r.proc, r.event); o != engines.DroppedDuplicate || n != 0 || !op.Deferred() {
			t.Errorf("row %d: %v, %d rows, deferred %v; want a waiting row", i+1, o, n, op.Deferred())
		}
		if got := op.Verdicts(nil); !slices.Equal(got, r.want) {
			t.Errorf("after row %d (%s %d/%d): verdicts %v, want %v", i+1, r.key, r.proc, r.event, got, r.want)
		}
	}
}
