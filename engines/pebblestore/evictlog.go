package pebblestore

import (
	"encoding/binary"
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
)

// evictLog decides which stored entries are dead: evicted, though still
// on disk or in memory. The store never deletes an evicted key where it
// lies (see "Eviction" in the package documentation); instead every key is
// stored with the store's evict epoch when it was added, and an entry added
// at epoch a with expiry exp is dead once an eviction recorded after epoch
// a reached exp:
//
//	dead(exp, a)  <=>  exp != NoExpiry and exp <= max{bound_e : e > a}
//
// where bound_e is the bound (engines.EvictBound of the watermark) of the
// e-th recorded eviction. The log keeps that suffix maximum as a step
// function of a, which never increases with a: steps[i] gives the maximum
// for every epoch below steps[i].end and at or above steps[i-1].end. An
// eviction appends a step and merges the last steps while their maxima do
// not decrease, so with a watermark that only moves forward (as Spark's
// does) the log is a single step, and every time the watermark moves back
// adds at most one.
//
// An eviction is recorded only when it removed a key: one that removes
// nothing finds no live key at or below its bound, so recording it would
// change no entry's fate.
//
// For example, with evictions at bounds 10 (epoch 1) and 5 (epoch 2), a
// key added at epoch 0 with expiry 8 is dead (10 >= 8), one added at epoch
// 1 with expiry 8 is live (only 5 came after), and one added at epoch 1
// with expiry 5 is dead.
type evictLog struct {
	epoch uint64
	steps []evictStep
}

// evictStep is one step of the log: max is the largest bound recorded
// after every epoch below end (and at or above the previous step's end).
type evictStep struct {
	end uint64
	max int64
}

// record adds an eviction at bound and returns the new epoch.
func (l *evictLog) record(bound int64) uint64 {
	l.epoch++
	l.steps = append(l.steps, evictStep{end: l.epoch, max: bound})
	for k := len(l.steps) - 1; k > 0 && l.steps[k-1].max <= l.steps[k].max; k-- {
		l.steps[k-1] = evictStep{end: l.steps[k].end, max: l.steps[k].max}
		l.steps = l.steps[:k]
	}
	return l.epoch
}

// dead reports whether an entry with expiry exp, stored at epoch a, was
// evicted since.
func (l *evictLog) dead(exp int64, a uint64) bool {
	if exp == engines.NoExpiry || a >= l.epoch {
		return false
	}
	// The first step whose end is above a; the steps are few.
	for _, s := range l.steps {
		if a < s.end {
			return exp <= s.max
		}
	}
	return false
}

// clone returns a copy of l that does not share its steps.
func (l *evictLog) clone() evictLog {
	return evictLog{epoch: l.epoch, steps: append([]evictStep(nil), l.steps...)}
}

// append appends the encoding of l to dst.
func (l *evictLog) append(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, l.epoch)
	dst = binary.AppendUvarint(dst, uint64(len(l.steps)))
	for _, s := range l.steps {
		dst = binary.AppendUvarint(dst, s.end)
		dst = binary.AppendVarint(dst, s.max)
	}
	return dst
}

// readEvictLog decodes a log written by append, checking its invariants.
func readEvictLog(r *reader) (evictLog, error) {
	l := evictLog{epoch: r.uvarint()}
	k := r.uvarint()
	if r.err == nil && k > uint64(len(r.b)) {
		return evictLog{}, errShortMeta
	}
	prev := uint64(0)
	for i := uint64(0); i < k && r.err == nil; i++ {
		s := evictStep{end: r.uvarint(), max: r.varint()}
		if r.err == nil && (s.end <= prev || s.end > l.epoch || i > 0 && s.max >= l.steps[i-1].max) {
			return evictLog{}, fmt.Errorf("evict log step %d out of order", i)
		}
		prev = s.end
		l.steps = append(l.steps, s)
	}
	if r.err != nil {
		return evictLog{}, r.err
	}
	if k > 0 && prev != l.epoch || k == 0 && l.epoch != 0 {
		return evictLog{}, fmt.Errorf("evict log ends at epoch %d, not %d", prev, l.epoch)
	}
	return l, nil
}
