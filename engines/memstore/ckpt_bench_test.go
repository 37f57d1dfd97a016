package memstore

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/internal/enginetest"
)

// The checkpoint benchmark drives a store with batches of new 36-byte ids,
// adds, eviction and a commit per batch, once on a store without a
// checkpoint and once on a checkpointed one, over the same rows. b.N is
// the number of rows:
//
//	go test ./engines/memstore -run '^$' -bench Checkpointed -benchtime 1000000x
//	go test ./engines/memstore -run '^$' -bench Checkpointed -benchtime 10000000x
//
// evict=true keeps ckptLive ids (each expires ckptLive rows after it came),
// so the state is the same at any length and the per-row cost must stay
// flat; evict=false keeps every id (the unbounded query), so the state
// grows with the run and the snapshots with it. A smoke run (b.N below
// ckptSmokeRows, or -short) runs ckptSmokeRows rows; TestCheckpointBench
// runs that in `go test`.
const (
	ckptBatch     = 5_000
	ckptLive      = 250_000
	ckptSmokeRows = 100_000
)

// ckptResult is one timed run.
type ckptResult struct {
	// wall is the run's time, commit the part of it spent in Commit (and
	// Close): what the query waits for its checkpoint.
	wall, commit time.Duration
	// joined is the part of commit spent in the commits that waited for
	// a background snapshot (halfway to the next, or to start the next).
	joined time.Duration
	// cpu is the process's CPU time over the run, the background
	// snapshots' included.
	cpu     time.Duration
	mallocs uint64
	// keys is the state's size at the end, snapshots and bytes what the
	// checkpointed store wrote.
	keys      int
	snapshots int
	bytes     int64
}

// ckptRun runs rows rows through s in batches, then closes it, timed
// (Close included: it waits for a snapshot under way).
func ckptRun(tb testing.TB, s engines.Store, rows int, evict bool) ckptResult {
	tb.Helper()
	var key [enginetest.IDLen]byte
	runtime.GC()
	var r ckptResult
	loop := enginetest.StartLoop(nil)
	for b := 0; b*ckptBatch < rows; b++ {
		for i := b * ckptBatch; i < min(rows, (b+1)*ckptBatch); i++ {
			enginetest.PutID(key[:], uint64(i))
			exp := engines.NoExpiry
			if evict {
				exp = int64(i) + ckptLive
			}
			if _, err := s.Add(key[:], exp); err != nil {
				tb.Fatal(err)
			}
		}
		if evict {
			if _, err := s.Evict(int64((b + 1) * ckptBatch)); err != nil {
				tb.Fatal(err)
			}
		}
		var bg *bgSnapshot
		c, ok := s.(*Checkpointed)
		if ok {
			bg = c.bg
		}
		tc := time.Now()
		if err := s.Commit(int64(b)); err != nil {
			tb.Fatal(err)
		}
		d := time.Since(tc)
		r.commit += d
		if ok && bg != nil && c.bg != bg {
			r.joined += d
		}
	}
	r.keys = s.Len()
	if c, ok := s.(*Checkpointed); ok {
		r.bytes = c.BytesWritten
	}
	tc := time.Now()
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	r.commit += time.Since(tc)
	var rr enginetest.RunResult
	loop.Stop(&rr)
	r.wall, r.cpu, r.mallocs = rr.Elapsed, rr.CPU, rr.Mallocs
	return r
}

// ckptCompare runs rows rows on a plain store, then on a checkpointed one
// in dir.
func ckptCompare(tb testing.TB, dir string, rows int, evict bool) (plain, ck ckptResult) {
	plain = ckptRun(tb, New(), rows, evict)
	c, err := Open(dir, 0, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	ck = ckptRun(tb, c, rows, evict)
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".snapshot") {
			ck.snapshots++
		}
	}
	return plain, ck
}

// BenchmarkCheckpointed reports, per row: ns/row and allocs/row of the
// checkpointed store, plain-ns/row and plain-allocs/row of the store
// without a checkpoint, ratio (wall over wall; target at most 1.5, flat in
// the run's length), commit-ns/row (the checkpointed store's time in
// Commit and Close, deltas written and snapshots started or waited for:
// what the query waits for), joining-commit-ns/row (the part of it in
// the commits that waited for a snapshot to end), cpu-ns/row, plain-cpu-ns/row and cpu-ratio
// (process CPU time, the background snapshots' included: steadier than
// the wall clock on a shared machine), ckpt-bytes/row (deltas and snapshots written) and
// snapshots (files written in the run).
func BenchmarkCheckpointed(b *testing.B) {
	for _, evict := range []bool{true, false} {
		b.Run(fmt.Sprintf("evict=%v", evict), func(b *testing.B) {
			rows := b.N
			if testing.Short() || rows < ckptSmokeRows {
				rows = ckptSmokeRows
			}
			plain, ck := ckptCompare(b, b.TempDir(), rows, evict)
			n := float64(rows)
			b.ReportMetric(float64(ck.wall.Nanoseconds())/n, "ns/row")
			b.ReportMetric(float64(plain.wall.Nanoseconds())/n, "plain-ns/row")
			b.ReportMetric(float64(ck.wall)/float64(plain.wall), "ratio")
			b.ReportMetric(float64(ck.commit.Nanoseconds())/n, "commit-ns/row")
			b.ReportMetric(float64(ck.joined.Nanoseconds())/n, "joining-commit-ns/row")
			b.ReportMetric(float64(ck.cpu.Nanoseconds())/n, "cpu-ns/row")
			b.ReportMetric(float64(plain.cpu.Nanoseconds())/n, "plain-cpu-ns/row")
			b.ReportMetric(float64(ck.cpu)/float64(max(plain.cpu, 1)), "cpu-ratio")
			b.ReportMetric(float64(ck.mallocs)/n, "allocs/row")
			b.ReportMetric(float64(plain.mallocs)/n, "plain-allocs/row")
			b.ReportMetric(float64(ck.bytes)/n, "ckpt-bytes/row")
			b.ReportMetric(float64(ck.snapshots), "snapshots")
		})
	}
}

// TestCheckpointBench runs the benchmark's smoke size: both stores end
// with the same state, and the checkpointed one wrote snapshots in the
// background, spaced by bytes rather than one every SnapshotEvery
// versions, and allocated a bounded number of times per batch, not per
// row.
func TestCheckpointBench(t *testing.T) {
	for _, evict := range []bool{true, false} {
		plain, ck := ckptCompare(t, t.TempDir(), ckptSmokeRows, evict)
		batches := ckptSmokeRows / ckptBatch
		if ck.keys != plain.keys || ck.keys == 0 {
			t.Fatalf("evict=%v: %d keys checkpointed, %d plain", evict, ck.keys, plain.keys)
		}
		if ck.snapshots == 0 || ck.snapshots >= batches {
			t.Fatalf("evict=%v: %d snapshots in %d batches", evict, ck.snapshots, batches)
		}
		if extra := int(ck.mallocs) - int(plain.mallocs); extra > 200*batches {
			t.Fatalf("evict=%v: %d more allocations than without a checkpoint over %d rows", evict, extra, ckptSmokeRows)
		}
	}
}
