package statereader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// TestEachRowListsWhatALimitLists reads every key of checkpoints on both
// backends, partitioned (7 partitions) and not, twice: through EachRow
// after a Read with a negative limit, which merges the stores as it goes,
// and with a limit above the number of keys, which sorts them all in
// memory. Both list the same rows in the same order, as often as EachRow
// is called, whether the stores in key order are read as the merge goes
// or copied (copyBelow).
func TestEachRowListsWhatALimitLists(t *testing.T) {
	for _, store := range []string{"memory", "pebble"} {
		for _, spark := range []string{"", "spark: {partitions: 7}\n"} {
			name := store
			if spark != "" {
				name += "/partitioned"
			}
			t.Run(name, func(t *testing.T) {
				dir, _ := runCheckpoint(t, partitionedScenario+spark, store)
				all, err := Read(dir, Options{Limit: -1})
				if err != nil {
					t.Fatal(err)
				}
				big, err := Read(dir, Options{Limit: 1 << 30})
				if err != nil {
					t.Fatal(err)
				}
				for i, q := range all.Queries {
					o, want := &q.Operators[0], big.Queries[i].Operators[0].Rows
					if o.Rows != nil || o.NumRows == 0 || o.Listed() != o.NumRows || int64(len(want)) != o.NumRows {
						t.Fatalf("query %s: rows %d in memory, %d listed of %d; with a limit %d", q.Name, len(o.Rows), o.Listed(), o.NumRows, len(want))
					}
					for _, below := range []int64{copyStoresBelow, copyStoresBelow, 0, math.MaxInt64} {
						o.lister.copyBelow = below
						if got := allRows(t, o); !reflect.DeepEqual(got, want) {
							t.Fatalf("query %s, copyBelow %d: EachRow lists %d rows, not the %d rows a limit lists (first %v, want %v)", q.Name, below, len(got), len(want), got[:1], want[:1])
						}
					}
				}
			})
		}
	}
}

// TestEachRowStopsAndCloses: an error from fn stops the listing at once,
// is returned as it is, and leaves no store open and no Range running
// (their goroutines end), the stores read as the merge goes.
func TestEachRowStopsAndCloses(t *testing.T) {
	dir, _ := runCheckpoint(t, partitionedScenario+"spark: {partitions: 7}\n", "pebble")
	st, err := Read(dir, Options{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	stop := errors.New("enough")
	n := 0
	o := &st.Queries[0].Operators[0]
	o.lister.copyBelow = 0
	err = o.EachRow(func(Row) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("EachRow returned %v after %d rows; want the callback's error after 3", err, n)
	}
	// A store or a Range left running keeps a goroutine forever: the wait
	// then ends in the test binary's timeout, whose stacks show it; no
	// deadline of this test's own decides, so a slow machine cannot fail
	// it.
	for runtime.NumGoroutine() > before {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEachRowOrdersNegativeIntegers: a Pebble store ranges in byte order,
// which puts a negative customer_id after the positive ones; key order is
// the values' order. Generated rows have no negative ids, so the store
// here is written by hand; the order expected is that of the values.
func TestEachRowOrdersNegativeIntegers(t *testing.T) {
	p, err := planOf(`dropDuplicates(["customer_id"])`)
	if err != nil {
		t.Fatal(err)
	}
	node := p.Nodes[p.Dedups()[0]]
	ids := []int64{3, -5, math.MaxInt64, 0, -1, math.MinInt64, 7}
	want := []int64{math.MinInt64, -5, -1, 0, 3, 7, math.MaxInt64}
	for _, store := range []string{"memory", "pebble"} {
		for _, negative := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/negative=%v", store, negative), func(t *testing.T) {
				be, err := stores.Lookup(store, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(t.TempDir(), "0")
				s, err := be.Open(dir, 0)
				if err != nil {
					t.Fatal(err)
				}
				var w []int64
				for _, id := range ids {
					if !negative && id < 0 {
						continue
					}
					if _, err := s.Add(binary.BigEndian.AppendUint64(nil, uint64(id)), engines.NoExpiry); err != nil {
						t.Fatal(err)
					}
				}
				for _, id := range want {
					if negative || id >= 0 {
						w = append(w, id)
					}
				}
				if err := s.Commit(0); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				o, err := readOperator(dir, []string{dir}, be, 1, node, -1)
				if err != nil {
					t.Fatal(err)
				}
				o.lister.copyBelow = 0 // a store of 7 keys would be copied
				if ordered := o.lister.srcs[0].ordered; store == "pebble" && ordered == negative {
					t.Errorf("the first pass found the store in key order: %v; want %v", ordered, !negative)
				}
				var got []int64
				for _, r := range allRows(t, o) {
					got = append(got, r.Key[0].Value.(int64))
				}
				if !reflect.DeepEqual(got, w) {
					t.Fatalf("listed %v, want %v", got, w)
				}
			})
		}
	}
}
