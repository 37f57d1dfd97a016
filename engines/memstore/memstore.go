// Package memstore is dedupsim's in-memory state store, the model of
// Spark's HDFSBackedStateStore: every key lives in a hash table in memory.
//
// It is exact (keys are compared byte for byte, never by hash alone) and
// allocation-free per row: key bytes are copied into arena slabs, an
// open-addressing table of 8-byte, pointer-free slots finds them, and an
// expiry index (time buckets over the live span, engines/internal/expiry) makes
// eviction cost what it evicts. The garbage
// collector scans none of it but a pointer per arena slab (256 KiB) and per
// index chunk (256 keys).
//
// Numbered is its twin for keys that never expire and decode to numbers
// (the generator's event ids): a Roaring bitmap holds them in about a bit
// each, the hash table the keys that do not decode.
package memstore

import (
	"bytes"
	"hash/maphash"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/internal/expiry"
	"github.com/dedupsim/dedupsim/engines/internal/oatable"
)

// Store is an in-memory engines.Store.
type Store struct {
	tab   oatable.Table
	arena arena
	index expiry.Index
	// seed keys the table's hash: random per store, so that no stream of
	// keys can be crafted to collide.
	seed maphash.Seed
	// evictFn is the eviction callback, bound once so that Evict does not
	// allocate a closure per call.
	evictFn func([]expiry.Item)
	// evictKeysFn is evictKeyItems, bound once; keyFn is EvictKeys's
	// callback while it runs.
	evictKeysFn func([]expiry.Item)
	keyFn       func(key []byte)
	// sink keeps the eviction's touch pass from being optimized away.
	sink uint32
	log  changeLog
}

// New returns an empty store.
func New() *Store {
	s := &Store{
		tab:   oatable.New(minTableBits),
		arena: newArena(),
		index: expiry.New(),
		seed:  maphash.MakeSeed(),
	}
	s.evictFn = s.evictItems
	s.evictKeysFn = s.evictKeyItems
	return s
}

// Add inserts key with expiry expiresAt unless it is present. A new key
// costs one hash and one probe sequence: the lookup that misses stops at
// the free slot the key then takes.
func (s *Store) Add(key []byte, expiresAt int64) (bool, error) {
	return s.add(key, s.tag(key), expiresAt)
}

// tag returns the hash tag of key: the high 32 bits of its seeded hash.
func (s *Store) tag(key []byte) uint32 { return uint32(maphash.Bytes(s.seed, key) >> 32) }

// add is Add with the key's tag already computed, so that a batched Add
// can hash a run of keys and load their home slots ahead of inserting
// them (AddBatch).
func (s *Store) add(key []byte, tag uint32, expiresAt int64) (bool, error) {
	t := &s.tab
	// Grow first: growing moves every slot, so it cannot happen between
	// the lookup and the insert at the slot the lookup found.
	t.Grow()
	i := t.Home(tag)
	for {
		sl := t.Slots[i]
		if sl.Ref == 0 {
			break
		}
		if sl.Tag == tag && bytes.Equal(s.arena.key(sl.Ref), key) {
			return false, nil
		}
		i = t.Next(i)
	}
	ref, err := s.arena.add(key, expiresAt)
	if err != nil {
		return false, err
	}
	t.Put(i, oatable.Slot{Tag: tag, Ref: ref})
	if expiresAt != engines.NoExpiry {
		s.index.Push(expiry.Item{At: expiry.OrderKey(expiresAt), Ref: ref, Tag: tag})
	}
	if s.log.on {
		s.log.put(key, expiresAt)
	}
	return true, nil
}

// Evict removes every key whose expiry is at or below watermark. With a
// change log, an eviction that removed keys is logged as one record with
// the watermark: replayed on the same state it removes the same keys.
func (s *Store) Evict(watermark int64) (int, error) {
	n := s.index.PopUpTo(expiry.OrderKey(engines.EvictBound(watermark)), s.evictFn)
	if s.log.on && n > 0 {
		s.log.evict(watermark, n)
	}
	return n, nil
}

// EvictKeys is Evict that also calls fn with each key it removes, before
// removing it (the key is the arena's memory, valid only during the call).
// Its cost is Evict's plus one read of each removed key: a caller that must
// know which keys expired (Spark's transformWithState, whose end-of-batch
// cleanup does not count a key a row set again) learns it without listing
// the keys that stay.
func (s *Store) EvictKeys(watermark int64, fn func(key []byte)) (int, error) {
	s.keyFn = fn
	n := s.index.PopUpTo(expiry.OrderKey(engines.EvictBound(watermark)), s.evictKeysFn)
	s.keyFn = nil
	if s.log.on && n > 0 {
		s.log.evict(watermark, n)
	}
	return n, nil
}

// evictKeyItems is evictItems that first hands each key to keyFn.
func (s *Store) evictKeyItems(its []expiry.Item) {
	for _, it := range its {
		s.keyFn(s.arena.key(it.Ref))
	}
	s.evictItems(its)
}

// evictItems removes a run of expired keys. It never reads a key: the
// table finds each slot by ref (the change log records the eviction's
// watermark, not the keys, see Evict).
//
// The slots of expired keys are scattered over the table, so each removal
// is a cache miss. A first pass loads the home slot of every item in the
// run, and the cache line after it (the backward shift of a removal reads
// on to the next free slot, which at 1e7 keys is in the next line about
// half the time; BENCHMARKS.md, "Eviction", has the effect); those
// loads do not depend on each other, so the processor keeps many in
// flight at once, and the removals then find their slots in cache. A run
// is at most a chunk, 256 items (512 lines, 32 KiB), which stays in L1/L2.
func (s *Store) evictItems(its []expiry.Item) {
	t := &s.tab
	var sink uint32
	for _, it := range its {
		h := t.Home(it.Tag)
		sink += t.Slots[h].Ref + t.Slots[((h|7)+1)&t.Mask()].Ref
	}
	s.sink += sink
	for _, it := range its {
		t.Remove(it.Tag, it.Ref)
		s.arena.release(it.Ref)
	}
}

// Len returns the number of keys.
func (s *Store) Len() int { return s.tab.Len() }

// Close releases the store's memory. It leaves an empty store behind
// rather than nil fields, so that a stray use after Close cannot crash.
func (s *Store) Close() error {
	s.tab = oatable.New(minTableBits)
	s.arena = newArena()
	s.index = expiry.New()
	return nil
}

// Range calls fn for every key, in unspecified order, until fn returns
// false. The key slice is the arena's memory, not a copy (Range runs over
// the whole state and must not allocate per key): it is valid only during
// the call and must not be modified. fn must not modify the store.
func (s *Store) Range(fn func(key []byte, expiresAt int64) bool) error {
	for _, sl := range s.tab.Slots {
		if sl.Ref == 0 {
			continue
		}
		if !fn(s.arena.key(sl.Ref), s.arena.expiry(sl.Ref)) {
			return nil
		}
	}
	return nil
}

// ArenaBytes returns the bytes the key arena holds (slabs in use or free).
func (s *Store) ArenaBytes() int64 { return s.arena.bytes() }

var _ engines.Store = (*Store)(nil)
var _ engines.Ranger = (*Store)(nil)

// Commit is a no-op for a store without a checkpoint directory: the state
// lives in memory only. Checkpointed writes it to disk.
func (s *Store) Commit(batchID int64) error { return nil }
