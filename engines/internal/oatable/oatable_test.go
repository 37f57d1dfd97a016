package oatable

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// keys is a test's record of the keys: ref -> key, and the tag of each
// key a function of it (its top bits few, so that homes collide often).
type keys struct {
	byRef map[uint32]uint64
	refOf map[uint64]uint32
	next  uint32
}

func tagOf(k uint64, collide bool) uint32 {
	h := uint32((k * 0x9E3779B97F4A7C15) >> 32)
	if collide {
		h &= 0xF000_0FFF // few distinct homes at every size
	}
	return h
}

// find is the probe loop the package doc shows.
func (ks *keys) find(t *Table, k uint64, collide bool) (uint32, bool) {
	tag := tagOf(k, collide)
	for i := t.Home(tag); ; i = t.Next(i) {
		s := t.Slots[i]
		if s.Ref == 0 {
			return i, false
		}
		if s.Tag == tag && ks.byRef[s.Ref] == k {
			return i, true
		}
	}
}

// check verifies the table's invariants: every key of the reference is
// found from its home by the probe loop (no hole between its home and
// its slot), nothing else is held, and Len and the segment counts are
// the slots' own.
func check(t *testing.T, tab *Table, ks *keys, collide bool, where string) {
	t.Helper()
	held := 0
	var occ [Segments]int32
	for i, s := range tab.Slots {
		if s.Ref == 0 {
			continue
		}
		held++
		occ[tab.SegmentOf(uint32(i))]++
		if _, ok := ks.byRef[s.Ref]; !ok {
			t.Fatalf("%s: slot %d holds ref %d, which was removed", where, i, s.Ref)
		}
	}
	if held != len(ks.byRef) || tab.Len() != held {
		t.Fatalf("%s: %d slots held, Len %d, want %d", where, held, tab.Len(), len(ks.byRef))
	}
	for seg := range uint32(Segments) {
		if tab.Occupied(seg) != occ[seg] {
			t.Fatalf("%s: segment %d counts %d occupied slots, holds %d", where, seg, tab.Occupied(seg), occ[seg])
		}
	}
	for ref, k := range ks.byRef {
		i, ok := ks.find(tab, k, collide)
		if !ok || tab.Slots[i].Ref != ref || tab.SlotOf(tagOf(k, collide), ref) != i {
			t.Fatalf("%s: key %d (ref %d) not found from its home (found %v at %d)", where, k, ref, ok, i)
		}
	}
}

// TestTableAgainstAMap runs random inserts and removals (by ref, and at a
// slot) against a Go map, with tags spread out and with tags that share
// a few homes (long probe runs, wrapping at the table's end), and checks
// every invariant after every step: backward-shift deletion keeps every
// key reachable, growth rehashes from the tags alone, the counts follow.
func TestTableAgainstAMap(t *testing.T) {
	for _, collide := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(5, 33))
		tab := New(2)
		ks := &keys{byRef: map[uint32]uint64{}, refOf: map[uint64]uint32{}}
		for step := range 6000 {
			k := uint64(rng.IntN(400))
			if _, ok := ks.refOf[k]; !ok && rng.IntN(3) > 0 {
				tab.Grow()
				i, found := ks.find(&tab, k, collide)
				if found {
					t.Fatalf("step %d: absent key %d found", step, k)
				}
				ks.next++
				tab.Put(i, Slot{Tag: tagOf(k, collide), Ref: ks.next})
				ks.byRef[ks.next], ks.refOf[k] = k, ks.next
			} else if ref, ok := ks.refOf[k]; ok {
				if rng.IntN(2) == 0 {
					tab.Remove(tagOf(k, collide), ref)
				} else {
					i, _ := ks.find(&tab, k, collide)
					tab.RemoveAt(i)
				}
				delete(ks.byRef, ref)
				delete(ks.refOf, k)
			}
			check(t, &tab, ks, collide, fmt.Sprintf("collide %v, step %d", collide, step))
			if tab.Len() > len(tab.Slots)/4*3 {
				t.Fatalf("step %d: load %d of %d slots, past 3/4", step, tab.Len(), len(tab.Slots))
			}
		}
		if len(tab.Slots) < 256 {
			t.Fatalf("collide %v: the table never grew past %d slots", collide, len(tab.Slots))
		}
	}
}

// TestRemoveShiftsBackARun: by hand, in a table of 16 slots (home = tag >>
// 28): a and b have home 3, c home 4, d home 6. Inserted in that order
// they sit at 3, 4, 5 and 6. Removing a empties 3; b (home 3) moves back
// to 3, then c (home 4) to 4, and d stays at 6, its home, leaving 5
// empty.
func TestRemoveShiftsBackARun(t *testing.T) {
	tab := New(4)
	put := func(tag, ref uint32) {
		i := tab.Home(tag)
		for tab.Slots[i].Ref != 0 {
			i = tab.Next(i)
		}
		tab.Put(i, Slot{Tag: tag, Ref: ref})
	}
	put(3<<28, 1)   // a
	put(3<<28|1, 2) // b
	put(4<<28, 3)   // c
	put(6<<28, 4)   // d
	if got := [4]uint32{tab.Slots[3].Ref, tab.Slots[4].Ref, tab.Slots[5].Ref, tab.Slots[6].Ref}; got != [4]uint32{1, 2, 3, 4} {
		t.Fatalf("slots 3-6 hold refs %v, want 1 2 3 4", got)
	}
	tab.Remove(3<<28, 1)
	want := map[uint32]uint32{3: 2, 4: 3, 5: 0, 6: 4}
	for i, ref := range want {
		if tab.Slots[i].Ref != ref {
			t.Errorf("after removing a: slot %d holds ref %d, want %d", i, tab.Slots[i].Ref, ref)
		}
	}
	if tab.Len() != 3 {
		t.Errorf("Len %d, want 3", tab.Len())
	}
}
