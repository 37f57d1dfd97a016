package flink

import (
	"fmt"
	"testing"
)

// TestRocksDBKeepsExpiredUntilCompaction: ten flags written at TTL time 0
// (TTL 10) are expired at 20. On RocksDB, with Flink's default
// incremental cleanup size configured, a thousand accesses of key z
// remove none of them (RocksDB's state has no incremental visitor); a
// read of k0 clears k0 and writes it again; a compaction at 20 drops the
// other nine, and a second one drops nothing.
func TestRocksDBKeepsExpiredUntilCompaction(t *testing.T) {
	op, err := New(Config{TTL: 10, GenerateInsert: true, Version: Newest(), CleanupSize: DefaultCleanupSize, RocksDB: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []Change
	for i := range 10 {
		out = op.Process(Row{Key: fmt.Sprint("k", i)}, out[:0])
	}
	op.SetTTLTime(20)
	for range 1000 {
		out = op.Process(Row{Key: "z"}, out[:0])
	}
	if l, p := op.LogicalEntries(), op.PhysicalEntries(); l != 1 || p != 11 {
		t.Fatalf("after z's accesses: logical %d physical %d, want 1 and 11", l, p)
	}
	if s := op.Stats(); s.CleanupVisited != 0 {
		t.Fatalf("incremental cleanup ran on RocksDB: %+v", s)
	}
	out = op.Process(Row{Key: "k0"}, out[:0])
	if len(out) != 1 || out[0].Kind != Insert {
		t.Fatalf("k0 after expiry: %v, want +I", out)
	}
	if l, p, d := op.LogicalEntries(), op.PhysicalEntries(), op.Stats().Deletes; l != 2 || p != 11 || d != 1 {
		t.Fatalf("after k0: logical %d physical %d deletes %d, want 2, 11, 1", l, p, d)
	}
	if n := op.Compact(); n != 9 {
		t.Fatalf("compaction dropped %d, want 9", n)
	}
	if l, p := op.LogicalEntries(), op.PhysicalEntries(); l != 2 || p != 2 {
		t.Fatalf("after compaction: logical %d physical %d, want 2 and 2", l, p)
	}
	if n := op.Compact(); n != 0 {
		t.Fatalf("second compaction dropped %d, want 0", n)
	}
	// z (written at 20) and k0 (written at 20) expire at 30 together.
	op.SetTTLTime(30)
	if n := op.Compact(); n != 2 || op.LogicalEntries() != 0 || op.PhysicalEntries() != 0 {
		t.Fatalf("at 30: dropped %d, logical %d physical %d, want 2, 0, 0", n, op.LogicalEntries(), op.PhysicalEntries())
	}
}

// TestHeapIgnoresCompact: on the heap backend a compaction is not a thing:
// Compact drops nothing.
func TestHeapIgnoresCompact(t *testing.T) {
	op, err := New(Config{TTL: 10, GenerateInsert: true, Version: Newest()})
	if err != nil {
		t.Fatal(err)
	}
	op.Process(Row{Key: "a"}, nil)
	op.SetTTLTime(10)
	if n := op.Compact(); n != 0 || op.PhysicalEntries() != 1 {
		t.Fatalf("heap compaction dropped %d, physical %d", n, op.PhysicalEntries())
	}
}

// TestRocksBytes checks the arithmetic of docs/flink.md on a key of one
// STRING column "k1" (BinaryRowData: 8-byte null bit set, one 8-byte
// field holding the 2 bytes inline: 16) and a row of two columns, a
// 36-byte STRING and a BIGINT (8 + 16 + 40 = 64).
func TestRocksBytes(t *testing.T) {
	keyRow := BinaryRowBytes(1, 0)
	if keyRow != 16 {
		t.Fatalf("key row %d, want 16", keyRow)
	}
	row := BinaryRowBytes(2, 36)
	if row != 64 {
		t.Fatalf("row %d, want 64", row)
	}
	key := RocksKeyBytes(keyRow) // 1 + 4 + 16 + 1
	if key != 22 {
		t.Errorf("key %d, want 22", key)
	}
	for _, c := range []struct {
		holdsRow, ttl bool
		want          int64
	}{
		{false, false, 1}, // Boolean
		{false, true, 9},  // timestamp + Boolean
		{true, false, 68}, // 4 + 64
		{true, true, 76},  // 8 + 4 + 64
	} {
		if got := RocksValueBytes(c.holdsRow, row, c.ttl); got != c.want {
			t.Errorf("value (row %v, ttl %v) %d, want %d", c.holdsRow, c.ttl, got, c.want)
		}
	}
	// What the oracle read raw from Flink 2.3.0's RocksDB (oracles/flink/run
	// -v) for a row (id STRING "a", v BIGINT, a TIMESTAMP_LTZ(3)): 32 row
	// bytes; keep-last's value with TTL 44, the 2.1+ keep-first's waiting
	// row (no TTL) 36.
	row3 := BinaryRowBytes(3, 0)
	if v := RocksValueBytes(true, row3, true); row3 != 32 || v != 44 {
		t.Errorf("three-column row %d, value with TTL %d; want 32 and 44", row3, v)
	}
	if v := RocksValueBytes(true, row3, false); v != 36 {
		t.Errorf("three-column row without TTL %d, want 36", v)
	}
	if got := RocksEntryBytes(key, 9); got != 22+9+8+4 {
		t.Errorf("entry %d, want 43", got)
	}
}
