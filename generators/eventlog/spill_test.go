package eventlog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSorterSorts: records of many lengths, many sharing their first 8
// bytes or more, some repeated, come out of a sorter in bytes.Compare
// order, all of them, whether they stay in memory or spill to many runs
// (more than one merge's fan-in, so merged in rounds).
func TestSorterSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var in [][]byte
	for i := range 20000 {
		var r []byte
		switch i % 4 {
		case 0: // random bytes of random length
			r = make([]byte, rng.IntN(30))
			for j := range r {
				r[j] = byte(rng.IntN(256))
			}
		case 1: // a shared 8-byte prefix, then a number
			r = fmt.Appendf(nil, "prefix:%d", rng.IntN(5000))
		case 2: // a repeat
			if len(in) > 0 {
				r = slices.Clone(in[rng.IntN(len(in))])
			}
		default: // a prefix of another record
			if len(in) > 0 {
				o := in[rng.IntN(len(in))]
				r = slices.Clone(o[:rng.IntN(len(o)+1)])
			}
		}
		in = append(in, r)
	}
	want := slices.Clone(in)
	slices.SortFunc(want, bytes.Compare)
	for _, budget := range []int{0, 8 << 10} {
		s := NewSorter(budget)
		for _, r := range in {
			if err := s.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		spilled := s.Spilled()
		if budget == 0 && spilled != 0 || budget != 0 && spilled <= maxFanIn {
			t.Fatalf("budget %d: %d runs spilled", budget, spilled)
		}
		m, err := s.Sorted()
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for m.Next() {
			if i >= len(want) || !bytes.Equal(m.Record(), want[i]) {
				t.Fatalf("budget %d: record %d is %x, want %x", budget, i, m.Record(), want[min(i, len(want)-1)])
			}
			i++
		}
		if err := m.Err(); err != nil || i != len(want) {
			t.Fatalf("budget %d: %d records of %d (%v)", budget, i, len(want), err)
		}
		m.Close()
	}
}
