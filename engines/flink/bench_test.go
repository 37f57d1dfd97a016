package flink

import (
	"math/rand/v2"
	"testing"
)

// benchRows is a keep-first workload: 36-byte keys, one row per
// millisecond of TTL clock, a third of the rows a copy of a key seen in
// the last 2,000 rows, TTL 1 s (about 670 live keys).
type benchRows struct {
	keys [][]byte
	ttl  int64
}

func newBenchRows(n int) benchRows {
	rng := rand.New(rand.NewPCG(7, 24))
	keys := make([][]byte, n)
	for i := range keys {
		k := i
		if i >= 2000 && rng.IntN(3) == 0 {
			k = i - 1 - rng.IntN(2000)
		}
		keys[i] = uuidKey(make([]byte, 0, 36), k)
	}
	return benchRows{keys: keys, ttl: 1000}
}

// mapBaseline is the bare Go map a dedup could start from: key -> time of
// the flag's write, string(key) lookups (no allocation), a string key
// allocated per new key, and expired keys deleted only when read again
// (no cleanup, no count).
type mapBaseline struct {
	m   map[string]int64
	ttl int64
}

func (b *mapBaseline) process(key []byte, now int64) bool {
	if w, ok := b.m[string(key)]; ok && w+b.ttl > now {
		return false
	}
	b.m[string(key)] = now
	return true
}

// BenchmarkKeepFirstRows reports the model's per-row cost (proctime
// keep-first with TTL and Flink's incremental cleanup, a logical count
// every 1,000 rows) and a bare Go map's on the same rows, and their
// ratio: ns/row and allocs/op are per row.
//
//	go test ./engines/flink -run '^$' -bench KeepFirstRows -benchmem
func BenchmarkKeepFirstRows(b *testing.B) {
	rows := newBenchRows(1 << 16)
	var nsFlink, nsMap float64
	b.Run("impl=flink", func(b *testing.B) {
		op, err := New(Config{TTL: rows.ttl, GenerateInsert: true, Version: Newest(), CleanupSize: DefaultCleanupSize})
		if err != nil {
			b.Fatal(err)
		}
		out := make([]Change, 0, 4)
		now := int64(0)
		for _, k := range rows.keys { // warm up: the state at its size
			now++
			op.SetTTLTime(now)
			out = op.ProcessBytes(k, nil, 0, 0, out[:0])
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			now++
			op.SetTTLTime(now)
			out = op.ProcessBytes(rows.keys[i&(len(rows.keys)-1)], nil, 0, i, out[:0])
			if i%1000 == 0 {
				op.LogicalEntries()
			}
		}
		nsFlink = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(nsFlink, "ns/row")
	})
	// RocksDB: no incremental cleanup; a full compaction every 65,536
	// rows (a scenario estimates one every 256 MiB written, some millions
	// of rows), so that its scan is in the per-row cost.
	var nsRocks float64
	b.Run("impl=flink-rocksdb", func(b *testing.B) {
		op, err := New(Config{TTL: rows.ttl, GenerateInsert: true, Version: Newest(), RocksDB: true})
		if err != nil {
			b.Fatal(err)
		}
		out := make([]Change, 0, 4)
		now := int64(0)
		for _, k := range rows.keys {
			now++
			op.SetTTLTime(now)
			out = op.ProcessBytes(k, nil, 0, 0, out[:0])
		}
		op.Compact()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			now++
			op.SetTTLTime(now)
			out = op.ProcessBytes(rows.keys[i&(len(rows.keys)-1)], nil, 0, i, out[:0])
			if i%1000 == 0 {
				op.LogicalEntries()
			}
			if i&(1<<16-1) == 1<<16-1 {
				op.Compact()
			}
		}
		nsRocks = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(nsRocks, "ns/row")
	})
	b.Run("impl=gomap", func(b *testing.B) {
		base := mapBaseline{m: make(map[string]int64), ttl: rows.ttl}
		now := int64(0)
		for _, k := range rows.keys {
			now++
			base.process(k, now)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			now++
			base.process(rows.keys[i&(len(rows.keys)-1)], now)
		}
		nsMap = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(nsMap, "ns/row")
		if nsMap > 0 && nsFlink > 0 {
			b.ReportMetric(nsFlink/nsMap, "flink/gomap")
		}
		if nsMap > 0 && nsRocks > 0 {
			b.ReportMetric(nsRocks/nsMap, "rocksdb/gomap")
		}
	})
}
