package memstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/dedupsim/dedupsim/engines"
)

// model is the obviously correct reference: a map and a full scan.
type model map[string]int64

func (m model) add(k string, exp int64) bool {
	if _, ok := m[k]; ok {
		return false
	}
	m[k] = exp
	return true
}

func (m model) evict(wm int64) int {
	n := 0
	for k, e := range m {
		if e != engines.NoExpiry && e <= wm {
			delete(m, k)
			n++
		}
	}
	return n
}

func contents(t interface{ Fatal(...any) }, s engines.Ranger) model {
	out := model{}
	if err := s.Range(func(k []byte, e int64) bool { out[string(k)] = e; return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameModel(t *rapid.T, got, want model) {
	if len(got) != len(want) {
		t.Fatalf("store has %d keys, model %d", len(got), len(want))
	}
	for k, e := range want {
		if g, ok := got[k]; !ok || g != e {
			t.Fatalf("key %q: store has (%d, %v), model %d", k, g, ok, e)
		}
	}
}

// TestStoreMatchesModel drives the store and the model with the same random
// operations, including watermarks that jump, stand still or move back, and
// expiries below an earlier watermark.
func TestStoreMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New()
		m := model{}
		keys := rapid.SliceOfN(rapid.StringMatching(`[a-c]{0,3}`), 1, 12).Draw(t, "keys")
		times := rapid.SampledFrom([]int64{math.MinInt64, -5, -1, 0, 1, 2, 3, 5, 8, 13, 1 << 40, math.MaxInt64 - 1, engines.NoExpiry})
		for i := 0; i < 200; i++ {
			if rapid.IntRange(0, 3).Draw(t, "op") > 0 {
				k := rapid.SampledFrom(keys).Draw(t, "key")
				e := times.Draw(t, "exp")
				got, _ := s.Add([]byte(k), e)
				if want := m.add(k, e); got != want {
					t.Fatalf("Add(%q, %d) = %v, model %v", k, e, got, want)
				}
			} else {
				wm := times.Draw(t, "wm")
				got, _ := s.Evict(wm)
				if want := m.evict(wm); got != want {
					t.Fatalf("Evict(%d) = %d, model %d", wm, got, want)
				}
			}
			if s.Len() != len(m) {
				t.Fatalf("Len = %d, model %d", s.Len(), len(m))
			}
		}
		sameModel(t, contents(t, s), m)
	})
}

// TestCheckpointReopen commits random batches and reopens the store at
// random committed versions: the state must be that of the version.
func TestCheckpointReopen(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir := t.TempDir()
		every := rapid.Int64Range(1, 4).Draw(rt, "snapshotEvery")
		s, err := Open(dir, 0, Options{SnapshotEvery: every})
		if err != nil {
			rt.Fatal(err)
		}
		m := model{}
		var versions []model
		versions = append(versions, model{})
		batches := rapid.IntRange(1, 12).Draw(rt, "batches")
		for b := 0; b < batches; b++ {
			for i := rapid.IntRange(0, 10).Draw(rt, "adds"); i > 0; i-- {
				k := fmt.Sprintf("k%d", rapid.IntRange(0, 20).Draw(rt, "key"))
				e := rapid.Int64Range(0, 30).Draw(rt, "exp")
				s.Add([]byte(k), e)
				m.add(k, e)
			}
			wm := rapid.Int64Range(0, 30).Draw(rt, "wm")
			s.Evict(wm)
			m.evict(wm)
			if err := s.Commit(int64(b)); err != nil {
				rt.Fatal(err)
			}
			snap := model{}
			for k, e := range m {
				snap[k] = e
			}
			versions = append(versions, snap)
		}
		v := rapid.IntRange(0, batches).Draw(rt, "version")
		r, err := Open(dir, int64(v), Options{SnapshotEvery: every})
		if err != nil {
			rt.Fatal(err)
		}
		sameModel(rt, contents(rt, r), versions[v])
		// The reopened store keeps evicting correctly.
		m2 := versions[v]
		got, _ := r.Evict(15)
		if want := m2.evict(15); got != want {
			rt.Fatalf("after reopen: Evict(15) = %d, model %d", got, want)
		}
	})
}

func TestEvictionOrderAndArenaReuse(t *testing.T) {
	s := New()
	key := make([]byte, 41)
	for round := 0; round < 5; round++ {
		for i := 0; i < 50_000; i++ {
			copy(key, fmt.Sprintf("%08d-%032d", round, i))
			if ok, _ := s.Add(key, int64(round*100_000+i)); !ok {
				t.Fatalf("key %d of round %d not added", i, round)
			}
		}
		n, _ := s.Evict(int64(round*100_000 + 49_999))
		if n != 50_000 || s.Len() != 0 {
			t.Fatalf("round %d: evicted %d, %d left", round, n, s.Len())
		}
	}
	// Keys go into recycled slabs: five rounds of 2 MB of keys use a
	// handful of 256 KiB slabs, not ten.
	if got := s.ArenaBytes(); got > 12*slabSize {
		t.Fatalf("arena holds %d bytes after full evictions; slabs are not reused", got)
	}
}

func TestAddAllocatesNothing(t *testing.T) {
	s := New()
	key := make([]byte, 36)
	i := 0
	// Warm up the map and the arena.
	for ; i < 1<<16; i++ {
		copy(key, fmt.Sprintf("%036d", i))
		s.Add(key, int64(i))
	}
	keys := make([][]byte, 1000)
	for j := range keys {
		keys[j] = []byte(fmt.Sprintf("%036d", j))
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			s.Add(k, 5) // all present: lookups only
		}
	})
	if allocs != 0 {
		t.Fatalf("Add of present keys allocates %.1f times per 1000 rows", allocs)
	}
}

func TestCorruptDeltaIsNamed(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0, Options{})
	s.Add([]byte("a"), 1)
	s.Commit(0)
	s.Close()
	path := dir + "/1.log"
	writeFileOrFail(t, path, []byte("DDSMDLT1garbage!"))
	_, err := Open(dir, 1, Options{})
	if err == nil || !contains(err.Error(), "1.log") {
		t.Fatalf("want an error naming 1.log, got %v", err)
	}
}

// TestStoreMatchesModelAtScale replays a long stream against the model:
// thousands of keys with nearly ordered expiries, far-future and
// already-expired ones, watermarks that advance in jumps, stall or move
// back, so that index buckets span many chunks, are evicted whole or cut,
// and the table grows and shifts slots back on removal.
func TestStoreMatchesModelAtScale(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		s, m := New(), model{}
		wm := int64(0)
		for step := 0; step < 60_000; step++ {
			switch r := rng.IntN(100); {
			case r < 97:
				// Keys repeat sometimes: a small id space per epoch.
				k := fmt.Sprintf("key-%d", rng.IntN(step/4+10))
				var e int64
				switch rng.IntN(50) {
				case 0:
					e = engines.NoExpiry
				case 1:
					e = wm - rng.Int64N(1000) // already expired
				case 2:
					e = wm + 1<<40 // a bad clock
				default:
					e = int64(step)*10 + rng.Int64N(300)
				}
				got, err := s.Add([]byte(k), e)
				if err != nil {
					t.Fatal(err)
				}
				if want := m.add(k, e); got != want {
					t.Fatalf("seed %d step %d: Add(%q, %d) = %v, model %v", seed, step, k, e, got, want)
				}
			default:
				if rng.IntN(10) == 0 {
					wm -= rng.Int64N(5000) // moves back
				} else {
					wm = int64(step)*10 - rng.Int64N(2000)
				}
				got, _ := s.Evict(wm)
				if want := m.evict(wm); got != want {
					t.Fatalf("seed %d step %d: Evict(%d) = %d, model %d", seed, step, wm, got, want)
				}
			}
			if s.Len() != len(m) {
				t.Fatalf("seed %d step %d: Len = %d, model %d", seed, step, s.Len(), len(m))
			}
		}
		got := contents(t, s)
		if len(got) != len(m) {
			t.Fatalf("seed %d: store has %d keys, model %d", seed, len(got), len(m))
		}
		for k, e := range m {
			if g, ok := got[k]; !ok || g != e {
				t.Fatalf("seed %d: key %q: store has (%d, %v), model %d", seed, k, g, ok, e)
			}
		}
	}
}
