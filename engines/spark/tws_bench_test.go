package spark_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dedupsim/dedupsim/engines/memstore"
	"github.com/dedupsim/dedupsim/engines/spark"
)

// twsBenchBatch is the rows per batch of BenchmarkTWSDedupTTL; batches
// are twsBenchStepMs apart in processing time.
const (
	twsBenchBatch  = 1000
	twsBenchStepMs = 100
)

// BenchmarkTWSDedupTTL measures the transformWithState dedup with a TTL in
// steady traffic: every batch sets twsBenchBatch new keys and as many
// expire, so that live= keys stay in state (the TTL is live/batch
// batches). ns/op is per row. Three paths in the same run:
//
//   - index: the memory store names the keys its expiry index evicts
//     (EvictKeys); a batch touches only what expires.
//   - listing: the same store without EvictKeys, listed whole at each
//     batch where something expires (the Pebble store's path, and every
//     store's before the index path): grows with live state.
//   - bare: the memory store's own Add and Evict, no processor: the
//     baseline the index path is compared with (ratio in the report).
func BenchmarkTWSDedupTTL(b *testing.B) {
	for _, live := range []int{10_000, 1_000_000} {
		for _, path := range []string{"bare", "index", "listing"} {
			b.Run(fmt.Sprintf("live=%d/%s", live, path), func(b *testing.B) {
				benchTWS(b, live, path)
			})
		}
	}
}

func benchTWS(b *testing.B, live int, path string) {
	ttlMs := int64(live/twsBenchBatch) * twsBenchStepMs
	m := memstore.New()
	var d *spark.TWSDedup
	switch path {
	case "index":
		d = spark.NewTWSDedup(m, ttlMs)
	case "listing":
		ranges := 0
		d = spark.NewTWSDedup(listingOnly{Store: m, Ranger: m, ranges: &ranges}, ttlMs)
	}
	keys := make([]byte, 8*twsBenchBatch)
	ends := make([]int32, twsBenchBatch)
	times := make([]int64, twsBenchBatch)
	added := make([]bool, twsBenchBatch)
	exps := make([]int64, twsBenchBatch)
	for i := range ends {
		ends[i] = int32(8 * (i + 1))
	}
	var next uint64
	at := int64(0)
	batch := func(n int) {
		for i := range n {
			binary.LittleEndian.PutUint64(keys[8*i:], next)
			next++
		}
		var err error
		if d == nil {
			// The bare store: what the processor does, without it.
			if _, err = m.Evict(at * 1000); err == nil {
				err = m.AddBatch(keys[:8*n], ends[:n], fillExp(exps[:n], (at+ttlMs)*1000), added[:n])
			}
		} else if err = d.StartBatch(at); err == nil {
			err = d.ProcessBatch(keys[:8*n], ends[:n], times[:n], added[:n])
		}
		if err != nil {
			b.Fatal(err)
		}
		at += twsBenchStepMs
	}
	// Reach the steady state: live keys, and one batch's worth expiring
	// at each batch.
	for range live/twsBenchBatch + 1 {
		batch(twsBenchBatch)
	}
	if n := m.Len(); n < live || n > live+twsBenchBatch {
		b.Fatalf("%d keys live, want about %d", n, live)
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += twsBenchBatch {
		batch(min(twsBenchBatch, b.N-done))
	}
	b.StopTimer()
	if d != nil && d.Removed() == 0 {
		b.Fatalf("the last batch removed nothing: not steady TTL traffic")
	}
}

// fillExp sets every element of buf to v (the bare path's expiries) and
// returns it.
func fillExp(buf []int64, v int64) []int64 {
	for i := range buf {
		buf[i] = v
	}
	return buf
}
