package flink

import (
	"math"
	"testing"
)

// TestExpired pins TtlUtils.expired: lastWrite + ttl <= now, with the sum
// saturating at math.MaxInt64 instead of overflowing.
func TestExpired(t *testing.T) {
	cases := []struct {
		last, ttl, now int64
		want           bool
	}{
		{0, 10, 9, false},
		{0, 10, 10, true},
		{5, 10, 15, true},
		{5, 10, 14, false},
		{math.MaxInt64 - 5, 10, math.MaxInt64 - 1, false},
		{math.MaxInt64 - 5, 10, math.MaxInt64, true},
	}
	for _, c := range cases {
		if got := expired(c.last, c.ttl, c.now); got != c.want {
			t.Errorf("expired(%d, %d, %d) = %v, want %v", c.last, c.ttl, c.now, got, c.want)
		}
	}
}

// TestFunction pins the planner's choice (StreamExecDeduplicate in 2.3.0;
// RowTimeDeduplicateKeepFirstRowFunction from 2.1, keep-first without
// mini-batch only).
func TestFunction(t *testing.T) {
	v20, v21 := Version{2, 0}, Version{2, 1}
	cases := []struct {
		c    Config
		want Function
	}{
		{Config{}, ProcTimeKeepFirst},
		{Config{KeepLast: true}, ProcTimeKeepLast},
		{Config{MiniBatch: true, MiniBatchSize: 1}, ProcTimeMiniBatchKeepFirst},
		{Config{KeepLast: true, MiniBatch: true, MiniBatchSize: 1}, ProcTimeMiniBatchKeepLast},
		{Config{RowTime: true, Version: v20}, RowTimeChangelog},
		{Config{RowTime: true, Version: v21}, RowTimeKeepFirstInsertOnly},
		{Config{RowTime: true, Version: Newest()}, RowTimeKeepFirstInsertOnly},
		{Config{RowTime: true, KeepLast: true, Version: v21}, RowTimeChangelog},
		{Config{RowTime: true, MiniBatch: true, MiniBatchSize: 4, Version: v21}, RowTimeMiniBatch},
		{Config{RowTime: true, KeepLast: true, MiniBatch: true, MiniBatchSize: 4, Version: v20}, RowTimeMiniBatch},
	}
	for _, c := range cases {
		if got := c.c.Function(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.c, got.ClassName(), c.want.ClassName())
		}
	}
}

// TestProcessAllocatesNothingForDuplicates: a duplicate (the hot path of a
// dedup) allocates nothing.
func TestProcessAllocatesNothingForDuplicates(t *testing.T) {
	for _, cfg := range []Config{
		{TTL: 1000, Version: Newest()},
		{KeepLast: true, Version: Newest()},
		{KeepLast: true, TTL: 1000, GenerateInsert: true, Version: Newest()},
		{RowTime: true, TTL: 1000, Version: Version{2, 0}},
		{RowTime: true, TTL: 1000, Version: Newest()},
	} {
		op, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]Change, 0, 8)
		r := Row{Key: "k", Value: "v", RowTime: 5}
		out = op.Process(r, out[:0])
		allocs := testing.AllocsPerRun(100, func() { out = op.Process(r, out[:0]) })
		if allocs != 0 {
			t.Errorf("%s: %v allocations per duplicate", op.Function().ClassName(), allocs)
		}
		if op.Function() == RowTimeKeepFirstInsertOnly {
			out = op.Watermark(100, out[:0])
			late := Row{Key: "new", RowTime: 1}
			if a := testing.AllocsPerRun(100, func() { out = op.Process(late, out[:0]) }); a != 0 {
				t.Errorf("%s: %v allocations per late row", op.Function().ClassName(), a)
			}
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"2.0": {2, 0}, "2.1": {2, 1}, "2.3": {2, 3}, "2.0.2": {2, 0}, "2.3.0": {2, 3}} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"1.20", "2.4", "2", "2.10", ""} {
		if _, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q): want an error", in)
		}
	}
}
