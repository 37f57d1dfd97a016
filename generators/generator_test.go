package generators

import (
	"github.com/dedupsim/dedupsim/engines/interval"
	"regexp"
	"testing"
	"time"
)

func TestDeterminism(t *testing.T) {
	if n := lockstep(t, mustNew(t, mixed(7)), mustNew(t, mixed(7))); n < 10000 {
		t.Fatalf("only %d rows", n)
	}
	a, c := mustNew(t, mixed(7)), mustNew(t, mixed(8))
	var ra, rc Row
	n, same := 0, 0
	for a.Next(&ra) && c.Next(&rc) {
		n++
		if ra.Arrival == rc.Arrival || ra.EventID == rc.EventID {
			same++
		}
	}
	if same > n/100 {
		t.Errorf("seeds 7 and 8: %d of %d rows share an arrival or an id", same, n)
	}
}

// TestOrder checks that rows come ordered by (arrival, event, copy), with
// ties forced by a high rate and copies resent with no delay.
func TestOrder(t *testing.T) {
	for _, s := range []*Config{
		mixed(3),
		workload(200*time.Millisecond, 2e6, withRetries(0.5, constant(2), constant(0), SameTimestamp), func(s *Config) {
			s.Workload.Heartbeat = interval.Duration(time.Microsecond * 7)
		}),
	} {
		g := mustNew(t, s)
		var prev, r Row
		n, ties := 0, 0
		for g.Next(&r) {
			if n > 0 {
				switch {
				case r.Arrival < prev.Arrival:
					t.Fatalf("row %d arrives before the previous one:\n%s\n%s", n, rowString(&prev), rowString(&r))
				case r.Arrival == prev.Arrival:
					ties++
					if r.Truth.Event < prev.Truth.Event || r.Truth.Event == prev.Truth.Event && r.Truth.Copy <= prev.Truth.Copy {
						t.Fatalf("row %d ties with the previous one out of (event, copy) order:\n%s\n%s", n, rowString(&prev), rowString(&r))
					}
				}
			}
			prev = r
			n++
		}
		if s.Workload.Heartbeat == interval.Duration(7*time.Microsecond) && ties < 1000 {
			t.Errorf("only %d ties in %d rows: the test does not exercise them", ties, n)
		}
	}
}

// TestEventsDense checks that logical events are numbered densely in the
// order their first rows arrive, and that each event has exactly Copies
// rows, numbered 0 to Copies-1.
func TestEventsDense(t *testing.T) {
	g := mustNew(t, mixed(11))
	seen := map[uint64]uint32{}   // rows of each unfinished event
	copies := map[uint64]uint32{} // its Copies
	next := uint64(0)
	var r Row
	for i := 0; g.Next(&r); i++ {
		tr := r.Truth
		if tr.Copy == 0 {
			if tr.Event != next {
				t.Fatalf("row %d starts event %d, want %d", i, tr.Event, next)
			}
			next++
			copies[tr.Event] = tr.Copies
		} else if seen[tr.Event] != tr.Copy || copies[tr.Event] != tr.Copies {
			t.Fatalf("row %d is copy %d of %d of event %d, after %d rows of it with Copies %d",
				i, tr.Copy, tr.Copies, tr.Event, seen[tr.Event], copies[tr.Event])
		}
		seen[tr.Event]++
		if seen[tr.Event] == tr.Copies {
			delete(seen, tr.Event)
			delete(copies, tr.Event)
		}
	}
	if len(seen) != 0 {
		t.Errorf("%d events ended with rows missing", len(seen))
	}
	if g.Events() != next {
		t.Errorf("Events() = %d, want %d", g.Events(), next)
	}
}

func TestUUIDs(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	first := map[uint64]Row{}
	ids := map[[36]byte]uint64{}
	var row Row
	for g := mustNew(t, mixed(5)); g.Next(&row); {
		r := &row
		if !form.Match(r.EventID[:]) {
			t.Fatalf("event_id %q is not a version 4 UUID", r.EventID[:])
		}
		if r.EventNum != 0 {
			t.Fatalf("EventNum %d set with uuid ids", r.EventNum)
		}
		if o, ok := first[r.Truth.Event]; ok {
			if o.EventID != r.EventID || o.Payload != r.Payload || o.CustomerID != r.CustomerID {
				t.Fatalf("copy differs from its original in id, payload or customer:\n%s\n%s", rowString(&o), rowString(r))
			}
			continue
		}
		if r.Truth.Copies > 1 {
			first[r.Truth.Event] = *r
		}
		if e, dup := ids[r.EventID]; dup {
			t.Fatalf("events %d and %d share id %s", e, r.Truth.Event, r.EventID[:])
		}
		ids[r.EventID] = r.Truth.Event
	}
}

func TestIntIDs(t *testing.T) {
	s := mixed(5)
	s.Workload.IDs = Ints
	g := mustNew(t, s)
	if g.IDs() != IntIDs {
		t.Fatalf("IDs() = %v", g.IDs())
	}
	var r Row
	for g.Next(&r) {
		if r.EventNum != int64(r.Truth.Event) || r.EventID != [36]byte{} {
			t.Fatalf("int id row: %s", rowString(&r))
		}
	}
}

func TestCustomersAndPayload(t *testing.T) {
	const customers = 10
	s := workload(100*time.Second, 1000, func(s *Config) { s.Workload.Customers = customers })
	var counts [customers]float64
	n := 0.0
	payloads := map[int64]bool{}
	for _, r := range all(mustNew(t, s)) {
		if r.CustomerID < 0 || r.CustomerID >= customers {
			t.Fatalf("customer %d out of [0, %d)", r.CustomerID, customers)
		}
		counts[r.CustomerID]++
		payloads[r.Payload] = true
		n++
	}
	chi2 := 0.0
	for _, c := range counts {
		chi2 += (c - n/customers) * (c - n/customers) / (n / customers)
	}
	// 9 degrees of freedom: P(chi2 > 27.9) = 0.001.
	if chi2 > 27.9 {
		t.Errorf("customer counts %v are not uniform (chi2 %.1f)", counts, chi2)
	}
	if float64(len(payloads)) < n-1 {
		t.Errorf("%d distinct payloads in %.0f events", len(payloads), n)
	}
}

func TestSchemaColumns(t *testing.T) {
	s := Columns()
	for col, name := range map[int]string{
		ColEventID: "event_id", ColCustomerID: "customer_id", ColEventTime: "event_time",
		ColIngestTime: "ingest_time", ColAttempt: "attempt", ColPayload: "payload",
	} {
		if s[col].Name != name {
			t.Errorf("Columns()[%d] = %q, want %q", col, s[col].Name, name)
		}
	}
	if len(s) != NumColumns {
		t.Errorf("%d columns, want %d", len(s), NumColumns)
	}
}

func TestNewRejectsInvalidWorkload(t *testing.T) {
	s := workload(time.Minute, 10, func(s *Config) { s.Workload.Customers = 0 })
	if _, err := New(*s); err == nil {
		t.Fatal("New accepted customers: 0")
	}
}

func TestNextArrival(t *testing.T) {
	g := mustNew(t, mixed(2))
	var r Row
	for {
		at, ok := g.NextArrival()
		if !g.Next(&r) {
			if ok {
				t.Fatal("NextArrival promised a row that Next did not give")
			}
			return
		}
		if !ok || at != r.Arrival {
			t.Fatalf("NextArrival = %d, %v; Next gave %s", at, ok, rowString(&r))
		}
	}
}
