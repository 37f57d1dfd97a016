package kstreams

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// refDedup is a deliberately naive model of the window-store processor:
// every row ever kept in a list, and the store's rules written as
// formulas over it (a row is physically present while its segment is not
// older than segmentId(ost - W), visible while ts >= ost - W + 1).
type refDedup struct {
	w, seg, left, right int64
	record              bool
	st, ost             int64
	rows                []Row
	dropped             int64
}

func (r *refDedup) minLive() int64 { return (r.ost - r.w) / r.seg }

func (r *refDedup) live(row Row) bool { return row.Timestamp/r.seg >= r.minLive() }

func (r *refDedup) process(id string, ts int64) engines.Outcome {
	r.st = max(r.st, ts)
	t := r.st
	if r.record {
		t = ts
	}
	from, to := max(t-r.left, r.ost-r.w+1), t+r.right
	dup := false
	for _, row := range r.rows {
		if row.Key == id && row.Timestamp >= from && row.Timestamp <= to && r.live(row) {
			dup = true
		}
	}
	r.ost = max(r.ost, t)
	if t/r.seg < r.minLive() {
		r.dropped++
	} else if !slices.Contains(r.rows, Row{Key: id, Timestamp: t}) {
		r.rows = append(r.rows, Row{Key: id, Timestamp: t})
	}
	if dup {
		return engines.DroppedDuplicate
	}
	return engines.Emitted
}

func (r *refDedup) state(visibleOnly bool) []Row {
	var out []Row
	for _, row := range r.rows {
		if r.live(row) && (!visibleOnly || row.Timestamp >= r.ost-r.w+1) {
			out = append(out, row)
		}
	}
	slices.SortFunc(out, func(a, b Row) int {
		if a.Key != b.Key {
			if a.Key < b.Key {
				return -1
			}
			return 1
		}
		return int(a.Timestamp - b.Timestamp)
	})
	return out
}

// TestDedupAgainstReference replays random traces through Dedup and the
// naive model and compares every verdict and, after every record, the
// visible rows, the physical rows and dropped-records-total. A failure
// prints the seed.
func TestDedupAgainstReference(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 25))
		w := []int64{1, 7, 1000, 10_000, 120_000, 300_000}[rng.IntN(6)]
		record := rng.IntN(2) == 0
		base := StreamTime
		if record {
			base = RecordTime
		}
		d, err := NewDedup(w, base)
		if err != nil {
			t.Fatal(err)
		}
		ref := &refDedup{w: w, seg: DefaultSegmentInterval(w), left: w / 2, right: w - w/2, record: record, st: -1, ost: -1}
		ts := int64(rng.IntN(1000))
		for i := 0; i < 200; i++ {
			// Mostly forward in time, sometimes far back (late records).
			ts = max(0, ts+int64(rng.IntN(int(2*w+2000)))-int64(w/2))
			if rng.IntN(10) == 0 {
				ts = max(0, ts-int64(rng.IntN(int(3*w+1))))
			}
			id := fmt.Sprint(rng.IntN(5))
			got, want := d.Process(id, ts), ref.process(id, ts)
			where := fmt.Sprintf("seed %d, W %d, record time %v, record %d (%s@%d)", seed, w, record, i, id, ts)
			if got != want {
				t.Fatalf("%s: verdict %v, reference %v", where, got, want)
			}
			if g, r := d.Store().Rows(), ref.state(true); !slices.Equal(g, r) {
				t.Fatalf("%s: rows %v, reference %v", where, g, r)
			}
			if g, r := d.Store().PhysicalRows(), ref.state(false); !slices.Equal(g, r) {
				t.Fatalf("%s: physical rows %v, reference %v", where, g, r)
			}
			if g, p := d.Store().Len(), d.Store().PhysicalLen(); g != len(ref.state(true)) || p != len(ref.state(false)) {
				t.Fatalf("%s: Len %d, PhysicalLen %d, reference %d and %d", where, g, p, len(ref.state(true)), len(ref.state(false)))
			}
			if d.Store().DroppedRecords() != ref.dropped {
				t.Fatalf("%s: dropped %d, reference %d", where, d.Store().DroppedRecords(), ref.dropped)
			}
		}
	}
}
