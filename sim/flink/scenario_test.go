package flink

import (
	"encoding/binary"
	"testing"

	ef "github.com/dedupsim/dedupsim/engines/flink"
	"github.com/dedupsim/dedupsim/generators"
)

const keepFirstSQL = "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1"

// TestScenarioOperatorAllocatesNothingPerRow: a scenario row, new key or
// duplicate, allocates nothing once the state has its size (the key was
// copied into a string per row before).
func TestScenarioOperatorAllocatesNothingPerRow(t *testing.T) {
	for _, backend := range []string{"hashmap", "rocksdb"} {
		t.Run(backend, func(t *testing.T) { allocatesNothingPerRow(t, backend) })
	}
}

// allocatesNothingPerRow runs TestScenarioOperatorAllocatesNothingPerRow
// on one backend (on RocksDB the estimated compactions come every 1 KiB
// written, so that they run inside the measured rows).
func allocatesNothingPerRow(t *testing.T, backend string) {
	sq, err := ParseScenarioQuery(keepFirstSQL, map[string]string{"table.exec.state.ttl": "100 ms", OptStateBackend: backend})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"hashmap": ef.DefaultCleanupSize, "rocksdb": 0}[backend]; sq.Config.CleanupSize != want {
		t.Fatalf("a scenario's operator runs cleanup size %d, want %d (Flink's default on the heap, none on RocksDB)", sq.Config.CleanupSize, want)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	op.compactEvery = 1 << 10
	key, value := make([]byte, 36), make([]byte, 36+8*(generators.NumColumns-1))
	i := 0
	step := func() {
		k := i
		if i%4 == 0 {
			k = i - 30
		}
		binary.BigEndian.PutUint64(key, uint64(k))
		op.Process(key, value, int64(i), 0)
		if i%50 == 0 {
			op.State(int64(i))
		}
		i++
	}
	for range 10_000 {
		step()
	}
	if a := testing.AllocsPerRun(2000, step); a != 0 {
		t.Errorf("%v allocations per row", a)
	}
	if backend == "rocksdb" && op.Compactions() == 0 {
		t.Error("no estimated compaction ran")
	}
}

// TestScenarioStateBytes: a keep-first query on UUID keys with TTL costs
// 264 bytes per entry (ef.TestHeapBytes derives it), and its state bytes
// are the physical entries' plus the bucket arrays (128 key groups of
// 128 buckets while each holds at most 96 entries).
func TestScenarioStateBytes(t *testing.T) {
	sq, err := ParseScenarioQuery(keepFirstSQL, map[string]string{"table.exec.state.ttl": "60 s"})
	if err != nil {
		t.Fatal(err)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	if total, per := op.StateBytes(); total != 0 || per != 0 {
		t.Errorf("before any row: %d bytes, %d per entry, want 0 and 0", total, per)
	}
	key, value := make([]byte, 36), make([]byte, 36+8*(generators.NumColumns-1))
	for i := range 3 {
		key[0] = byte(i)
		op.Process(key, value, 0, 0)
	}
	if _, physical := op.State(0); physical != 3 {
		t.Fatalf("physical %d, want 3", physical)
	}
	total, per := op.StateBytes()
	if per != 264 || total != 3*264+128*(16+4*128) {
		t.Errorf("state bytes %d, %d per entry; want %d and 264", total, per, 3*264+128*(16+4*128))
	}
}

// TestFormatDuration checks that a swept TTL is written in its largest
// exact unit and reads back as the same milliseconds.
func TestFormatDuration(t *testing.T) {
	for ms, want := range map[int64]string{1: "1 ms", 1500: "1500 ms", 20_000: "20 s", 150_000: "150 s", 120_000: "2 min", 7_200_000: "2 h", 86_400_000: "1 d", 90_000_000: "25 h"} {
		got := FormatDuration(ms)
		back, err := ParseDuration(got)
		if got != want || err != nil || back != ms {
			t.Errorf("FormatDuration(%d) = %q (reads back as %d, %v), want %q", ms, got, back, err, want)
		}
	}
}

// TestScenarioChangelogCounts counts the changelog rows by kind, against
// hand derivations from Rules 2 and 3 of docs/flink.md (a, b are keys;
// v the row's value; t its event time):
//
//   - proctime keep-last, no TTL, rows a/v1, a/v2, b/v1, a/v2, a/v3: +I
//     a; [-U] +U a (v2 differs; the stored row becomes +U); +I b;
//     [-U] +U a (a/v2 equals the stored row's fields, but the heap
//     backend's stored row was emitted as +U and the generated
//     equaliser compares row kinds); [-U] +U a. 2 +I, 3 +U, and 3 -U
//     only when the sink needs update-before (a scenario's append sink
//     does not: 0).
//   - the same rows with insert-update-after-sensitive off and no -U:
//     every row +U, no state: 5 +U.
//   - rowtime keep-first under 2.0 (the changelog function), rows a/t10,
//     a/t5, a/t7, b/t1: +I a; a/t5 is earlier: [-U] +U; a/t7 is not
//     earlier than 5: dropped; +I b. 2 +I, 1 +U, 1 -U with update-before.
func TestScenarioChangelogCounts(t *testing.T) {
	type row struct {
		key   byte
		value byte
		t     int64
	}
	last := []row{{'a', 1, 0}, {'a', 2, 0}, {'b', 1, 0}, {'a', 2, 0}, {'a', 3, 0}}
	first := []row{{'a', 0, 10_000}, {'a', 0, 5000}, {'a', 0, 7000}, {'b', 0, 1000}}
	keepLast := "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time DESC) AS rn FROM events) WHERE rn = 1"
	rowTimeFirst := "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ASC) AS rn FROM events) WHERE rn = 1"
	for _, c := range []struct {
		name         string
		sql          string
		opts         map[string]string
		updateBefore bool
		rows         []row
		want         Changelog
	}{
		{"keep-last", keepLast, nil, false, last, Changelog{Inserts: 2, Updates: 3}},
		{"keep-last, update-before", keepLast, nil, true, last, Changelog{Inserts: 2, Updates: 3, Retractions: 3}},
		{"keep-last, no +I", keepLast, map[string]string{OptInsertSens: "false"}, false, last, Changelog{Updates: 5}},
		{"rowtime keep-first 2.0", rowTimeFirst, map[string]string{OptWatermark: "1 s", OptVersion: "2.0"}, false, first, Changelog{Inserts: 2, Updates: 1}},
		{"rowtime keep-first 2.0, update-before", rowTimeFirst, map[string]string{OptWatermark: "1 s", OptVersion: "2.0"}, true, first, Changelog{Inserts: 2, Updates: 1, Retractions: 1}},
	} {
		sq, err := ParseScenarioQuery(c.sql, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sq.Config.GenerateUpdateBefore = c.updateBefore
		op, err := sq.NewOperator()
		if err != nil {
			t.Fatal(err)
		}
		key, value := make([]byte, 8), make([]byte, 8*generators.NumColumns)
		for i, r := range c.rows {
			key[0], value[0] = r.key, r.value
			op.Process(key, value, int64(i), r.t)
		}
		if got := op.Changelog(); got != c.want {
			t.Errorf("%s: changelog %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestScenarioRocksDB: a scenario runs state.backend.type rocksdb (any
// case); a backend Flink names by a factory class is refused as not
// modelled. A keep-first query on UUID keys with TTL holds 83 bytes per
// entry in RocksDB: key group 1, row length 4, key row 56 (8-byte null
// bit set, 8-byte field, 36 bytes of text padded to 40), namespace 1;
// value 9 (TTL timestamp 8, Boolean 1); internal key 8, block overhead
// 4; and no table. Its expired entries stay, whatever the accesses, until
// an estimated compaction (here lowered to every 1,000 bytes written):
// ten keys at 0 and one at 5 (913 bytes), all expired at 20, then three
// keys at 20 (the second crosses 1,000 bytes: 1,079) leave three entries.
func TestScenarioRocksDB(t *testing.T) {
	if _, err := ParseScenarioQuery(keepFirstSQL, map[string]string{OptStateBackend: "hashmap"}); err != nil {
		t.Errorf("hashmap in a scenario: %v", err)
	}
	if _, err := ParseOptions(map[string]string{OptStateBackend: "com.example.MyBackendFactory"}, NewestVersion()); err == nil {
		t.Error("a factory class as the backend: want an error")
	}
	sq, err := ParseScenarioQuery(keepFirstSQL, map[string]string{OptStateBackend: "RocksDB", "table.exec.state.ttl": "10 ms"})
	if err != nil {
		t.Fatalf("rocksdb in a scenario: %v", err)
	}
	if !sq.Config.RocksDB || sq.Config.CleanupSize != 0 {
		t.Fatalf("config %+v: want RocksDB without incremental cleanup", sq.Config)
	}
	op, err := sq.NewOperator()
	if err != nil {
		t.Fatal(err)
	}
	op.compactEvery = 1000
	key, value := make([]byte, 36), make([]byte, 36+8*(generators.NumColumns-1))
	for i := range 10 {
		key[0] = byte(i)
		op.Process(key, value, 0, 0)
	}
	if total, per := op.StateBytes(); per != 83 || total != 10*83 {
		t.Errorf("state bytes %d, %d per entry; want %d and 83", total, per, 10*83)
	}
	key[0] = 100
	for range 50 { // duplicates read a live flag: no put, no cleanup
		op.Process(key, value, 5, 0)
	}
	if logical, physical := op.State(20); logical != 0 || physical != 11 {
		t.Fatalf("at 20: logical %d physical %d, want 0 and 11", logical, physical)
	}
	for i := range 3 {
		key[0] = byte(200 + i)
		op.Process(key, value, 20, 0)
		if got, want := op.Compactions(), int64(min(i, 1)); got != want {
			t.Fatalf("after key %d at 20: %d compactions, want %d", i, got, want)
		}
	}
	if logical, physical := op.State(20); logical != 3 || physical != 3 {
		t.Errorf("after the compaction: logical %d physical %d, want 3 and 3", logical, physical)
	}
}
