package metrics

import (
	"bytes"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/generators"
)

func row(event uint64, copy, copies uint32) generators.Row {
	return generators.Row{Truth: generators.Truth{Event: event, Copy: copy, Copies: copies}}
}

// TestAccountantCauses pins each counter on a hand-made stream.
func TestAccountantCauses(t *testing.T) {
	var a Accountant
	rows := []generators.Row{
		row(0, 0, 2), // emitted
		row(1, 0, 1), // late: every copy late -> false drop (late)
		row(2, 0, 2), // duplicate of another event's key
		row(0, 1, 2), // emitted again: a missed duplicate
		row(2, 1, 2), // late: event 2 never emitted, not every copy late -> collision
		row(3, 0, 1), // emitted
	}
	outs := []engines.Outcome{engines.Emitted, engines.DroppedLate, engines.DroppedDuplicate, engines.Emitted, engines.DroppedLate, engines.Emitted}
	a.Observe(rows[:3], outs[:3])
	if a.FalseDrops != 1 || a.FalseDropsLate != 1 {
		t.Fatalf("after batch 1: false drops %d (late %d), want 1 (1)", a.FalseDrops, a.FalseDropsLate)
	}
	a.Observe(rows[3:], outs[3:])
	want := Accountant{
		InputRows: 6, LogicalEvents: 4, TrueDuplicates: 2, EmittedRows: 3, MissedDuplicates: 1,
		FalseDrops: 2, FalseDropsLate: 1, FalseDropsCollide: 1, DroppedByWatermark: 2, DroppedDuplicates: 1,
	}
	a.win = eventWindow{}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("got %+v\nwant %+v", a, want)
	}
}

// TestAccountantIdentities checks the accounting identities on random
// streams whose events finish out of order, and that the window empties.
func TestAccountantIdentities(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nEvents := rapid.IntRange(1, 3000).Draw(rt, "events")
		var rows []generators.Row
		var outs []engines.Outcome
		pendingCopies := map[uint64]uint32{}
		copies := map[uint64]uint32{}
		next := uint64(0)
		for next < uint64(nEvents) || len(pendingCopies) > 0 {
			if next < uint64(nEvents) && (len(pendingCopies) == 0 || rapid.Bool().Draw(rt, "new")) {
				c := uint32(rapid.IntRange(1, 4).Draw(rt, "copies"))
				copies[next] = c
				rows = append(rows, row(next, 0, c))
				if c > 1 {
					pendingCopies[next] = 1
				}
				next++
			} else {
				var e uint64
				for k := range pendingCopies {
					e = k
					break
				}
				k := pendingCopies[e]
				rows = append(rows, row(e, k, copies[e]))
				if k+1 == copies[e] {
					delete(pendingCopies, e)
				} else {
					pendingCopies[e] = k + 1
				}
			}
			outs = append(outs, engines.Outcome(rapid.IntRange(0, 2).Draw(rt, "outcome")))
		}
		// A small window cap sends events with far copies to the
		// stragglers, and a snapshot mid-stream must resume exactly.
		var a, ref Accountant
		a.win.limit = rapid.IntRange(1, 64).Draw(rt, "limit")
		cut := rapid.IntRange(0, len(rows)).Draw(rt, "snapshot")
		for i := 0; i < len(rows); i += 97 {
			j := min(i+97, len(rows))
			ahead := rapid.Bool().Draw(rt, "ahead")
			a.ObserveBatch(rows[i:j], outs[i:j], ahead)
			ref.ObserveBatch(rows[i:j], outs[i:j], ahead)
			if i <= cut && cut < j {
				data, _ := a.MarshalBinary()
				var b Accountant
				if err := b.UnmarshalBinary(data); err != nil {
					rt.Fatal(err)
				}
				b.win.limit = a.win.limit
				a = b
			}
		}
		if a.Pending() != 0 || len(a.win.stragglers) != 0 {
			rt.Fatalf("%d events pending (%d stragglers) after every copy arrived", a.Pending(), len(a.win.stragglers))
		}
		a.win, ref.win = eventWindow{}, eventWindow{}
		if !reflect.DeepEqual(a, ref) {
			rt.Fatalf("capped window %+v, uncapped %+v", a, ref)
		}
		if a.InputRows != a.EmittedRows+a.DroppedByWatermark+a.DroppedDuplicates {
			rt.Fatalf("input identity broken: %+v", a)
		}
		if a.EmittedRows != a.LogicalEvents-a.FalseDrops+a.MissedDuplicates {
			rt.Fatalf("emitted identity broken: %+v", a)
		}
		if a.FalseDrops != a.FalseDropsLate+a.FalseDropsBadClock+a.FalseDropsCollide {
			rt.Fatalf("cause identity broken: %+v", a)
		}
		if a.LogicalEvents != int64(nEvents) || a.Pending() != 0 {
			rt.Fatalf("logical events %d (want %d), %d still pending", a.LogicalEvents, nEvents, a.Pending())
		}
	})
}

func TestTimeseriesRoundTrip(t *testing.T) {
	d := 600.5
	recs := []BatchRecord{
		{Query: "a,b", Delay: &d, BatchID: 3, ProcessingTime: 1_700_000_000_123, Watermark: 1_699_999_000_000, HasWatermark: true,
			InputRows: 10, EmittedRows: 7, DroppedByWatermark: 1, DroppedDuplicates: 2, StateRows: 99, StateBytes: 9900, MissedDuplicates: 1, FalseDrops: 2},
		{Query: "unbounded", BatchID: 0, ProcessingTime: 10_000, InputRows: 1, EmittedRows: 1, StateRows: 1},
	}
	var buf bytes.Buffer
	if err := WriteTimeseries(&buf, recs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTimeseries(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || *got[0].Delay != d || got[1].Delay != nil || got[1].HasWatermark {
		t.Fatalf("round trip: %+v", got)
	}
	got[0].Delay, recs[0].Delay = nil, nil
	if !reflect.DeepEqual(got, recs) {
		t.Fatalf("round trip:\n%+v\n%+v", got, recs)
	}
	if _, err := ReadTimeseries(bytes.NewBufferString("query,delay\n")); err == nil {
		t.Fatal("a bad header was accepted")
	}
}

func TestEntryBytes(t *testing.T) {
	// UnsafeRow of one 36-char string: 8 (null bits) + 8 (slot) + 40.
	if got := EntryBytes([]int{generators.ColEventID}, generators.UUIDIDs); got != 56+ValueBytes+EntryOverheadBytes {
		t.Errorf("event_id uuid: %d", got)
	}
	if got := EntryBytes([]int{generators.ColEventID}, generators.IntIDs); got != 16+ValueBytes+EntryOverheadBytes {
		t.Errorf("event_id int: %d", got)
	}
	if got := EntryBytes([]int{generators.ColEventID, generators.ColEventTime}, generators.UUIDIDs); got != 64+ValueBytes+EntryOverheadBytes {
		t.Errorf("event_id, event_time: %d", got)
	}
}

func TestAccountantStateRoundTrip(t *testing.T) {
	var a, b Accountant
	rows := []generators.Row{row(0, 0, 3), row(1, 0, 1), row(0, 1, 3), row(2, 0, 2)}
	a.Observe(rows, []engines.Outcome{engines.Emitted, engines.DroppedLate, engines.DroppedDuplicate, engines.Emitted})
	data, _ := a.MarshalBinary()
	if err := b.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	more := []generators.Row{row(0, 2, 3), row(2, 1, 2)}
	outs := []engines.Outcome{engines.Emitted, engines.DroppedDuplicate}
	a.Observe(more, outs)
	b.Observe(more, outs)
	a.win, b.win = eventWindow{}, eventWindow{}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("restored accountant diverged:\n%+v\n%+v", a, b)
	}
	if err := b.UnmarshalBinary(data[:len(data)-1]); err == nil {
		t.Fatal("truncated state accepted")
	}
}

// TestAccountantBadClockCause pins the bad-clock cause: an event lost to
// late drops is a bad-clock loss when its last copy dropped as late was
// dropped in a batch whose watermark was ahead of the clock, a late loss
// otherwise; a loss with a copy dropped as a duplicate stays a collision.
// A snapshot between the batches changes nothing.
func TestAccountantBadClockCause(t *testing.T) {
	late, dup, emit := engines.DroppedLate, engines.DroppedDuplicate, engines.Emitted
	// Batch 1, watermark normal: A's and B's first copies late.
	b1 := []generators.Row{row(0, 0, 2), row(1, 0, 2), row(4, 0, 1)}
	o1 := []engines.Outcome{late, late, emit}
	// Batch 2, watermark ahead: A's last copy late (bad clock), C's only
	// copy late (bad clock), D's first copy late, E emitted.
	b2 := []generators.Row{row(0, 1, 2), row(2, 0, 1), row(3, 0, 2), row(5, 0, 1)}
	o2 := []engines.Outcome{late, late, late, emit}
	// Batch 3, normal again: B's last copy late (late), D's last copy a
	// duplicate of another key (collision).
	b3 := []generators.Row{row(1, 1, 2), row(3, 1, 2)}
	o3 := []engines.Outcome{late, dup}
	var a Accountant
	a.ObserveBatch(b1, o1, false)
	a.ObserveBatch(b2, o2, true)
	data, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var b Accountant
	if err := b.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Accountant{&a, &b} {
		x.ObserveBatch(b3, o3, false)
		if x.FalseDrops != 4 || x.FalseDropsBadClock != 2 || x.FalseDropsLate != 1 || x.FalseDropsCollide != 1 {
			t.Errorf("false drops %d: bad clock %d, late %d, collision %d; want 4: 2 (A, C), 1 (B), 1 (D)",
				x.FalseDrops, x.FalseDropsBadClock, x.FalseDropsLate, x.FalseDropsCollide)
		}
	}
}
