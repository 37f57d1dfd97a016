// Package memstore is dedupsim's in-memory state store, the model of
// Spark's HDFSBackedStateStore: every key lives in a hash map in memory.
//
// It is exact (keys are compared byte for byte, never by hash alone) and
// allocation-free per row: key bytes are copied into arena slabs and the map
// is keyed by strings that point into them; expiries live in a radix heap,
// so eviction costs what it evicts.
package memstore

import (
	"math"
	"unsafe"

	"github.com/dedupsim/dedupsim/engines"
)

type entry struct {
	expiresAt int64
	ref       keyRef
}

// Store is an in-memory engines.Store.
type Store struct {
	keys  map[string]entry
	arena *arena
	index *expiryIndex
	// evictFn is the eviction callback, bound once so that Evict does not
	// allocate a closure per call.
	evictFn func(keyRef)
	log     changeLog
}

// New returns an empty store.
func New() *Store {
	s := &Store{
		keys:  make(map[string]entry),
		arena: newArena(),
		index: newExpiryIndex(),
	}
	s.evictFn = s.evictRef
	return s
}

// Add inserts key with expiry expiresAt unless it is present.
func (s *Store) Add(key []byte, expiresAt int64) (bool, error) {
	if _, ok := s.keys[string(key)]; ok {
		return false, nil
	}
	s.insert(key, expiresAt)
	return true, nil
}

func (s *Store) insert(key []byte, expiresAt int64) {
	ref := s.arena.add(key)
	s.keys[s.arena.str(ref)] = entry{expiresAt: expiresAt, ref: ref}
	if expiresAt != engines.NoExpiry {
		s.index.push(expiryItem{at: orderKey(expiresAt), ref: ref})
	}
	if s.log.on {
		s.log.put(key, expiresAt)
	}
}

// Evict removes every key whose expiry is at or below watermark.
func (s *Store) Evict(watermark int64) (int, error) {
	if watermark == math.MaxInt64 {
		// NoExpiry keys are never evicted, even by the largest watermark.
		watermark--
	}
	return s.index.popUpTo(orderKey(watermark), s.evictFn), nil
}

func (s *Store) evictRef(r keyRef) {
	k := s.arena.str(r)
	if s.log.on {
		s.log.remove(k)
	}
	delete(s.keys, k)
	s.arena.release(r)
}

// Len returns the number of keys.
func (s *Store) Len() int { return len(s.keys) }

// Close releases the store's memory.
func (s *Store) Close() error {
	s.keys = nil
	s.arena = nil
	s.index = nil
	return nil
}

// Range calls fn for every key, in unspecified order, until fn returns
// false. The key slice is valid only during the call and must not be
// modified.
func (s *Store) Range(fn func(key []byte, expiresAt int64) bool) error {
	for k, e := range s.keys {
		// The callback sees the arena's bytes, not a copy: Range runs over
		// the whole state and must not allocate per key.
		if !fn(unsafe.Slice(unsafe.StringData(k), len(k)), e.expiresAt) {
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
