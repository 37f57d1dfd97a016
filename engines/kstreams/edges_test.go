package kstreams

import (
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// TestDedupWindowEdgesOddWindow pins the two halves of the lookup window
// on an odd window, where they differ: the processor (Confluent's
// FindDistinctEvents) looks in [t - W/2, t + (W - W/2)], so for W = 7 ms
// the left half is 3 ms (7/2, truncated) and the right half 4 ms.
//
// Derived by hand, record time: a is stored at 10; a later copy of a at
// t finds it when t-3 <= 10 <= t+4, that is 6 <= t <= 13. The store's
// visibility bound (observed 10 - 7 + 1 = 4, or t - 7 + 1 past 10) never
// cuts the lookup below 6 here. So t = 5 and t = 14 are new, 6 and 13
// duplicates. (Swapped halves, [t-4, t+3], would give 7 <= t <= 14.)
//
// Stream time: a stored at 10, then b moves stream time to T; a's copy
// looks in [T-3, T+4] and finds a while T-3 <= 10: T = 13 is a
// duplicate, T = 14 new.
func TestDedupWindowEdgesOddWindow(t *testing.T) {
	const w = 7
	for _, c := range []struct {
		probe int64
		want  engines.Outcome
	}{
		{5, engines.Emitted},
		{6, engines.DroppedDuplicate},
		{13, engines.DroppedDuplicate},
		{14, engines.Emitted},
	} {
		d, err := NewDedup(w, RecordTime)
		if err != nil {
			t.Fatal(err)
		}
		if o := d.Process("a", 10); o != engines.Emitted {
			t.Fatalf("record time: a@10 first: %v", o)
		}
		if o := d.Process("a", c.probe); o != c.want {
			t.Errorf("record time, W %d: a@10 then a@%d: %v, want %v", w, c.probe, o, c.want)
		}
	}
	for _, c := range []struct {
		streamTime int64
		want       engines.Outcome
	}{
		{13, engines.DroppedDuplicate},
		{14, engines.Emitted},
	} {
		d, err := NewDedup(w, StreamTime)
		if err != nil {
			t.Fatal(err)
		}
		d.Process("a", 10)
		if o := d.Process("b", c.streamTime); o != engines.Emitted {
			t.Fatalf("stream time: b@%d: %v", c.streamTime, o)
		}
		if o := d.Process("a", 10); o != c.want {
			t.Errorf("stream time, W %d: a@10, b@%d, then a@10: %v, want %v", w, c.streamTime, o, c.want)
		}
	}
}
