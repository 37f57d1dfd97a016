package kstreams

import (
	"fmt"
	"sort"
)

// WallClockDedup is the wall-clock fix for the frozen stream time, as
// people write it: a processor over a persistent key-value store (event
// id -> the wall-clock time its first copy was seen) with a punctuator
// scheduled on PunctuationType.WALL_CLOCK_TIME every P that deletes the
// entries W old or older:
//
//	init:    context.schedule(P, WALL_CLOCK_TIME, now ->
//	             for (id, seen) in store.all(): if now - seen >= W: store.delete(id))
//	process: if store.get(id) != null: drop
//	         else: store.put(id, context.currentSystemTimeMs()); forward
//
// Lookups ignore age: a key is forgotten only when a punctuation deletes
// it. Kafka Streams (StreamTask.schedule, PunctuationSchedule.next,
// PunctuationQueue.maybePunctuate) fires the first punctuation P after
// the schedule call (the task's init) and each later one P after the
// previous one's schedule time, so on a grid of P from the init: when the
// wall clock has passed several points of the grid, the punctuation fires
// once, at the current time, and the next is due at the first point of
// the grid after it (missed punctuations are skipped, never caught up).
// The punctuator gets the current wall-clock time.
//
// Worked example (W = 60 s, P = 30 s, init at 0): a at 0 s is stored
// with 0; punctuations at 30 s (age 30 s: kept) and 60 s (age 60 s:
// deleted); a copy at 59 s is dropped, one at 61 s forwarded. A key seen
// at 1 s is deleted at 90 s: a key lives from W to W + P after its first
// copy. With no wall-clock advance (a stopped clock, or no punctuation
// due) nothing expires, whatever the records' timestamps.
type WallClockDedup struct {
	window   int64
	interval int64
	// now is the wall clock, next the next punctuation's schedule time.
	now, next int64
	fired     int64
	store     map[string]int64
}

// NewWallClockDedup returns the processor with maximum age W = window ms
// and punctuation interval P = interval ms (both >= 1), its task
// initialized (the punctuation scheduled) at wall-clock time startMs.
func NewWallClockDedup(window, interval, startMs int64) (*WallClockDedup, error) {
	if window < 1 {
		return nil, fmt.Errorf("kafka-streams wall-clock dedup: window %d ms: the maximum age must be >= 1 ms", window)
	}
	if interval < 1 {
		return nil, fmt.Errorf("kafka-streams wall-clock dedup: punctuate %d ms: the punctuation interval must be >= 1 ms (schedule refuses less)", interval)
	}
	return &WallClockDedup{window: window, interval: interval, now: startMs, next: startMs + interval, store: map[string]int64{}}, nil
}

// Advance moves the wall clock to nowMs (an earlier time is ignored: the
// clock never goes back) and fires the punctuation if due; it returns the
// number of punctuations fired (0 or 1: one late punctuation stands for
// every missed one, and the schedule stays on its grid).
func (d *WallClockDedup) Advance(nowMs int64) int {
	if nowMs <= d.now {
		return 0
	}
	d.now = nowMs
	n := 0
	for d.next <= d.now {
		for id, seen := range d.store {
			if d.now-seen >= d.window {
				delete(d.store, id)
			}
		}
		d.fired++
		n++
		// PunctuationSchedule.next: the next time on the schedule's grid
		// after now.
		d.next += ((d.now-d.next)/d.interval + 1) * d.interval
	}
	return n
}

// Process runs one record of key id at the current wall-clock time (the
// last Advance): it reports whether the record is forwarded (true) or
// dropped as a duplicate. Only a new key allocates (its entry).
func (d *WallClockDedup) Process(id []byte) bool {
	if _, ok := d.store[string(id)]; ok {
		return false
	}
	d.store[string(id)] = d.now
	return true
}

// WallClock returns the processor's wall-clock time.
func (d *WallClockDedup) WallClock() int64 { return d.now }

// Punctuations returns the number of punctuations fired so far.
func (d *WallClockDedup) Punctuations() int64 { return d.fired }

// NextPunctuation returns the schedule time of the next punctuation.
func (d *WallClockDedup) NextPunctuation() int64 { return d.next }

// Len returns the store's entries: one per key seen and not yet deleted
// by a punctuation (a delete leaves no visible row, so logical and
// physical agree, compaction of RocksDB's tombstones aside).
func (d *WallClockDedup) Len() int { return len(d.store) }

// Rows returns the store's entries sorted by key, each with the
// wall-clock time its first copy was seen (in Timestamp).
func (d *WallClockDedup) Rows() []Row {
	out := make([]Row, 0, len(d.store))
	for k, t := range d.store {
		out = append(out, Row{Key: k, Timestamp: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
