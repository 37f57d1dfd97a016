package eventlog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// TestSortedReaderIsStable: with Sort, rows come in arrival order, rows
// of equal arrival in their order in the files (across files too), and
// a row's error names its own file and line.
func TestSortedReaderIsStable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte("id,et,at\nx1,1,30\nx2,1,10\nx3,1,30\nx4,1,20\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.csv"), []byte("id,et,at\ny1,1,20\ny2,1,10\ny3,1,5\n"), 0o644)
	for _, budget := range []int{0, minSortBudget} {
		r, err := Open(Spec{Path: dir, ID: []string{"id"}, EventTime: "et", ArrivalTime: "at", TimeUnit: UnitSeconds, Sort: true, SortBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for r.Next() {
			rec := r.Record()
			got = append(got, fmt.Sprintf("%s@%d:%s:%d", rec.ID, rec.Arrival/1e6, filepath.Base(rec.File), rec.Row))
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		want := "[y3@5:b.csv:4 x2@10:a.csv:3 y2@10:b.csv:3 x4@20:a.csv:5 y1@20:b.csv:2 x1@30:a.csv:2 x3@30:a.csv:4]"
		if fmt.Sprint(got) != want {
			t.Fatalf("budget %d: rows %v\nwant %s", budget, got, want)
		}
		r.Close()
	}
	// An error found after sorting names the row's own file and line.
	r, _ := Open(Spec{Path: dir, ID: []string{"id"}, EventTime: "et", ArrivalTime: "at", TimeUnit: UnitSeconds, Sort: true})
	defer r.Close()
	r.Next()
	if err := r.RowError("id", "bad"); err.Error() != filepath.Join(dir, "b.csv")+": line 4: column id: bad" {
		t.Fatalf("error %q", err)
	}
}
