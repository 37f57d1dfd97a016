package engines_test

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/pebblestore"
	"github.com/dedupsim/dedupsim/internal/enginetest"
)

// skipBarePebble leaves the bare Pebble loop out of BenchmarkEngine: it is
// the slowest part at 1e7 keys (a Pebble memtable insert per new key), and
// the memory store's bare map loop, in the same run, is the reference the
// targets name.
var skipBarePebble = flag.Bool("skip-bare-pebble", false, "BenchmarkEngine: measure the Pebble store without the bare Pebble loop")

// pebbleBenchStore is the Pebble store under BenchmarkEngine and
// BenchmarkEvict, measured against a bare Pebble loop, at the memory
// store's sizes: 1e5, 1e6 and 1e7 live keys.
func pebbleBenchStore() benchStore {
	sizes := enginetest.BenchSizes()
	base := runPebbleBaseline
	if *skipBarePebble {
		base = nil
	}
	return benchStore{
		name: "pebble",
		open: func(b *testing.B) engines.Store {
			s, err := pebblestore.Open(filepath.Join(b.TempDir(), "store"), pebblestore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
		base:      base,
		baseEvict: pebbleEvictWindow,
		sizes:     sizes,
	}
}

// barePebble is the bare Pebble loop: Pebble tuned as the store tunes it
// (block cache and memtable sizes, bloom filters, no compression), one
// key per id with its expiry as an 8-byte value, Get and, when absent, Set
// in a pebble.Batch committed with NoSync once per micro-batch. Expired
// keys are deleted through an arrival-order FIFO kept in memory, like the
// map baseline. It has none of the store's work: no expiry index in
// Pebble, no read-your-writes within a batch (a repeat within its batch
// is Set again), no metadata, no count.
type barePebble struct {
	db    *pebble.DB
	cache *pebble.Cache
	batch *pebble.Batch
	key   []byte
	val   [8]byte
	// ops counts the batch's writes, to commit the priming of
	// dedupe-noevict (which never evicts) once per enginetest.BatchRows.
	ops int
}

func openBarePebble(b *testing.B) *barePebble {
	dir := filepath.Join(b.TempDir(), "bare")
	cache := pebble.NewCache(pebblestore.DefaultCacheSize)
	o := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                pebblestore.DefaultMemTableSize,
		MemTableStopWritesThreshold: 4,
		FormatMajorVersion:          pebble.FormatNewest,
	}
	o.Levels = make([]pebble.LevelOptions, 7)
	for i := range o.Levels {
		o.Levels[i].Compression = pebble.NoCompression
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		o.Levels[i].FilterType = pebble.TableFilter
	}
	o.EnsureDefaults()
	db, err := pebble.Open(dir, o)
	if err != nil {
		b.Fatal(err)
	}
	return &barePebble{db: db, cache: cache, batch: db.NewBatch(), key: []byte{'k'}}
}

func (p *barePebble) close() {
	p.batch.Close()
	p.db.Close()
	p.cache.Unref()
}

// keyFIFO is barePebble's arrival-order FIFO of (key, expiry). Ids are
// fixed-length, so entry i's key is keys[i*enginetest.IDLen:(i+1)*enginetest.IDLen], and the
// FIFO costs no allocation per key.
type keyFIFO struct {
	keys []byte
	exps []int64
	head int
}

func (f *keyFIFO) push(key []byte, exp int64) {
	f.keys = append(f.keys, key...)
	f.exps = append(f.exps, exp)
}

// add is Get, then Set when absent; it reports whether it set.
func (p *barePebble) add(key []byte, exp int64, fifo *keyFIFO) (bool, error) {
	p.key = append(p.key[:1], key...)
	_, closer, err := p.db.Get(p.key)
	switch {
	case err == nil:
		return false, closer.Close()
	case !errors.Is(err, pebble.ErrNotFound):
		return false, err
	}
	binary.BigEndian.PutUint64(p.val[:], uint64(exp))
	if err := p.batch.Set(p.key, p.val[:], nil); err != nil {
		return false, err
	}
	p.ops++
	if fifo != nil {
		fifo.push(key, exp)
	}
	return true, nil
}

// set is add without the Get: it sets the key whether or not it is there
// (the priming of the state).
func (p *barePebble) set(key []byte, exp int64, fifo *keyFIFO) (bool, error) {
	p.key = append(p.key[:1], key...)
	binary.BigEndian.PutUint64(p.val[:], uint64(exp))
	if err := p.batch.Set(p.key, p.val[:], nil); err != nil {
		return false, err
	}
	p.ops++
	if fifo != nil {
		fifo.push(key, exp)
	}
	return true, nil
}

// evict deletes the expired keys at the front of the FIFO.
func (p *barePebble) evict(wm int64, f *keyFIFO) (int, error) {
	n := 0
	for f.head < len(f.exps) && f.exps[f.head] <= wm {
		p.key = append(p.key[:1], f.keys[f.head*enginetest.IDLen:(f.head+1)*enginetest.IDLen]...)
		if err := p.batch.Delete(p.key, nil); err != nil {
			return n, err
		}
		f.head++
		n++
	}
	p.ops += n
	// Compact once the popped front is the larger half: amortized O(1).
	if f.head > len(f.exps)/2 {
		f.keys = f.keys[:copy(f.keys, f.keys[f.head*enginetest.IDLen:])]
		f.exps = f.exps[:copy(f.exps, f.exps[f.head:])]
		f.head = 0
	}
	return n, nil
}

// commit commits the batch with NoSync.
func (p *barePebble) commit() error {
	err := p.batch.Commit(pebble.NoSync)
	p.batch.Reset()
	p.ops = 0
	return err
}

// live counts the keys in the database (untimed, after a run).
func (p *barePebble) live() int {
	it, err := p.db.NewIter(nil)
	if err != nil {
		return 0
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	it.Close()
	return n
}

// runPebbleBaseline is enginetest.RunEngine's twin over the bare Pebble loop: the same
// priming, the same rows, one commit per batch. Its bytes per key are the
// Go heap's growth (Pebble's memtables and block cache), as for the store.
func runPebbleBaseline(b *testing.B, k enginetest.Kind, live int, g *enginetest.StreamGen, rows *enginetest.RowBlock, before uint64) (enginetest.RunResult, float64) {
	p := openBarePebble(b)
	defer p.close()
	var fifo *keyFIFO
	if k.Evicts() {
		fifo = &keyFIFO{}
	}
	err := enginetest.Prime(g, k, live,
		func(key []byte, et int64) error {
			// The state only has to hold the live keys: set them without
			// a Get first, or 1e7 keys would take many minutes.
			if _, err := p.set(key, k.Expiry(et, live), fifo); err != nil {
				return err
			}
			if p.ops >= enginetest.BatchRows {
				return p.commit()
			}
			return nil
		},
		func(wm int64) error {
			if _, err := p.evict(wm, fifo); err != nil {
				return err
			}
			return p.commit()
		})
	if err == nil {
		err = p.commit()
	}
	if err != nil {
		b.Fatal(err)
	}
	delay := k.DelayMicros(live)
	var r enginetest.RunResult
	t := enginetest.StartLoop(nil)
	for bi, start := 0, 0; start < rows.Len(); bi, start = bi+1, start+enginetest.BatchRows {
		end := min(start+enginetest.BatchRows, rows.Len())
		for i := start; i < end; i++ {
			added, err := p.add(rows.Key(i), k.Expiry(rows.Times[i], live), fifo)
			if err != nil {
				b.Fatal(err)
			}
			if added {
				r.Emitted++
			}
		}
		if k.Evicts() {
			n, err := p.evict(rows.BatchMax[bi]-delay, fifo)
			if err != nil {
				b.Fatal(err)
			}
			r.Evicted += n
		}
		if err := p.commit(); err != nil {
			b.Fatal(err)
		}
	}
	t.Stop(&r)
	return r, enginetest.PerKey(before, p.live())
}

// pebbleEvictWindow is BenchmarkEvict's bare loop for the Pebble store:
// Set in NoSync batches, and deletes through an arrival-order FIFO.
func pebbleEvictWindow(b *testing.B, stay int) (*window, func() int, func()) {
	p := openBarePebble(b)
	fifo := &keyFIFO{}
	w := &window{stay: stay,
		add: func(key []byte, exp int64) error {
			_, err := p.add(key, exp, fifo)
			return err
		},
		evict:  func(wm int64) (int, error) { return p.evict(wm, fifo) },
		commit: p.commit,
	}
	return w, p.live, p.close
}

// diskPerKey returns a Pebble store's disk and memtable bytes per key, 0
// for other stores.
func diskPerKey(s engines.Store) float64 {
	ps, ok := s.(*pebblestore.Store)
	if !ok || s.Len() == 0 {
		return 0
	}
	m := ps.Metrics()
	return float64(m.DiskBytes+m.MemTableBytes) / float64(s.Len())
}

// flushPerKey returns the time a Pebble store spent writing its overlay to
// sstables per key written, 0 for other stores or without a flush.
func flushPerKey(s engines.Store) float64 {
	ps, ok := s.(*pebblestore.Store)
	if !ok {
		return 0
	}
	m := ps.Metrics()
	return float64(m.FlushTime.Nanoseconds()) / float64(max(m.FlushKeys, 1))
}

// TestBenchmarksRun runs every benchmark of the package once, in its
// short form (-benchtime 1x -short: the smallest size), in a child
// process, so that go test ./... catches a benchmark that fails its own
// checks (an engine against its bare loop) or no longer runs, for the
// memory and the Pebble store alike.
func TestBenchmarksRun(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=.", "-test.benchtime=1x", "-test.short")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the benchmarks failed: %v\n%s", err, out)
	}
	for _, k := range []enginetest.Kind{enginetest.DedupeNoEvict, enginetest.DedupeEvict, enginetest.Within} {
		for _, st := range []string{"memory", "pebble"} {
			name := fmt.Sprintf("BenchmarkEngine/engine=%s/store=%s/", k, st)
			if !strings.Contains(string(out), name) {
				t.Errorf("%s did not run:\n%s", name, out)
			}
		}
	}
	for _, name := range []string{"BenchmarkEvict/store=memory/", "BenchmarkEvict/store=pebble/", "BenchmarkBatchAdd/"} {
		if !strings.Contains(string(out), name) {
			t.Errorf("%s did not run:\n%s", name, out)
		}
	}
}
