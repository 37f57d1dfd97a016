package kstreams

import "testing"

// TestWallClockDedupSchedule checks the punctuation rules by hand (W =
// 10 ms, P = 4 ms, init at 100): due at 104, 108, ...; an advance to 103
// fires nothing, to 104 one (at 104); one to 117 passes 108, 112 and 116
// and fires once, the next due at 120 (the grid), not 121 (117 + P); the
// clock never goes back. A key seen at t is deleted by the first
// punctuation at now >= t + 10 and looked up as present until then.
func TestWallClockDedupSchedule(t *testing.T) {
	if _, err := NewWallClockDedup(10, 0, 0); err == nil {
		t.Error("punctuate 0: no error")
	}
	if _, err := NewWallClockDedup(0, 1, 0); err == nil {
		t.Error("window 0: no error")
	}
	d, err := NewWallClockDedup(10, 4, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Process([]byte("a")) || d.Process([]byte("a")) {
		t.Fatal("a at 100: want new, then a duplicate")
	}
	for _, s := range []struct {
		now        int64
		fired      int
		next       int64
		total      int64
		aRemembers bool
	}{
		{103, 0, 104, 0, true},
		{104, 1, 108, 1, true},
		{104, 0, 108, 1, true},
		{90, 0, 108, 1, true},   // the clock does not go back
		{109, 1, 112, 2, true},  // a is 9 ms old at 109: kept
		{111, 0, 112, 2, true},  // 11 ms old, but no punctuation is due
		{117, 1, 120, 3, false}, // 108+4, 112, 116 passed: fires once; a 17 ms old: deleted
	} {
		if n := d.Advance(s.now); n != s.fired || d.NextPunctuation() != s.next || d.Punctuations() != s.total {
			t.Fatalf("advance to %d: fired %d, next %d, total %d; want %d, %d, %d", s.now, n, d.NextPunctuation(), d.Punctuations(), s.fired, s.next, s.total)
		}
		if _, ok := d.store["a"]; ok != s.aRemembers {
			t.Fatalf("at %d: a held %v, want %v", s.now, ok, s.aRemembers)
		}
	}
	if d.WallClock() != 117 || !d.Process([]byte("a")) {
		t.Fatalf("clock %d; a at 117 must be new", d.WallClock())
	}
	if rows := d.Rows(); len(rows) != 1 || rows[0] != (Row{Key: "a", Timestamp: 117}) || d.Len() != 1 {
		t.Errorf("rows %v, want a@117", rows)
	}
}
