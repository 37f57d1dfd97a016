package spark

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
)

// TWSOperatorName is the operator name Spark 4 reports in a query's
// progress for a PySpark transformWithState (TransformWithStateInPySparkExec).
const TWSOperatorName = "transformWithStateInPySparkExec"

// TWSDedup models the dedup processor people write with Spark 4's
// transformWithState in processing time: one ValueState per grouping key,
// with a TTL (TTLConfig / ttlDurationMs), and handleInputRows that emits the
// first row of a key whose state does not exist and sets the state, and
// drops every other row while the state exists.
//
// The TTL rules are Spark's (TTLState.scala, ValueStateImplWithTTL):
//
//   - update() stores expirationMs = batch timestamp + TTL (processing time:
//     the batch's timestamp from the offset log, fixed for the batch).
//   - exists() and get() treat a value as absent once batch timestamp >=
//     expirationMs, although it is still in the store: a row of such a key
//     is emitted and the state updated again (numRowsUpdated), with a new
//     expiration.
//   - At the end of every batch (data or no-data) doTtlCleanup removes from
//     the store the values with expirationMs <= batch timestamp
//     (numRowsRemoved and the custom metric numValuesRemovedDueToTTLExpiry).
//     A value updated in the batch expires after it, so it stays.
//
// Without a TTL (ttlMs 0) a key is kept forever.
//
// The model stores expirationMs x 1000 as the key's expiry. At the start of
// a batch it evicts the keys whose expiry is at or below the batch
// timestamp (invisible in this batch) and remembers them for the batch; a
// row that sets one of them again is the refresh Spark does, not a
// removal. The removed count is the keys evicted and not set again: what
// Spark's end-of-batch cleanup removes.
//
// The eviction costs what it evicts, not what stays: a store that names the
// keys it evicts (KeyEvicter: the memory store, whose expiry index pops
// only the expired keys) hands them over as it removes them. A store that
// cannot (the Pebble store) is listed whole at a batch where a key may
// have expired (the smallest expiry set since the last listing bounds
// when that is).
type TWSDedup struct {
	store engines.Store
	ttlMs int64
	// now is the batch timestamp (ms) set by StartBatch.
	now int64
	// expired holds the keys evicted at the batch's start; refreshed
	// counts those a row set again. removed is evicted - refreshed.
	expired   keySet
	addFn     func(key []byte)
	evicted   int
	refreshed int
	// minExp is a lower bound of the stored expiries (ms), valid once set:
	// the listing path's shortcut.
	minExp   int64
	minValid bool
	exps     []int64
}

// KeyEvicter is implemented by stores that can name the keys an eviction
// removes, at a cost proportional to what it removes (memstore.Store).
type KeyEvicter interface {
	// EvictKeys is Evict that calls fn with each removed key (valid only
	// during the call).
	EvictKeys(watermark int64, fn func(key []byte)) (int, error)
}

// NewTWSDedup returns the transformWithState dedup processor over store
// with a ValueState TTL of ttlMs milliseconds (0: no TTL).
func NewTWSDedup(store engines.Store, ttlMs int64) *TWSDedup {
	d := &TWSDedup{store: store, ttlMs: ttlMs, expired: newKeySet()}
	d.addFn = d.expired.add
	return d
}

// Name returns TWSOperatorName.
func (d *TWSDedup) Name() string { return TWSOperatorName }

// TTLMs returns the ValueState's TTL in milliseconds (0: none).
func (d *TWSDedup) TTLMs() int64 { return d.ttlMs }

// StartBatch begins a batch with processing-time timestamp batchMs: the
// values expired at batchMs become invisible (and are evicted, to be
// counted as removed unless a row of the batch sets them again).
func (d *TWSDedup) StartBatch(batchMs int64) error {
	d.now = batchMs
	d.evicted, d.refreshed = 0, 0
	d.expired.reset()
	if d.ttlMs <= 0 || d.store.Len() == 0 {
		return nil
	}
	limit := batchMs * 1000
	if ke, ok := d.store.(KeyEvicter); ok {
		n, err := ke.EvictKeys(limit, d.addFn)
		if err != nil {
			return fmt.Errorf("transformWithState TTL: remove expired values: %w", err)
		}
		d.evicted = n
		return nil
	}
	return d.listAndEvict(limit)
}

// listAndEvict is StartBatch's eviction on a store that cannot name what it
// evicts: it lists the store's keys (unless no stored value can have
// expired yet) to learn which expire, then evicts them.
func (d *TWSDedup) listAndEvict(limit int64) error {
	if d.minValid && d.minExp*1000 > limit {
		return nil
	}
	r, ok := d.store.(engines.Ranger)
	if !ok {
		return fmt.Errorf("transformWithState TTL: the state store can neither name the keys it evicts nor list its keys")
	}
	next, found := int64(0), false
	err := r.Range(func(key []byte, exp int64) bool {
		if exp <= limit {
			d.expired.add(key)
		} else if !found || exp/1000 < next {
			next, found = exp/1000, true
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("transformWithState TTL: list keys: %w", err)
	}
	n, err := d.store.Evict(limit)
	if err != nil {
		return fmt.Errorf("transformWithState TTL: remove expired values: %w", err)
	}
	d.evicted = n
	d.minExp, d.minValid = next, found
	return nil
}

// expiry is the stored expiry (microseconds) of a value set in this batch.
func (d *TWSDedup) expiry() int64 {
	if d.ttlMs <= 0 {
		return engines.NoExpiry
	}
	return (d.now + d.ttlMs) * 1000
}

// note records a key the batch set: a refresh when it was listed as
// expired at the batch's start.
func (d *TWSDedup) note(key []byte) {
	if d.expired.len() > 0 && d.expired.take(key) {
		d.refreshed++
	}
	if d.ttlMs > 0 {
		e := d.now + d.ttlMs
		if !d.minValid || e < d.minExp {
			d.minExp, d.minValid = e, true
		}
	}
}

// Process sets the state of key when it does not exist (emit) and reports
// false (drop) while it exists. eventTime is not used: the processor runs
// in processing time.
func (d *TWSDedup) Process(key []byte, _ int64) (bool, error) {
	ok, err := d.store.Add(key, d.expiry())
	if ok {
		d.note(key)
	}
	return ok, err
}

// ProcessBatch is Process over a run of keys.
func (d *TWSDedup) ProcessBatch(keys []byte, ends []int32, eventTimes []int64, added []bool) error {
	d.exps = fill(d.exps, len(ends), d.expiry())
	if err := addBatch(d.store, keys, ends, d.exps, added); err != nil {
		return err
	}
	start := int32(0)
	for i, end := range ends {
		if added[i] {
			d.note(keys[start:end])
		}
		start = end
	}
	return nil
}

// Evict removes nothing: a processing-time processor ignores the event-time
// watermark; TTL expiry is done by StartBatch and counted by Removed.
func (d *TWSDedup) Evict(int64) (int, error) { return 0, nil }

// Removed returns the values the batch's TTL cleanup removed: those
// expired at its timestamp and not set again by one of its rows.
func (d *TWSDedup) Removed() int { return d.evicted - d.refreshed }

// Len returns the number of keys in state.
func (d *TWSDedup) Len() int { return d.store.Len() }

// Store returns the state store.
func (d *TWSDedup) Store() engines.Store { return d.store }

// TWSTimerDedup models the dedup processor with an event-time timer, as
// people write it with transformWithState in timeMode "EventTime" behind a
// withWatermark: one ValueState per grouping key; handleInputRows emits
// the first row of a key without state, sets the state and registers a
// timer at that row's event time (milliseconds) + the horizon, and drops
// every other row while the state exists; handleExpiredTimer clears the
// state.
//
// The rules are Spark's (TransformWithStateExec and its PySpark twin,
// TimerStateImpl, stateful_processor_util.py):
//
//   - Rows at or below the late-events watermark (the previous batch's)
//     are dropped before the processor sees them (numRowsDroppedByWatermark),
//     as for every stateful operator: the query's late filter.
//   - The batch's rows are handled first, with the state as the batch
//     found it; then the timers at or below the eviction watermark (the
//     batch's own) fire (getExpiredTimers: expiry <= watermark), each
//     clearing its key's state (numRowsRemoved) and deleting the timer. A
//     key set in this batch whose timer is already below the eviction
//     watermark goes at the batch's end.
//   - numRowsUpdated counts the states set; the custom metrics count the
//     timers registered, expired (fired) and deleted (each fired timer).
//     The timers are internal column families: numRowsTotal counts the
//     values only.
//
// The model stores the timer (ms x 1000) as the key's expiry, and Evict at
// the batch's end, with the eviction watermark, is the timers firing.
//
// Each state set registers one timer and each fired timer clears one
// state, so the timer counts are numRowsUpdated and numRowsRemoved.
type TWSTimerDedup struct {
	store   engines.Store
	timerMs int64
	exps    []int64
}

// NewTWSTimerDedup returns the event-time transformWithState dedup over
// store with a timer timerMs milliseconds after a key's first event time.
func NewTWSTimerDedup(store engines.Store, timerMs int64) *TWSTimerDedup {
	return &TWSTimerDedup{store: store, timerMs: timerMs}
}

// Name returns TWSOperatorName.
func (d *TWSTimerDedup) Name() string { return TWSOperatorName }

// TimerMs returns the timer's horizon in milliseconds.
func (d *TWSTimerDedup) TimerMs() int64 { return d.timerMs }

// timer is the timer (microseconds: milliseconds x 1000) of a key whose
// first row has event time eventTime (microseconds): the processor reads
// the event time in milliseconds, truncated.
func (d *TWSTimerDedup) timer(eventTime int64) int64 {
	ms := eventTime / 1000
	if eventTime < 0 && eventTime%1000 != 0 {
		ms-- // floor, as a timestamp's milliseconds
	}
	return (ms + d.timerMs) * 1000
}

// Process sets the state of key and registers its timer when the key has
// no state (emit), and reports false (drop) while it has.
func (d *TWSTimerDedup) Process(key []byte, eventTime int64) (bool, error) {
	return d.store.Add(key, d.timer(eventTime))
}

// ProcessBatch is Process over a run of keys.
func (d *TWSTimerDedup) ProcessBatch(keys []byte, ends []int32, eventTimes []int64, added []bool) error {
	if cap(d.exps) < len(ends) {
		d.exps = make([]int64, len(ends))
	}
	d.exps = d.exps[:len(ends)]
	for i, et := range eventTimes {
		d.exps[i] = d.timer(et)
	}
	return addBatch(d.store, keys, ends, d.exps, added)
}

// Evict fires the timers at or below the eviction watermark
// (microseconds): each clears its key's state. It returns how many.
func (d *TWSTimerDedup) Evict(watermark int64) (int, error) {
	return d.store.Evict(watermark)
}

// Len returns the number of keys in state.
func (d *TWSTimerDedup) Len() int { return d.store.Len() }

// Store returns the state store.
func (d *TWSTimerDedup) Store() engines.Store { return d.store }
