package generators

import (
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// withInjected adds bad-clock rows at the given offsets, each skew ahead.
func withInjected(rows ...[2]time.Duration) func(*Config) {
	return func(s *Config) {
		for _, r := range rows {
			s.BadClockRows = append(s.BadClockRows, BadClockRow{At: r[0].Microseconds(), Skew: r[1].Microseconds()})
		}
	}
}

// TestInjectedBadClockRows: a bad-clock fault adds exactly one row per
// fault to the stream, at its moment, stamped skew ahead, as a new logical
// event with a valid key; every other row is the stream without the fault
// (the events created after the injection numbered one further on).
func TestInjectedBadClockRows(t *testing.T) {
	for _, ids := range []IDForm{UUIDs, Ints} {
		t.Run(string(ids), func(t *testing.T) {
			base := workload(10*time.Minute, 50, withRetries(0.2, geometric(1.5), exponential(20), SameTimestamp), func(s *Config) {
				s.Workload.IDs = ids
				s.Workload.Customers = 77
				s.Workload.ArrivalDelay = exponential(2)
				s.Workload.Heartbeat = interval.Duration(time.Minute)
			})
			faulty := *base
			// Listed out of time order: the generator sorts them.
			withInjected([2]time.Duration{7 * time.Minute, time.Hour}, [2]time.Duration{3 * time.Minute, 30 * time.Minute})(&faulty)
			plain, got := all(mustNew(t, base)), all(mustNew(t, &faulty))
			if len(got) != len(plain)+2 {
				t.Fatalf("%d rows with two bad-clock faults, %d without; want exactly two more", len(got), len(plain))
			}
			type want struct{ at, skew time.Duration }
			wants := []want{{3 * time.Minute, 30 * time.Minute}, {7 * time.Minute, time.Hour}}
			var shift uint64
			j := 0
			ids := map[[36]byte]bool{}
			renumber := map[uint64]uint64{}
			for i, r := range got {
				if r.Truth.BadClock {
					if int(shift) >= len(wants) {
						t.Fatalf("row %d: a third bad-clock row %s", i, rowString(&r))
					}
					w := wants[shift]
					if arr := micros(base, w.at); r.Arrival != arr || r.IngestTime != arr || r.EventTime != arr+w.skew.Microseconds() {
						t.Errorf("injected row %s: want arrival = ingest_time = %d and event_time %d ahead", rowString(&r), arr, w.skew.Microseconds())
					}
					if r.Truth.Copies != 1 || r.Truth.Copy != 0 || r.Truth.Heartbeat || r.Attempt != 0 {
						t.Errorf("injected row %s: want a single original", rowString(&r))
					}
					if r.CustomerID < 0 || r.CustomerID >= 77 {
						t.Errorf("injected row: customer_id %d outside [0, 77)", r.CustomerID)
					}
					// Dense numbering: the next event after those already
					// seen.
					var maxEvent uint64
					for _, p := range got[:i] {
						maxEvent = max(maxEvent, p.Truth.Event)
					}
					if r.Truth.Event != maxEvent+1 {
						t.Errorf("injected row: event %d, want %d (the next number)", r.Truth.Event, maxEvent+1)
					}
					if base.Workload.IDs == Ints && r.EventNum != int64(r.Truth.Event) {
						t.Errorf("injected row: event_id %d, want its event number %d", r.EventNum, r.Truth.Event)
					}
					if base.Workload.IDs == UUIDs && ids[r.EventID] {
						t.Errorf("injected row: its UUID is another event's")
					}
					shift++
					continue
				}
				if r.Truth.Copy == 0 {
					ids[r.EventID] = true
				}
				p := plain[j]
				j++
				// An event created after k injected rows is numbered k
				// further on; its copies keep the number it got.
				want, seen := renumber[p.Truth.Event]
				if !seen {
					want = p.Truth.Event + shift
					renumber[p.Truth.Event] = want
				}
				if r.Truth.Event == want {
					p.Truth.Event = want
					if base.Workload.IDs == Ints {
						p.EventNum = int64(want)
					} else {
						// A UUID is its event's number enciphered.
						newUUIDCipher(base.Seed).uuidFor(&p.EventID, want)
					}
				}
				if r != p {
					t.Fatalf("row %d differs from the stream without the faults (beyond its event number and the id made from it):\n%s\n%s", i, rowString(&r), rowString(&p))
				}
			}
			if shift != 2 {
				t.Errorf("%d injected rows found, want 2", shift)
			}
		})
	}
}

// TestInjectedRowsRestore: a generator stopped just before, at and after
// an injected row resumes the same stream.
func TestInjectedRowsRestore(t *testing.T) {
	s := workload(5*time.Minute, 20, withInjected([2]time.Duration{2 * time.Minute, 10 * time.Minute}))
	rows := all(mustNew(t, s))
	k := -1
	for i, r := range rows {
		if r.Truth.BadClock {
			k = i
		}
	}
	if k < 1 {
		t.Fatalf("no injected row in %d rows", len(rows))
	}
	for _, at := range []int{k - 1, k, k + 1} {
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
		if err := h.Restore(state); err != nil {
			t.Fatal(err)
		}
		if n := lockstep(t, g, h); n != len(rows)-at {
			t.Errorf("after %d rows: %d rows left, want %d", at, n, len(rows)-at)
		}
	}
	// A state of the stream without the fault is another scenario's.
	plain := workload(5*time.Minute, 20)
	st, _ := mustNew(t, plain).State()
	if err := mustNew(t, s).Restore(st); err == nil {
		t.Error("a generator with a bad-clock fault restored the state of one without")
	}
}

func TestInjectedRowsCheck(t *testing.T) {
	s := workload(10*time.Minute, 20, func(s *Config) {
		s.BadClockRows = []BadClockRow{
			{At: 0, Skew: 1, Key: "faults[0]"},
			{At: (11 * time.Minute).Microseconds(), Skew: time.Minute.Microseconds(), Key: "faults[3]"},
			{At: time.Minute.Microseconds(), Skew: 0},
		}
	})
	var got []string
	for _, p := range s.Check() {
		got = append(got, p.Path+": "+p.Msg)
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{"faults[0].at: must be above 0", "faults[3].at: must be within the duration (10m), got 11m", "badClockRows[2].skew: must be above 0"} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d problems, want 3:\n%s", len(got), text)
	}
}
