package pebblestore

import (
	"bytes"
	"maps"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
	"pgregory.net/rapid"
)

// model is the obviously correct store the Pebble store is compared with: a
// map of the current state and a copy of it at the last Commit.
type model struct {
	cur, committed map[string]int64
	batchID        int64
	hasBatch       bool
}

func (m *model) add(key []byte, t int64) bool {
	if _, ok := m.cur[string(key)]; ok {
		return false
	}
	m.cur[string(key)] = t
	return true
}

func (m *model) evict(w int64) int {
	n := 0
	for k, t := range m.cur {
		if t != engines.NoExpiry && t <= w {
			delete(m.cur, k)
			n++
		}
	}
	return n
}

func (m *model) commit(id int64) {
	m.committed = maps.Clone(m.cur)
	m.batchID, m.hasBatch = id, true
}

// restore is what both a reopen and an Abort do: back to the last Commit.
func (m *model) restore() { m.cur = maps.Clone(m.committed) }

// actionGen draws the actions of TestStoreMatchesModel, weighted.
var actionGen = rapid.SampledFrom([]string{
	"add", "add", "add", "addbatch", "evict", "evict", "evict",
	"commit", "commit", "abort", "reopen", "flush", "range",
})

// storeMachine drives a Store and a model with the same random operations.
type storeMachine struct {
	dir   string
	opts  Options
	s     *Store
	m     model
	batch int64
}

// keyPool are keys that collide on purpose: empty, prefixes of each other,
// bytes around the store's prefixes.
var keyPool = rapid.SampledFrom([][]byte{
	{}, []byte("a"), []byte("ab"), []byte("abc"), []byte("b"),
	{0}, {0, 0}, {0xff}, {'x'}, {'k'}, {'m'}, []byte("a\x00"),
})

// fewKeys are three of keyPool, drawn often so that one key is added,
// evicted, added again and evicted again within a batch.
var fewKeys = rapid.SampledFrom([][]byte{{}, []byte("a"), []byte("ab")})

// keyGen draws mostly from the pools and sometimes a random key.
var keyGen = rapid.OneOf(fewKeys, fewKeys, keyPool, rapid.SliceOfN(rapid.Byte(), 0, 6))

// timeGen draws expiries and watermarks around the interesting edges, and
// mostly from a small range, so that evictions hit.
var timeGen = rapid.OneOf(
	rapid.SampledFrom([]int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, engines.NoExpiry - 1, engines.NoExpiry}),
	rapid.Int64Range(-20, 20),
	rapid.Int64Range(-20, 20),
)

func (sm *storeMachine) check(t *rapid.T) {
	if got, want := sm.s.Len(), len(sm.m.cur); got != want {
		t.Fatalf("Len() = %d, model has %d", got, want)
	}
	id, ok := sm.s.LastCommitted()
	if ok != sm.m.hasBatch || ok && id != sm.m.batchID {
		t.Fatalf("LastCommitted() = %d, %v, model %d, %v", id, ok, sm.m.batchID, sm.m.hasBatch)
	}
}

// fataler is what checkRange needs of a *testing.T or a *rapid.T.
type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// checkRange compares the whole content and its order with the model.
func (sm *storeMachine) checkRange(t fataler) {
	var got []string
	err := sm.s.Range(func(key []byte, exp int64) bool {
		if want, ok := sm.m.cur[string(key)]; !ok || want != exp {
			t.Fatalf("Range yields %q expiring %d; model has %d, %v", key, exp, want, ok)
		}
		got = append(got, string(key))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(maps.Keys(sm.m.cur))
	if !slices.Equal(got, want) {
		t.Fatalf("Range keys %q, model %q", got, want)
	}
}

func (sm *storeMachine) reopen(t *rapid.T) {
	if err := sm.s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(sm.dir, sm.opts)
	if err != nil {
		t.Fatal(err)
	}
	sm.s = s
	sm.m.restore()
}

// TestStoreMatchesModel runs random sequences of Add, Evict, Commit, Abort,
// reopen and memtable flushes against the model. A failure prints the seed;
// rerun with -rapid.seed=SEED (or the fail file it names) to reproduce it.
func TestStoreMatchesModel(t *testing.T) {
	// A tiny overlay and explicit flushes put state in many flushes, so
	// lookups, dead entries, dropped flushes and iterators cross them.
	opts := Options{MemTableSize: 64 << 10, CacheSize: 1 << 20}
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp("", "pebblestore-model-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		s, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		sm := &storeMachine{dir: dir, opts: opts, s: s, m: model{cur: map[string]int64{}, committed: map[string]int64{}}}
		defer func() { sm.s.Close() }()
		add := func(t *rapid.T) {
			k, exp := keyGen.Draw(t, "key"), timeGen.Draw(t, "expiresAt")
			got, err := sm.s.Add(k, exp)
			if err != nil {
				t.Fatal(err)
			}
			if want := sm.m.add(k, exp); got != want {
				t.Fatalf("Add(%q, %d) = %v, model %v", k, exp, got, want)
			}
		}
		evict := func(t *rapid.T) {
			w := timeGen.Draw(t, "watermark")
			got, err := sm.s.Evict(w)
			if err != nil {
				t.Fatal(err)
			}
			if want := sm.m.evict(w); got != want {
				t.Fatalf("Evict(%d) = %d, model %d", w, got, want)
			}
		}
		// addBatch adds a run of keys with AddBatch (keys may repeat
		// within the run), and the model adds them one by one.
		addBatch := func(t *rapid.T) {
			n := rapid.IntRange(1, 40).Draw(t, "run")
			var keys []byte
			ends := make([]int32, n)
			exps := make([]int64, n)
			for i := range n {
				keys = append(keys, keyGen.Draw(t, "key")...)
				ends[i] = int32(len(keys))
				exps[i] = timeGen.Draw(t, "expiresAt")
			}
			added := make([]bool, n)
			if err := sm.s.AddBatch(keys, ends, exps, added); err != nil {
				t.Fatal(err)
			}
			start := int32(0)
			for i, end := range ends {
				if want := sm.m.add(keys[start:end], exps[i]); added[i] != want {
					t.Fatalf("AddBatch: key %d (%q, %d) added %v, model %v", i, keys[start:end], exps[i], added[i], want)
				}
				start = end
			}
		}
		actions := map[string]func(*rapid.T){
			"add":      add,
			"addbatch": addBatch,
			"evict":    evict,
			"commit": func(t *rapid.T) {
				sm.batch++
				if err := sm.s.Commit(sm.batch); err != nil {
					t.Fatal(err)
				}
				sm.m.commit(sm.batch)
			},
			"abort": func(t *rapid.T) {
				sm.s.Abort()
				sm.m.restore()
			},
			"reopen": func(t *rapid.T) { sm.reopen(t) },
			"flush": func(t *rapid.T) {
				// The overlay to sstables, at a committed state only (a
				// flush records the state as the last committed one).
				if sm.s.log.ops > 0 {
					return
				}
				if err := sm.s.flush(); err != nil {
					t.Fatal(err)
				}
			},
			"range": func(t *rapid.T) { sm.checkRange(t) },
		}
		// The loop is written out rather than t.Repeat so that histories
		// are longer (rapid's Repeat averages 30 steps) and Adds and Evicts
		// more frequent than the rest: a bug may need a key committed,
		// evicted, added and evicted again in one batch.
		steps := rapid.IntRange(0, 150).Draw(t, "steps")
		for range steps {
			action := actionGen.Draw(t, "action")
			actions[action](t)
			sm.check(t)
		}
		sm.checkRange(t)
		sm.reopen(t)
		sm.check(t)
		sm.checkRange(t)
	})
}

// TestModelExample pins the worked example of Evict's documentation.
func TestModelExample(t *testing.T) {
	s := openTemp(t, Options{})
	for _, e := range []struct {
		k string
		t int64
	}{{"a", 10}, {"b", 20}, {"c", engines.NoExpiry}} {
		mustAdd(t, s, e.k, e.t, true)
	}
	if n := mustEvict(t, s, 15); n != 1 {
		t.Fatalf("Evict(15) = %d, want 1", n)
	}
	if n := mustEvict(t, s, math.MaxInt64); n != 1 {
		t.Fatalf("Evict(MaxInt64) = %d, want 1", n)
	}
	if got := rangeAll(t, s); !bytes.Equal([]byte(got), []byte("c=9223372036854775807;")) {
		t.Fatalf("left %s, want only c", got)
	}
}
