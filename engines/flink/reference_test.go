package flink

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestAgainstReference replays random traces (rows of a few keys, TTL
// clock steps) through the operator and through a deliberately naive
// model of the proctime functions, written from the rules in words: "a
// key is alive while the time of its last state write plus the TTL is
// after the clock". Keep-first writes only when it emits; keep-last
// writes on every row. It also checks logical <= physical at every step.
func TestAgainstReference(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		for _, keepLast := range []bool{false, true} {
			if msg := compareWithReference(seed, keepLast); msg != "" {
				t.Fatalf("seed %d keepLast %v: %s (go test ./engines/flink -run TestAgainstReference)", seed, keepLast, msg)
			}
		}
	}
}

func compareWithReference(seed uint64, keepLast bool) string {
	rng := rand.New(rand.NewPCG(seed, 24))
	ttl := int64(1 + rng.IntN(20))
	op, err := New(Config{KeepLast: keepLast, TTL: ttl, GenerateInsert: true, Version: Newest()})
	if err != nil {
		return err.Error()
	}
	lastWrite := map[string]int64{} // the reference: key -> time of its last write
	now := int64(0)
	var out []Change
	for step := 0; step < 60; step++ {
		if rng.IntN(4) == 0 {
			now += int64(rng.IntN(15))
			op.SetTTLTime(now)
			continue
		}
		k := fmt.Sprint(rng.IntN(4))
		out = op.Process(Row{Key: k, Value: fmt.Sprint(step), ID: step}, out[:0])
		w, written := lastWrite[k]
		alive := written && w+ttl > now
		var want []Kind
		switch {
		case !alive:
			want = []Kind{Insert}
			lastWrite[k] = now
		case keepLast:
			want = []Kind{UpdateAfter}
			lastWrite[k] = now
		}
		if len(out) != len(want) {
			return fmt.Sprintf("step %d key %s at %d: %d rows, want %v", step, k, now, len(out), want)
		}
		for i := range want {
			if out[i].Kind != want[i] || out[i].Row.ID != step {
				return fmt.Sprintf("step %d key %s at %d: %v, want %v", step, k, now, out, want)
			}
		}
		logical := 0
		for _, w := range lastWrite {
			if w+ttl > now {
				logical++
			}
		}
		if got := op.LogicalEntries(); got != logical {
			return fmt.Sprintf("step %d at %d: logical %d, want %d", step, now, got, logical)
		}
		if op.PhysicalEntries() < op.LogicalEntries() || op.PhysicalEntries() > len(lastWrite) {
			return fmt.Sprintf("step %d: physical %d outside [%d, %d]", step, op.PhysicalEntries(), op.LogicalEntries(), len(lastWrite))
		}
	}
	return ""
}
