package generators

import (
	"bytes"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"pgregory.net/rapid"
)

// TestStateRestore stops a generator at several points, restores a fresh
// one from the snapshot, and checks that both produce the same remaining
// rows.
func TestStateRestore(t *testing.T) {
	s := mixed(21)
	s.Workload.Retries.Timestamp = JitterTimestamp
	s.Workload.Retries.Jitter = interval.Duration(time.Second)
	total := count(mustNew(t, s))
	for _, at := range []int{0, 1, 1000, total / 2, total - 1, total} {
		g := mustNew(t, s)
		var r Row
		for range at {
			g.Next(&r)
		}
		state, err := g.State()
		if err != nil {
			t.Fatal(err)
		}
		h := mustNew(t, s)
		h.Next(&r) // move it away from the start, to show Restore resets it
		if err := h.Restore(state); err != nil {
			t.Fatalf("after %d rows: %v", at, err)
		}
		if again, _ := h.State(); !bytes.Equal(again, state) {
			t.Fatalf("after %d rows: a restored generator's state differs", at)
		}
		if n := lockstep(t, g, h); n != total-at {
			t.Fatalf("after %d rows: %d rows left, want %d", at, n, total-at)
		}
	}
}

func TestRestoreRejects(t *testing.T) {
	g := mustNew(t, mixed(1))
	var r Row
	for range 5000 {
		g.Next(&r)
	}
	state, _ := g.State()
	for name, bad := range map[string][]byte{
		"other scenario": state,
		"truncated":      state[:len(state)-3],
		"trailing":       append(bytes.Clone(state), 0),
		"not a state":    []byte("hello"),
		"empty":          nil,
	} {
		h := mustNew(t, mixed(1))
		if name == "other scenario" {
			h = mustNew(t, mixed(2))
		}
		before, _ := h.State()
		if err := h.Restore(bad); err == nil {
			t.Errorf("%s: Restore accepted it", name)
		}
		if after, _ := h.State(); !bytes.Equal(after, before) {
			t.Errorf("%s: a failed Restore changed the generator", name)
		}
	}
}

// TestPropertyRandomWorkloads draws small random workloads and checks the
// invariants every workload keeps: arrival order, each event's rows, and
// resuming from a snapshot at a random row.
func TestPropertyRandomWorkloads(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := workload(time.Duration(rapid.IntRange(1, 120).Draw(rt, "seconds"))*time.Second,
			rapid.Float64Range(0, 300).Draw(rt, "rate"), func(s *Config) {
				s.Seed = rapid.Uint64().Draw(rt, "seed")
				if rapid.Bool().Draw(rt, "ints") {
					s.Workload.IDs = Ints
				}
				s.Workload.ArrivalDelay = exponential(rapid.Float64Range(0.001, 10).Draw(rt, "delay"))
				r := &s.Workload.Retries
				r.Probability = rapid.Float64Range(0, 1).Draw(rt, "p")
				r.Copies = geometric(rapid.Float64Range(1, 4).Draw(rt, "copies"))
				r.Delay = randvar.Spec{Kind: randvar.KindUniform, Max: rapid.Float64Range(0, 60).Draw(rt, "gap")}
				r.Timestamp = rapid.SampledFrom([]TimestampMode{SameTimestamp, Restamp, JitterTimestamp}).Draw(rt, "mode")
				if r.Timestamp == JitterTimestamp {
					r.Jitter = interval.Duration(time.Duration(rapid.Int64Range(1, 5e9).Draw(rt, "jitter")))
				}
				s.Workload.FutureTimestamps = FutureTimestamps{Probability: rapid.Float64Range(0, 0.1).Draw(rt, "bad"), Skew: exponential(3600)}
				s.Workload.Heartbeat = interval.Duration(time.Duration(rapid.Int64Range(0, 20).Draw(rt, "beat")) * time.Second)
			})
		g, err := New(*s)
		if err != nil {
			rt.Fatal(err)
		}
		rows := all(g)
		count := map[uint64]uint32{}
		for i := range rows {
			r := &rows[i]
			if i > 0 && (r.Arrival < rows[i-1].Arrival || r.Arrival == rows[i-1].Arrival && r.Truth.Event < rows[i-1].Truth.Event) {
				rt.Fatalf("row %d out of order", i)
			}
			if r.Truth.Copy != count[r.Truth.Event] {
				rt.Fatalf("row %d is copy %d after %d rows of its event", i, r.Truth.Copy, count[r.Truth.Event])
			}
			count[r.Truth.Event]++
		}
		for i := range rows {
			if count[rows[i].Truth.Event] != rows[i].Truth.Copies {
				rt.Fatalf("event %d: %d rows, truth says %d", rows[i].Truth.Event, count[rows[i].Truth.Event], rows[i].Truth.Copies)
			}
		}
		at := rapid.IntRange(0, len(rows)).Draw(rt, "snapshot")
		h := mustNew(t, s)
		var r Row
		for range at {
			h.Next(&r)
		}
		state, _ := h.State()
		k := mustNew(t, s)
		if err := k.Restore(state); err != nil {
			rt.Fatal(err)
		}
		rest := all(k)
		if len(rest) != len(rows)-at {
			rt.Fatalf("restored after %d rows: %d rows left, want %d", at, len(rest), len(rows)-at)
		}
		for i := range rest {
			if rest[i] != rows[at+i] {
				rt.Fatalf("restored after %d rows: row %d differs", at, i)
			}
		}
	})
}
