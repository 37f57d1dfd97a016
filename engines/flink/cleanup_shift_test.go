package flink

import (
	"fmt"
	"testing"
)

// collidingAtSegmentStart returns two keys of the same home slot in a
// table of flinkKeyTableBits bits, that slot the first of its key group
// (segment), and a third key homed in another key group: found by
// hashing "k0", "k1", ... with the table's own hash, not written down.
func collidingAtSegmentStart(t *testing.T) (a, b, other string) {
	t.Helper()
	tab := newKeyTable(flinkKeyTableBits)
	segSize := uint32(1) << tab.SegmentShift()
	home := func(k string) uint32 { return tab.Home(uint32(hashKey([]byte(k)) >> 32)) }
	seen := map[uint32]string{}
	for i := 0; i < 1_000_000; i++ {
		k := fmt.Sprint("k", i)
		h := home(k)
		if h%segSize != 0 {
			continue
		}
		if first, ok := seen[h]; ok {
			for j := 0; ; j++ {
				z := fmt.Sprint("z", j)
				if tab.SegmentOf(home(z)) != tab.SegmentOf(h) {
					return first, k, z
				}
			}
		}
		seen[h] = k
	}
	t.Fatal("no two keys share a home slot at a key group's start")
	return
}

// TestIncrementalCleanupVisitsTheKeyShiftedIntoTheFreedSlot: two keys a
// and b with the same home slot h, the first slot of its key group, are
// written at TTL time 0 (TTL 10): a sits in h, b, probing on, in h+1.
// At TTL time 20 both are expired, and a new key z of another key group
// arrives with incremental cleanup visiting 2 entries per access
// (CleanupSize 2), its pass at the end of h's key group. By hand: the
// access finds nothing after it, starts a new pass, skips the empty key
// groups to h's, visits a (expired: removed; backward-shift deletion
// moves b into h), then must look at h again and visit b there
// (expired: removed):
// 2 visited, 2 removed, and only z is held. A cleanup that moved past h
// after removing a would find h+1 and h+2 empty (its 2 positions) and
// end the access with b still held.
func TestIncrementalCleanupVisitsTheKeyShiftedIntoTheFreedSlot(t *testing.T) {
	a, b, z := collidingAtSegmentStart(t)
	op, err := New(Config{TTL: 10, GenerateInsert: true, Version: Newest(), CleanupSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	var out []Change
	out = op.Process(Row{Key: a, ID: 1}, out[:0])
	out = op.Process(Row{Key: b, ID: 2}, out[:0])
	if ia, ib := op.tab.slotOf(op.tab.find([]byte(a), hashKey([]byte(a)))), op.tab.slotOf(op.tab.find([]byte(b), hashKey([]byte(b)))); ib != ia+1 {
		t.Fatalf("%s in slot %d, %s in slot %d: want adjacent slots (same home)", a, ia, b, ib)
	}
	// Duplicates of a at TTL time 0 (reads: accesses that remove
	// nothing) move the cleanup's pass on to the end of h's key group:
	// the next access finds nothing after it, wraps around and starts
	// again at h.
	ha := op.tab.slotOf(op.tab.find([]byte(a), hashKey([]byte(a))))
	segEnd := ha | (1<<op.tab.SegmentShift() - 1) + 1
	for i := 0; op.cursor != segEnd; i++ {
		if i == 100_000 {
			t.Fatalf("the cleanup's pass never came back to slot %d", ha)
		}
		out = op.Process(Row{Key: a, ID: 4}, out[:0])
	}
	op.SetTTLTime(20)
	before := op.Stats()
	out = op.Process(Row{Key: z, ID: 3}, out[:0])
	if len(out) != 1 || out[0].Row.ID != 3 {
		t.Fatalf("%s: emitted %v, want its +I", z, out)
	}
	s := op.Stats()
	if removed := s.CleanupRemoved - before.CleanupRemoved; removed != 2 || op.PhysicalEntries() != 1 {
		t.Errorf("cleanup removed %d of the 2 expired colliding keys (%s, %s); %d entries held, want 1 (%s)", removed, a, b, op.PhysicalEntries(), z)
	}
}
