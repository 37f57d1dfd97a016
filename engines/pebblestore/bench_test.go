package pebblestore

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/dedupsim/dedupsim/engines"
)

// Benchmarks count one op per row (or per evicted key), so ns/op and
// allocs/op are per row. Setup (prefilling the live keys) is not timed, but
// it runs again each time the testing package picks a new b.N; for stable
// numbers fix the rows, e.g.
//
//	go test ./engines/pebblestore -run '^$' -bench . -benchtime 200000x -count 6
//
// and compare runs with benchstat. -short keeps only the small sizes.

const (
	// benchBatch is the rows of one micro-batch between Commits.
	benchBatch = 10_000
	// dupWindow is how far back a duplicate reaches: it repeats one of the
	// last dupWindow ids, like a producer retry.
	dupWindow = 10_000
	// idLen is the length of an id: a UUID in its text form.
	idLen = 36
)

// dupShare is the share of rows that repeat an earlier id.
const dupShare = 0.1

// benchSizes are the live-key counts: 1e4 and 1e5, and 1e6 unless -short
// or a smoke run (-benchtime=1x, up to 99x), which must stay quick: the
// prefill of 1e6 keys alone takes tens of seconds on a 2-core machine.
func benchSizes() []int {
	if testing.Short() || smokeRun() {
		return []int{1e4, 1e5}
	}
	return []int{1e4, 1e5, 1e6}
}

// smokeRun reports whether -benchtime asks for fewer than 100 iterations.
func smokeRun() bool {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return false
	}
	n, ok := strings.CutSuffix(f.Value.String(), "x")
	if !ok {
		return false
	}
	k, err := strconv.Atoi(n)
	return err == nil && k < 100
}

// sizeName prints 100000 as 1e5.
func sizeName(n int) string {
	e := 0
	for m := n; m >= 10 && m%10 == 0; m /= 10 {
		e++
	}
	if n == pow10(e) {
		return fmt.Sprintf("1e%d", e)
	}
	return fmt.Sprint(n)
}

func pow10(e int) int {
	n := 1
	for range e {
		n *= 10
	}
	return n
}

// putID writes the id number n as a 36-byte UUID-like string into dst.
func putID(dst []byte, n uint64) {
	const hex = "0123456789abcdef"
	a, b := splitmix(n), splitmix(n^0x5bd1e995)
	j := 0
	for i := range idLen {
		switch i {
		case 8, 13, 18, 23:
			dst[i] = '-'
			continue
		}
		var x uint64
		if j < 16 {
			x = a >> (4 * j)
		} else {
			x = b >> (4 * (j - 16))
		}
		dst[i] = hex[x&15]
		j++
	}
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// rows are the ids of a workload, back to back, idLen bytes each.
type rows []byte

func (r rows) at(i int) []byte { return r[i*idLen : (i+1)*idLen] }
func (r rows) len() int        { return len(r) / idLen }

// makeRows returns n rows following `live` prefilled ids 0..live-1: new ids
// and, with probability dupShare, a repeat of a recent one. The same seed
// gives the store and the bare loop the same rows.
func makeRows(live, n int) rows {
	rng := rand.New(rand.NewPCG(uint64(live), uint64(n)))
	r := make(rows, n*idLen)
	next := uint64(live)
	for i := range n {
		id := next
		if next > 0 && rng.Float64() < dupShare {
			id = next - 1 - rng.Uint64N(min(next, dupWindow))
		} else {
			next++
		}
		putID(r.at(i), id)
	}
	return r
}

// prefill adds ids 0..live-1 to s, expiring at their number (or never), in
// committed batches, and returns the next batch id.
func prefill(b *testing.B, s *Store, live int, noExp bool) int64 {
	var id [idLen]byte
	batch := int64(0)
	for i := range live {
		putID(id[:], uint64(i))
		exp := int64(i)
		if noExp {
			exp = engines.NoExpiry
		}
		if _, err := s.Add(id[:], exp); err != nil {
			b.Fatal(err)
		}
		if (i+1)%benchBatch == 0 {
			if err := s.Commit(batch); err != nil {
				b.Fatal(err)
			}
			batch++
		}
	}
	if err := s.Commit(batch); err != nil {
		b.Fatal(err)
	}
	return batch + 1
}

// BenchmarkStore measures Add per row at a given number of live keys, with
// a micro-batch Commit every benchBatch rows, and reports its ratio to the
// bare Pebble loop over the same rows (x-bare), measured in the same run.
//
//	op=add           every key indexed by expiry, no eviction
//	op=add-noexpiry  NoExpiry keys (dropDuplicates without event time)
//	op=steady        add, then evict what keeps the live keys constant
func BenchmarkStore(b *testing.B) {
	for _, op := range []string{"add", "add-noexpiry", "steady"} {
		for _, live := range benchSizes() {
			b.Run(fmt.Sprintf("op=%s/keys=%s", op, sizeName(live)), func(b *testing.B) {
				benchStore(b, op, live)
			})
		}
	}
}

func benchStore(b *testing.B, op string, live int) {
	s, err := Open(filepath.Join(b.TempDir(), "s"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	noExp := op == "add-noexpiry"
	batch := prefill(b, s, live, noExp)
	rs := makeRows(live, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		exp := int64(live + i) // event time moves on with the rows
		if noExp {
			exp = engines.NoExpiry
		}
		if _, err := s.Add(rs.at(i), exp); err != nil {
			b.Fatal(err)
		}
		if (i+1)%benchBatch == 0 || i == b.N-1 {
			if op == "steady" {
				if _, err := s.Evict(int64(i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Commit(batch); err != nil {
				b.Fatal(err)
			}
			batch++
		}
	}
	b.StopTimer()
	cpu := float64((cpuTime() - cpu0).Nanoseconds()) / float64(b.N)
	perRow := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	m := s.Metrics()
	b.ReportMetric(float64(m.DiskBytes+m.MemTableBytes)/float64(max(1, s.Len())), "bytes/key")
	b.ReportMetric(cpu, "cpu-ns/row")
	bare, bareCPU := bareLoop(b, live, rs, false)
	b.ReportMetric(perRow/bare, "x-bare")
	if bareCPU > 0 {
		b.ReportMetric(cpu/bareCPU, "x-bare-cpu")
	}
}

// bareLoop is the baseline: Pebble with the store's tuning, prefilled with
// the same live keys, doing Get and, if absent, Set for each row in NoSync
// batches of benchBatch. It returns ns per row. It has none of the store's
// work: no expiry index, no read-your-writes within a batch, no metadata.
// It also returns CPU ns per row (see cpuTime). With timed, it runs the
// benchmark timer around the row loop only (the timer must be stopped on
// entry), so that the prefill is not counted in ns/op.
func bareLoop(b *testing.B, live int, rs rows, timed bool) (nsPerRow, cpuPerRow float64) {
	dir := filepath.Join(b.TempDir(), "bare")
	popts, release := pebbleOptions(Options{}, newShared(dir, Options{}), false)
	defer release()
	db, err := pebble.Open(dir, popts)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var key [1 + idLen]byte
	var val [8]byte
	key[0] = 'k'
	batch := db.NewBatch()
	for i := range live {
		putID(key[1:], uint64(i))
		binary.BigEndian.PutUint64(val[:], uint64(i))
		batch.Set(key[:], val[:], nil)
		if (i+1)%benchBatch == 0 {
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := batch.Commit(pebble.NoSync); err != nil {
		b.Fatal(err)
	}
	batch.Reset()
	if timed {
		b.StartTimer()
	}
	start, cpu0 := time.Now(), cpuTime()
	for i := range rs.len() {
		copy(key[1:], rs.at(i))
		_, closer, err := db.Get(key[:])
		switch {
		case err == nil:
			closer.Close()
		case errors.Is(err, pebble.ErrNotFound):
			binary.BigEndian.PutUint64(val[:], uint64(live+i))
			batch.Set(key[:], val[:], nil)
		default:
			b.Fatal(err)
		}
		if (i+1)%benchBatch == 0 || i == rs.len()-1 {
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	if timed {
		b.StopTimer()
	}
	n := float64(rs.len())
	return float64(elapsed.Nanoseconds()) / n, float64(cpu.Nanoseconds()) / n
}

// BenchmarkBarePebble is the baseline of BenchmarkStore on its own, for
// benchstat: ns/op is ns per row. The timer runs around the row loop only:
// the prefill of the live keys (a second or more at 1e5) used to be timed
// too, so ns/op was mostly prefill and did not scale with b.N, and the
// testing package's b.N estimates went wrong.
func BenchmarkBarePebble(b *testing.B) {
	for _, live := range benchSizes() {
		b.Run("keys="+sizeName(live), func(b *testing.B) {
			b.StopTimer()
			rs := makeRows(live, b.N)
			ns, cpu := bareLoop(b, live, rs, true)
			b.ReportMetric(ns, "ns/row")
			b.ReportMetric(cpu, "cpu-ns/row")
		})
	}
}

// BenchmarkEvict measures the cost per evicted key (one op) with stay keys
// that expire later and must not be read. Keys are evicted 1000 per
// watermark step, with a Commit per step, like a watermark advancing by
// micro-batch. The cost must not grow with stay.
func BenchmarkEvict(b *testing.B) {
	for _, stay := range benchSizes() {
		b.Run("stay="+sizeName(stay), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "s"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var id [idLen]byte
			batch := int64(0)
			add := func(n uint64, exp int64) {
				putID(id[:], n)
				if _, err := s.Add(id[:], exp); err != nil {
					b.Fatal(err)
				}
				if s.Len()%benchBatch == 0 {
					if err := s.Commit(batch); err != nil {
						b.Fatal(err)
					}
					batch++
				}
			}
			// The keys that stay expire after every evicted one; the
			// evicted ones are interleaved with them in key order.
			for i := range stay {
				add(uint64(i), 1<<62+int64(i))
			}
			for i := range b.N {
				add(uint64(stay+i), int64(i))
			}
			if err := s.Commit(batch); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			evicted := 0
			for w := 0; w < b.N; w += 1000 {
				n, err := s.Evict(int64(min(w+999, b.N-1)))
				if err != nil {
					b.Fatal(err)
				}
				evicted += n
				batch++
				if err := s.Commit(batch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if evicted != b.N || s.Len() != stay {
				b.Fatalf("evicted %d of %d, %d left of %d", evicted, b.N, s.Len(), stay)
			}
		})
	}
}

// BenchmarkCommit measures one Commit (the op) of a micro-batch of 100 new
// keys, with its changelog written to the OS only (the default) or fsynced. The
// Adds are not timed.
func BenchmarkCommit(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		b.Run(fmt.Sprintf("fsync=%v", fsync), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "s"), Options{Fsync: fsync})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var id [idLen]byte
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				for j := range 100 {
					putID(id[:], uint64(i*100+j))
					if _, err := s.Add(id[:], int64(i)); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := s.Commit(int64(i)); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(s.Metrics().LastCommitBytes), "bytes/commit")
		})
	}
}
