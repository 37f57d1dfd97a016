package memstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestAddBatchMatchesAdd checks that AddBatch decides exactly as Add in a
// loop: runs with repeats inside one look-ahead group and across groups,
// runs during which the table grows, and keys of every length, including
// empty ones.
func TestAddBatchMatchesAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	batch, single := New(), New()
	var keys []byte
	var ends []int32
	var exps []int64
	for run := range 200 {
		keys, ends, exps = keys[:0], ends[:0], exps[:0]
		n := rng.IntN(300)
		for range n {
			switch rng.IntN(10) {
			case 0:
				// The empty key.
			case 1:
				keys = append(keys, fmt.Sprintf("long-%0100d", rng.IntN(50))...)
			default:
				keys = append(keys, fmt.Sprintf("k%d", rng.IntN(run*40+100))...)
			}
			ends = append(ends, int32(len(keys)))
			exps = append(exps, int64(rng.IntN(1000)))
		}
		added := make([]bool, n)
		if err := batch.AddBatch(keys, ends, exps, added); err != nil {
			t.Fatal(err)
		}
		start := int32(0)
		for i, end := range ends {
			want, err := single.Add(keys[start:end], exps[i])
			if err != nil {
				t.Fatal(err)
			}
			if added[i] != want {
				t.Fatalf("run %d key %d %q: AddBatch added=%v, Add %v", run, i, keys[start:end], added[i], want)
			}
			start = end
		}
		if run%7 == 6 {
			wm := int64(rng.IntN(1000))
			nb, _ := batch.Evict(wm)
			ns, _ := single.Evict(wm)
			if nb != ns {
				t.Fatalf("run %d: Evict(%d) = %d after AddBatch, %d after Add", run, wm, nb, ns)
			}
		}
		if batch.Len() != single.Len() {
			t.Fatalf("run %d: Len %d after AddBatch, %d after Add", run, batch.Len(), single.Len())
		}
	}
	got, want := model{}, model{}
	batch.Range(func(k []byte, e int64) bool { got[string(k)] = e; return true })
	single.Range(func(k []byte, e int64) bool { want[string(k)] = e; return true })
	if len(got) != len(want) {
		t.Fatalf("%d keys after AddBatch, %d after Add", len(got), len(want))
	}
	for k, e := range want {
		if g, ok := got[k]; !ok || g != e {
			t.Fatalf("key %q: (%d, %v) after AddBatch, %d after Add", k, g, ok, e)
		}
	}
}

func TestAddBatchAllocatesNothing(t *testing.T) {
	s := New()
	var keys []byte
	var ends []int32
	for i := range 1000 {
		keys = append(keys, fmt.Sprintf("%036d", i)...)
		ends = append(ends, int32(len(keys)))
	}
	exps := make([]int64, len(ends))
	added := make([]bool, len(ends))
	s.AddBatch(keys, ends, exps, added) // warm up: table and arena grow
	allocs := testing.AllocsPerRun(100, func() {
		s.AddBatch(keys, ends, exps, added) // all present: lookups only
	})
	if allocs != 0 {
		t.Fatalf("AddBatch of present keys allocates %.1f times per 1000 rows", allocs)
	}
}
