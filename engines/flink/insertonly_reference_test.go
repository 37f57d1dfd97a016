package flink

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestInsertOnlyAgainstReference replays random traces (rows of a few
// keys with random rowtimes, rising watermarks, TTL clock steps) through
// the 2.1+ rowtime keep-first and a naive model written from its rules
// in words: a row below the watermark is dropped late; a key whose flag
// is alive (written at w, w + ttl > now) drops the row; otherwise the row
// waits when its key waits for no row with a rowtime at or below its
// own; a watermark emits every waiting row at or below it, by rowtime,
// then by the order the rows came to wait, and writes the key's flag.
// The naive model scans every key at every watermark; the operator pops
// a timer heap.
func TestInsertOnlyAgainstReference(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		if msg := compareInsertOnly(seed); msg != "" {
			t.Fatalf("seed %d: %s (go test ./engines/flink -run TestInsertOnlyAgainstReference)", seed, msg)
		}
	}
}

func compareInsertOnly(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 37))
	ttl := int64(rng.IntN(30))
	op, err := New(Config{RowTime: true, TTL: ttl, GenerateInsert: true, Version: Newest()})
	if err != nil {
		return err.Error()
	}
	type waiting struct {
		id      int
		ts, seq int64
	}
	wait := map[string]waiting{}
	flag := map[string]int64{}
	now, wm, seq, late := int64(0), MinWatermark, int64(0), int64(0)
	var out []Change
	for step := 0; step < 80; step++ {
		switch rng.IntN(6) {
		case 0:
			now += int64(rng.IntN(10))
			op.SetTTLTime(now)
		case 1:
			if wm == MinWatermark {
				wm = 0
			}
			wm += int64(rng.IntN(8))
			out = op.Watermark(wm, out[:0])
			var due []waiting
			for k, w := range wait {
				if w.ts <= wm {
					due = append(due, w)
					delete(wait, k)
					flag[fmt.Sprint(w.id%1000)] = now
				}
			}
			slices.SortFunc(due, func(a, b waiting) int {
				if a.ts != b.ts {
					return int(a.ts - b.ts)
				}
				return int(a.seq - b.seq)
			})
			var got, want []int
			for _, c := range out {
				got = append(got, c.Row.ID)
			}
			for _, w := range due {
				want = append(want, w.id)
			}
			if !slices.Equal(got, want) {
				return fmt.Sprintf("step %d watermark %d: emitted %v, want %v", step, wm, got, want)
			}
		default:
			k := rng.IntN(4)
			key := fmt.Sprint(k)
			ts := int64(rng.IntN(40))
			id := (step+1)*1000 + k
			out = op.Process(Row{Key: key, RowTime: ts, ID: id}, out[:0])
			if len(out) != 0 {
				return fmt.Sprintf("step %d: a row emitted %v at once", step, out)
			}
			fw, flagged := flag[key]
			switch {
			case wm != MinWatermark && ts < wm:
				late++
			case flagged && (ttl == 0 || fw+ttl > now):
			default:
				if w, ok := wait[key]; !ok || ts < w.ts {
					seq++
					wait[key] = waiting{id, ts, seq}
				}
			}
		}
		if op.LateDropped() != late {
			return fmt.Sprintf("step %d: late %d, want %d", step, op.LateDropped(), late)
		}
		live := len(wait)
		for _, w := range flag {
			if ttl == 0 || w+ttl > now {
				live++
			}
		}
		if got := op.LogicalEntries(); got != live {
			return fmt.Sprintf("step %d: logical %d, want %d", step, got, live)
		}
	}
	return ""
}
