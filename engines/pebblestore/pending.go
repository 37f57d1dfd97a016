package pebblestore

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/dedupsim/dedupsim/engines"
)

// pendingEntry is what the current micro-batch did to one key.
type pendingEntry struct {
	// expiresAt is the expiry the batch added the key with; meaningless
	// when the key is not live.
	expiresAt int64
	// live is true when the batch added the key and false when it evicted
	// it (possibly after adding it).
	live bool
	// inDB is true when the committed DB holds the key and this batch
	// evicted it: Commit must delete its primary entry unless it is live
	// again.
	inDB bool
}

// pendingKV is one entry of pending, as Commit writes it.
type pendingKV struct {
	key string
	pendingEntry
}

// pending is the micro-batch's writes: every key the batch added or
// evicted. Add consults it before the committed DB, so the batch sees its
// own writes without an indexed pebble.Batch, and Commit writes it to
// Pebble sorted (see the package documentation). It is cleared at Commit,
// so its size is bounded by the work of one batch.
//
// Map keys are strings that point into arena instead of strings of their
// own, so that inserting a key allocates nothing once the arena and the map
// have grown to the size of a batch. This is safe because reset clears the
// map before the arena is reused, and a string still in the map keeps an
// arena that append has since replaced alive.
type pending struct {
	m     map[string]pendingEntry
	arena []byte
	// minLive is a lower bound on the expiry of the live indexed entries
	// (MaxInt64 if none), so Evict skips the scan of m when nothing in the
	// batch can expire.
	minLive int64
	// sorted is Commit's reusable buffer.
	sorted []pendingKV
}

func newPending() pending {
	return pending{m: make(map[string]pendingEntry), minLive: math.MaxInt64}
}

// get returns the entry of key, if the batch touched it.
func (p *pending) get(key []byte) (pendingEntry, bool) {
	e, ok := p.m[string(key)] // the compiler does not allocate this string
	return e, ok
}

// set records e for key, copying key into the arena if it is new.
func (p *pending) set(key []byte, e pendingEntry) {
	if _, ok := p.m[string(key)]; ok {
		p.m[string(key)] = e
		return
	}
	var s string
	if len(key) > 0 {
		off := len(p.arena)
		p.arena = append(p.arena, key...)
		s = unsafe.String(&p.arena[off], len(key))
	}
	p.m[s] = e
}

// addLive records that the batch added key with expiry t; inDB carries
// over from an eviction of the same key earlier in the batch.
func (p *pending) addLive(key []byte, t int64, inDB bool) {
	p.set(key, pendingEntry{expiresAt: t, live: true, inDB: inDB})
	if t != engines.NoExpiry && t < p.minLive {
		p.minLive = t
	}
}

// evictLive marks dead every live indexed entry expiring at or before hi,
// returns how many, and recomputes minLive from the survivors.
func (p *pending) evictLive(hi int64) int {
	if hi < p.minLive {
		return 0
	}
	n := 0
	p.minLive = math.MaxInt64
	for k, e := range p.m {
		if !e.live || e.expiresAt == engines.NoExpiry {
			continue
		}
		if e.expiresAt <= hi {
			p.m[k] = pendingEntry{inDB: e.inDB}
			n++
		} else if e.expiresAt < p.minLive {
			p.minLive = e.expiresAt
		}
	}
	return n
}

// sortedByKey returns the entries in byte order of their keys. The slice is
// reused by the next call.
func (p *pending) sortedByKey() []pendingKV {
	s := p.sorted[:0]
	for k, e := range p.m {
		s = append(s, pendingKV{k, e})
	}
	// Strings compare bytewise, like Pebble's keys.
	slices.SortFunc(s, func(a, b pendingKV) int { return strings.Compare(a.key, b.key) })
	p.sorted = s
	return s
}

// sortByExpiry reorders s, as sortedByKey returned it, into the order of
// the index: by expiry, then key.
func sortByExpiry(s []pendingKV) {
	slices.SortStableFunc(s, func(a, b pendingKV) int { return cmp.Compare(a.expiresAt, b.expiresAt) })
}

// reset forgets the batch, keeping the map's and the arena's capacity.
func (p *pending) reset() {
	clear(p.m)
	p.arena = p.arena[:0]
	clear(p.sorted) // drop the strings into the arena
	p.sorted = p.sorted[:0]
	p.minLive = math.MaxInt64
}
