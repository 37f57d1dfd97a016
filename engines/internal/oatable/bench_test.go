package oatable

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// before is the table as engines/memstore and engines/flink carried it
// before this package (memstore's table: probe, growth, removal by ref
// with backward-shift deletion, no segment counts), kept only as
// BenchmarkTable's baseline: the ratio of the shared table to it, in the
// same run, says whether the move slowed the stores' hot paths.
type before struct {
	slots []Slot
	shift uint32
	mask  uint32
	n     int
	limit int
}

func newBefore(bits uint32) before {
	var t before
	t.resize(bits)
	return t
}

func (t *before) resize(bits uint32) {
	old := t.slots
	t.slots = make([]Slot, 1<<bits)
	t.shift = 32 - bits
	t.mask = 1<<bits - 1
	t.limit = len(t.slots) / maxLoadDen * maxLoadNum
	for _, s := range old {
		if s.Ref == 0 {
			continue
		}
		i := s.Tag >> t.shift
		for t.slots[i].Ref != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = s
	}
}

func (t *before) grow() {
	if t.n >= t.limit {
		t.resize(32 - t.shift + 1)
	}
}

func (t *before) remove(tag, ref uint32) {
	i := tag >> t.shift
	for t.slots[i].Ref != ref {
		if t.slots[i].Ref == 0 {
			panic("not in the table")
		}
		i = (i + 1) & t.mask
	}
	t.n--
	j := i
	for {
		t.slots[i] = Slot{}
		for {
			j = (j + 1) & t.mask
			s := t.slots[j]
			if s.Ref == 0 {
				return
			}
			home := s.Tag >> t.shift
			if (j-home)&t.mask >= (j-i)&t.mask {
				t.slots[i] = s
				i = j
				break
			}
		}
	}
}

// benchKeys is a sliding window of live keys, as a dedup with expiry
// holds them: each round adds a key (a probe that misses and inserts),
// looks up a live one (a probe that hits) and removes the oldest (by
// ref). key[ref] is the key of ref; tags come from a fixed hash.
type benchKeys struct {
	key  []uint64
	tags []uint32
}

func newBenchKeys(n int) benchKeys {
	rng := rand.New(rand.NewPCG(1, 2))
	k := benchKeys{key: make([]uint64, n+1), tags: make([]uint32, n+1)}
	for i := 1; i <= n; i++ {
		k.key[i] = rng.Uint64()
		h := k.key[i] * 0x9E3779B97F4A7C15
		h ^= h >> 29
		k.tags[i] = uint32(h >> 32)
	}
	return k
}

// roundBefore is one round on the baseline: key ref added (a probe that
// misses and inserts, or hits when the key is live), and, once live keys
// are held, the key added live rounds ago removed by its ref.
func (k *benchKeys) roundBefore(t *before, i, live int) {
	n := len(k.key) - 1
	ref := uint32(i%n + 1)
	tag, key := k.tags[ref], k.key[ref]
	t.grow()
	j := tag >> t.shift
	for t.slots[j].Ref != 0 && !(t.slots[j].Tag == tag && k.key[t.slots[j].Ref] == key) {
		j = (j + 1) & t.mask
	}
	if t.slots[j].Ref == 0 {
		t.slots[j] = Slot{Tag: tag, Ref: ref}
		t.n++
	}
	if i >= live {
		old := uint32((i-live)%n + 1)
		t.remove(k.tags[old], old)
	}
}

// round is roundBefore on the shared table, through its methods.
func (k *benchKeys) round(t *Table, i, live int) {
	n := len(k.key) - 1
	ref := uint32(i%n + 1)
	tag, key := k.tags[ref], k.key[ref]
	t.Grow()
	j := t.Home(tag)
	for t.Slots[j].Ref != 0 && !(t.Slots[j].Tag == tag && k.key[t.Slots[j].Ref] == key) {
		j = t.Next(j)
	}
	if t.Slots[j].Ref == 0 {
		t.Put(j, Slot{Tag: tag, Ref: ref})
	}
	if i >= live {
		old := uint32((i-live)%n + 1)
		t.Remove(k.tags[old], old)
	}
}

// BenchmarkTable runs the same rounds (an insert, a removal by ref, at a
// steady number of live keys) on the shared table and on the code before
// it, alternately in chunks of 4,096 rounds within one run (each going
// first in turn), so that both see the same machine: ns/round-before and ns/round-oatable are per
// round, oatable/before their ratio (1.0: as fast).
//
//	go test ./engines/internal/oatable -run '^$' -bench Table -count 5
func BenchmarkTable(b *testing.B) {
	for _, live := range []int{1 << 16, 1 << 20} {
		b.Run(fmt.Sprintf("live=%d", live), func(b *testing.B) {
			keys := newBenchKeys(4 * live)
			old, tab := newBefore(4), New(4)
			for i := range live {
				keys.roundBefore(&old, i, live)
				keys.round(&tab, i, live)
			}
			const chunk = 4096
			var nsOld, nsNew time.Duration
			b.ResetTimer()
			runOld := func(from, to int) time.Duration {
				start := time.Now()
				for i := from; i < to; i++ {
					keys.roundBefore(&old, i, live)
				}
				return time.Since(start)
			}
			runNew := func(from, to int) time.Duration {
				start := time.Now()
				for i := from; i < to; i++ {
					keys.round(&tab, i, live)
				}
				return time.Since(start)
			}
			for done := 0; done < b.N; done += chunk {
				from, to := live+done, live+min(done+chunk, b.N)
				// Whichever goes second finds the chunk's keys in cache:
				// take turns.
				if done/chunk%2 == 0 {
					nsOld += runOld(from, to)
					nsNew += runNew(from, to)
				} else {
					nsNew += runNew(from, to)
					nsOld += runOld(from, to)
				}
			}
			if old.n != tab.Len() {
				b.Fatalf("%d keys in the baseline, %d in the table", old.n, tab.Len())
			}
			b.ReportMetric(float64(nsOld.Nanoseconds())/float64(b.N), "ns/round-before")
			b.ReportMetric(float64(nsNew.Nanoseconds())/float64(b.N), "ns/round-oatable")
			b.ReportMetric(float64(nsNew)/float64(nsOld), "oatable/before")
		})
	}
}
