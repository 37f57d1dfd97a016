package flink

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// uuidKey writes a 36-byte key for i into dst, without allocating.
func uuidKey(dst []byte, i int) []byte {
	const hex = "0123456789abcdef"
	dst = dst[:0]
	for k := 0; k < 36; k++ {
		dst = append(dst, hex[(i>>(4*(k%8)))&15^k&15])
	}
	return dst
}

// TestIncrementalCleanupIsGradual: ten flags written at TTL time 0 (TTL
// 10) are all expired at 20. Then only key z is accessed: a duplicate
// of z accesses the state once, and each access of Flink's incremental
// cleanup visits at most 5 entries, looking for each among at most 5
// bucket positions of the table (128 key groups of 128 buckets), so the
// ten go over many accesses, and all within one pass over the table
// (16,384 positions, at least 5 per access or a key group skipped).
// Without cleanup (CleanupSize 0) the ten stay until read.
func TestIncrementalCleanupIsGradual(t *testing.T) {
	for _, size := range []int{0, DefaultCleanupSize} {
		op, err := New(Config{TTL: 10, GenerateInsert: true, Version: Newest(), CleanupSize: size})
		if err != nil {
			t.Fatal(err)
		}
		var out []Change
		for i := range 10 {
			out = op.Process(Row{Key: fmt.Sprint("k", i)}, out[:0])
		}
		op.SetTTLTime(20)
		if l, p := op.LogicalEntries(), op.PhysicalEntries(); l != 0 || p != 10 {
			t.Fatalf("size %d at 20: logical %d physical %d, want 0 and 10", size, l, p)
		}
		out = op.Process(Row{Key: "z"}, out[:0])
		afterFirst := op.PhysicalEntries()
		rows := 0
		for ; rows < 16384/5+keyGroups && op.PhysicalEntries() > 1; rows++ {
			before := op.Stats()
			out = op.Process(Row{Key: "z"}, out[:0])
			if len(out) != 0 || op.LogicalEntries() != 1 {
				t.Fatalf("size %d: z's duplicate emitted %v, logical %d", size, out, op.LogicalEntries())
			}
			if v := op.Stats().CleanupVisited - before.CleanupVisited; v > int64(size) {
				t.Fatalf("size %d: one access visited %d entries", size, v)
			}
		}
		switch {
		case size == 0 && op.PhysicalEntries() != 11:
			t.Errorf("without cleanup: physical %d, want 11", op.PhysicalEntries())
		case size > 0 && op.PhysicalEntries() != 1:
			t.Errorf("cleanup left %d entries after a pass", op.PhysicalEntries())
		case size > 0 && (afterFirst < 6 || rows < 10):
			t.Errorf("cleanup not gradual: %d entries after z's first row, all gone after %d duplicates", afterFirst, rows)
		}
	}
}

// TestPhysicalStateBoundedAfterKeysExpire: a stream of keys never seen
// again (TTL 100 ms, a key per ms) holds 100 live keys. With Flink's
// incremental cleanup the entries held are the live ones plus the
// cleanup's lag (a pass over Flink's 16,384 bucket positions takes some
// hundreds of rows here), the same after 100,000 rows as after 200,000;
// without cleanup every expired key stays (what the model kept before
// cleanup was modelled).
func TestPhysicalStateBoundedAfterKeysExpire(t *testing.T) {
	op, err := New(Config{TTL: 100, GenerateInsert: true, Version: Newest(), CleanupSize: DefaultCleanupSize})
	if err != nil {
		t.Fatal(err)
	}
	var out []Change
	key := make([]byte, 0, 36)
	maxPhysical, maxFirstHalf := 0, 0
	for i := range 200_000 {
		if i == 100_000 {
			maxFirstHalf = maxPhysical
		}
		op.SetTTLTime(int64(i))
		key = uuidKey(key, i)
		out = op.ProcessBytes(key, nil, 0, i, out[:0])
		if i%1000 == 999 {
			if l := op.LogicalEntries(); l != 100 {
				t.Fatalf("row %d: logical %d, want 100", i, l)
			}
			maxPhysical = max(maxPhysical, op.PhysicalEntries())
		}
	}
	if maxPhysical > 2000 || maxPhysical > maxFirstHalf+maxFirstHalf/10 {
		t.Errorf("physical entries reached %d (%d in the first half) for 100 live keys: expired entries are not cleaned up", maxPhysical, maxFirstHalf)
	}
	if n := len(op.tab.entries); n > 2048 {
		t.Errorf("the model holds %d entries after 200,000 keys of which 100 live", n)
	}
	if n := len(op.tab.Slots); n != 1<<flinkKeyTableBits {
		t.Errorf("the key table has %d slots, want Flink's %d for at most %d entries", n, 1<<flinkKeyTableBits, maxPhysical)
	}
}

// TestCleanupLagMatchesFlink compares the expired entries the model holds
// with what Flink 2.3.0's heap backend held on the same kind of stream
// (ProcTimeDeduplicateKeepFirstRowFunction in
// KeyedOneInputStreamOperatorTestHarness at max parallelism 128, a new
// random UUID key per ms, numKeyedStateEntries every 1,000 rows, mean
// over the second half; docs/flink.md, "State: logical and physical"):
// 713 held for TTL 100 ms, 1,577 for TTL 1 s, 63,959 for TTL 60 s. The
// keys' hashes differ, so the model must come within 10%.
func TestCleanupLagMatchesFlink(t *testing.T) {
	for _, c := range []struct {
		ttl   int64
		rows  int
		flink float64
	}{{100, 200_000, 713}, {1000, 200_000, 1577}, {60_000, 300_000, 63_959}} {
		op, err := New(Config{TTL: c.ttl, GenerateInsert: true, Version: Newest(), CleanupSize: DefaultCleanupSize})
		if err != nil {
			t.Fatal(err)
		}
		var out []Change
		key := make([]byte, 0, 36)
		sum, n := 0, 0
		for i := range c.rows {
			op.SetTTLTime(int64(i))
			out = op.ProcessBytes(uuidKey(key, i), nil, 0, i, out[:0])
			if i%1000 == 999 && i >= c.rows/2 {
				sum += op.PhysicalEntries()
				n++
			}
		}
		if mean := float64(sum) / float64(n); mean < 0.9*c.flink || mean > 1.1*c.flink {
			t.Errorf("TTL %d ms: the model holds %.0f entries on average, Flink %.0f", c.ttl, mean, c.flink)
		}
	}
}

// TestLogicalCountCostsOnlyExpiredEntries: counting live state costs the
// entries expired since the last count (the expiry index's items), the
// same for 10 live keys as for 100,000, and nothing when none expired.
func TestLogicalCountCostsOnlyExpiredEntries(t *testing.T) {
	for _, live := range []int{10, 100_000} {
		op, err := New(Config{TTL: 1000, GenerateInsert: true, Version: Newest(), CleanupSize: DefaultCleanupSize})
		if err != nil {
			t.Fatal(err)
		}
		var out []Change
		key := make([]byte, 0, 36)
		// Seven keys at TTL time 0, the others at 500.
		for i := range live {
			if i == 7 {
				op.SetTTLTime(500)
			}
			out = op.ProcessBytes(uuidKey(key, i), nil, 0, i, out[:0])
		}
		popped := func() int64 { return op.Stats().IndexPopped }
		before := popped()
		for range 100 {
			if got := op.LogicalEntries(); got != live {
				t.Fatalf("%d live: counted %d", live, got)
			}
		}
		if d := popped() - before; d != 0 {
			t.Errorf("%d live: 100 counts with nothing expired took %d index items, want 0", live, d)
		}
		op.SetTTLTime(1000) // the seven written at 0 expire
		if got := op.LogicalEntries(); got != live-7 {
			t.Fatalf("%d live at 1000: counted %d, want %d", live, got, live-7)
		}
		if d := popped() - before; d != 7 {
			t.Errorf("%d live: the count after 7 expired took %d index items, want 7", live, d)
		}
	}
}

// TestProcessBytesAllocatesNothing: once the state has its size, a row
// allocates nothing, new key or duplicate, with cleanup recycling the
// expired keys' entries (the scenario path; a key string per row before).
func TestProcessBytesAllocatesNothing(t *testing.T) {
	for _, cfg := range []Config{
		{TTL: 50, GenerateInsert: true, Version: Newest(), CleanupSize: DefaultCleanupSize},
		{KeepLast: true, TTL: 50, GenerateInsert: true, Version: Newest(), CleanupSize: DefaultCleanupSize},
		{KeepLast: true, GenerateInsert: true, Version: Newest(), CleanupSize: DefaultCleanupSize},
	} {
		op, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]Change, 0, 8)
		key, val := make([]byte, 0, 36), []byte("row value")
		i := 0
		step := func() {
			op.SetTTLTime(int64(i))
			k := i
			if i%3 == 0 {
				k = i - 20 // a duplicate of a live key
			}
			if cfg.TTL == 0 {
				k %= 64 // no TTL: a bounded key set
			}
			out = op.ProcessBytes(uuidKey(key, k), val, 0, i, out[:0])
			if i%100 == 0 {
				op.LogicalEntries()
			}
			i++
		}
		for range 20_000 {
			step()
		}
		if a := testing.AllocsPerRun(5000, step); a != 0 {
			t.Errorf("%s ttl %d: %v allocations per row", op.Function().ClassName(), cfg.TTL, a)
		}
	}
}

// TestAgainstReferenceWithCleanup is TestAgainstReference with Flink's
// incremental cleanup on: behaviour and logical state are the same, and
// physical state lies between logical and the keys seen.
func TestAgainstReferenceWithCleanup(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		for _, keepLast := range []bool{false, true} {
			if msg := compareWithReferenceCleanup(seed, keepLast); msg != "" {
				t.Fatalf("seed %d keepLast %v: %s (go test ./engines/flink -run TestAgainstReferenceWithCleanup)", seed, keepLast, msg)
			}
		}
	}
}

// compareWithReferenceCleanup runs one seeded trace through an operator
// with cleanup and one without: their output and logical state agree at
// every step, and cleanup only lowers the physical count.
func compareWithReferenceCleanup(seed uint64, keepLast bool) string {
	rng := rand.New(rand.NewPCG(seed, 25))
	ttl := int64(1 + rng.IntN(20))
	cfg := Config{KeepLast: keepLast, TTL: ttl, GenerateInsert: true, Version: Newest()}
	plain, err := New(cfg)
	if err != nil {
		return err.Error()
	}
	cfg.CleanupSize = 1 + rng.IntN(DefaultCleanupSize)
	clean, err := New(cfg)
	if err != nil {
		return err.Error()
	}
	now := int64(0)
	var a, b []Change
	seen := map[string]bool{}
	for step := 0; step < 200; step++ {
		if rng.IntN(4) == 0 {
			now += int64(rng.IntN(15))
			plain.SetTTLTime(now)
			clean.SetTTLTime(now)
			continue
		}
		k := fmt.Sprint(rng.IntN(12))
		seen[k] = true
		r := Row{Key: k, Value: fmt.Sprint(step), ID: step}
		a, b = plain.Process(r, a[:0]), clean.Process(r, b[:0])
		if fmt.Sprint(a) != fmt.Sprint(b) {
			return fmt.Sprintf("step %d key %s: with cleanup %v, without %v", step, k, b, a)
		}
		if plain.LogicalEntries() != clean.LogicalEntries() {
			return fmt.Sprintf("step %d: logical %d with cleanup, %d without", step, clean.LogicalEntries(), plain.LogicalEntries())
		}
		if p := clean.PhysicalEntries(); p < clean.LogicalEntries() || p > plain.PhysicalEntries() || p > len(seen) {
			return fmt.Sprintf("step %d: physical %d with cleanup outside [%d, %d]", step, p, clean.LogicalEntries(), plain.PhysicalEntries())
		}
	}
	return ""
}

// TestHeapBytes derives the heap estimate by hand (docs/flink.md, "State
// bytes"): a UUID key is a BinaryRowData of 8 (null bits) + 8 (field) +
// 40 (36 bytes padded) = 56 bytes; its objects 128 + its byte[] 16 + 56
// = 200; with the map entry (40) and TtlValue (24), a keep-first flag
// costs 264. The bucket arrays: 128 key groups of 128 buckets at first.
func TestHeapBytes(t *testing.T) {
	if got := BinaryRowBytes(1, 36); got != 56 {
		t.Errorf("BinaryRowBytes(1, 36) = %d, want 56", got)
	}
	if got := HeapRowBytes(56); got != 200 {
		t.Errorf("HeapRowBytes(56) = %d, want 200", got)
	}
	if got := HeapEntryBytes(200, 0, true); got != 264 {
		t.Errorf("HeapEntryBytes = %d, want 264", got)
	}
	if got := HeapEntryBytes(200, 0, false); got != 240 {
		t.Errorf("HeapEntryBytes without TTL = %d, want 240", got)
	}
	for _, c := range []struct{ n, want int64 }{
		{0, 128 * (16 + 4*128)},
		{96 * 128, 128 * (16 + 4*128)},    // 96 per map: 3/4 of 128, no rehash yet
		{96*128 + 1, 128 * (16 + 4*256)},  // one map holds 97: doubled
		{1_000_000, 128 * (16 + 4*16384)}, // 7,813 per map: 3/4 of 16,384 is 12,288
	} {
		if got := HeapTableBytes(c.n); got != c.want {
			t.Errorf("HeapTableBytes(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
