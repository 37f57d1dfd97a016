// Package spark holds dedupsim's models of Spark's two streaming dedup
// operators, each over a state store:
//
//   - Dedupe is StreamingDeduplicateExec (dropDuplicates): the state maps
//     each key to an empty value. It evicts only when the watermarked
//     event-time column is one of its keys, and then drops keys whose event
//     time is at or below the watermark; otherwise keys live forever.
//   - DedupeWithinWatermark is StreamingDeduplicateWithinWatermarkExec
//     (dropDuplicatesWithinWatermark): the state maps each key to
//     expiresAt = event time of the first copy + the watermark delay, and a
//     key is evicted once watermark >= expiresAt.
//
// Worked example (delay 10 s, times in seconds): a@10 is stored with
// expiresAt 20. With the watermark at 5, a@15 is a duplicate. Once a batch
// runs with watermark 20, a is evicted (20 >= 20); a later a@21 (not late:
// 21 > 20) is emitted again.
//
// The late-row filter (event time at or below the previous batch's
// watermark) is applied by the executor before rows reach an operator,
// exactly where Spark applies it: before the state is consulted.
package spark

import "github.com/dedupsim/dedupsim/engines"

// Operator is one dedup operator as the executor drives it.
type Operator interface {
	// Name is Spark's operator short name: "dedupe" or "dedupeWithinWatermark".
	Name() string
	// Process decides a row that passed the late filter: it stores the key
	// and reports true (emit) when the key is new, and reports false
	// (duplicate) otherwise. eventTime is in microseconds.
	Process(key []byte, eventTime int64) (bool, error)
	// ProcessBatch is Process for each key keys[ends[i-1]:ends[i]] (ends[-1]
	// is 0) with event time eventTimes[i], in order, setting added[i] to
	// Process's result: a key earlier in the run is seen by a later one.
	// ends, eventTimes and added have the same length. It hands the whole
	// run to stores that implement BatchAdder.
	ProcessBatch(keys []byte, ends []int32, eventTimes []int64, added []bool) error
	// Evict removes the keys that the eviction watermark (microseconds)
	// expires and returns how many.
	Evict(watermark int64) (int, error)
	// Len returns the number of keys in state.
	Len() int
	// Store returns the operator's state store.
	Store() engines.Store
}

// Dedupe models StreamingDeduplicateExec.
type Dedupe struct {
	store     engines.Store
	evictable bool
	// exps is ProcessBatch's buffer of expiries, reused across batches.
	exps []int64
}

// NewDedupe returns a dropDuplicates operator over store. evictByEventTime
// is true when the watermarked event-time column is among the keys: only
// then is a key's event time its expiry.
func NewDedupe(store engines.Store, evictByEventTime bool) *Dedupe {
	return &Dedupe{store: store, evictable: evictByEventTime}
}

// Name returns "dedupe".
func (d *Dedupe) Name() string { return "dedupe" }

// Process stores key unless present. The key's expiry is its event time
// when the event time is a key column, and never otherwise.
func (d *Dedupe) Process(key []byte, eventTime int64) (bool, error) {
	exp := engines.NoExpiry
	if d.evictable {
		exp = eventTime
	}
	return d.store.Add(key, exp)
}

// ProcessBatch is Process over a run of keys. The expiries are the event
// times themselves, or engines.NoExpiry.
func (d *Dedupe) ProcessBatch(keys []byte, ends []int32, eventTimes []int64, added []bool) error {
	exps := eventTimes
	if !d.evictable {
		d.exps = fill(d.exps, len(ends), engines.NoExpiry)
		exps = d.exps
	}
	return addBatch(d.store, keys, ends, exps, added)
}

// Evict removes keys whose event time is at or below watermark, when the
// event time is a key; otherwise it removes nothing, as Spark's
// removeKeysOlderThanWatermark does without a key watermark predicate.
func (d *Dedupe) Evict(watermark int64) (int, error) {
	if !d.evictable {
		return 0, nil
	}
	return d.store.Evict(watermark)
}

// Len returns the number of keys in state.
func (d *Dedupe) Len() int { return d.store.Len() }

// Store returns the state store.
func (d *Dedupe) Store() engines.Store { return d.store }

// DedupeWithinWatermark models StreamingDeduplicateWithinWatermarkExec.
type DedupeWithinWatermark struct {
	store       engines.Store
	delayMicros int64
	// exps is ProcessBatch's buffer of expiries, reused across batches.
	exps []int64
}

// NewDedupeWithinWatermark returns a dropDuplicatesWithinWatermark operator
// over store with the watermark delay of its event-time column.
func NewDedupeWithinWatermark(store engines.Store, delayMs int64) *DedupeWithinWatermark {
	return &DedupeWithinWatermark{store: store, delayMicros: delayMs * 1000}
}

// Name returns "dedupeWithinWatermark".
func (d *DedupeWithinWatermark) Name() string { return "dedupeWithinWatermark" }

// Process stores key with expiresAt = eventTime + delay unless present.
//
// The sum is a plain 64-bit addition that wraps, as Spark's is
// (StreamingDeduplicateWithinWatermarkExec.putDupInfoIntoState:
// timestamp + DateTimeUtils.millisToMicros(delayThresholdMs), a Scala Long
// +): when it exceeds 2^63-1 microseconds, expiresAt is negative, the
// key is evicted by the batch that stored it (any watermark >= 0 is >=
// expiresAt), and its next copy is emitted again. Spark accepts delays up
// to 2^63-1 microseconds (about 292,000 years; IntervalUtils.getDuration
// throws beyond), so only such delays, or event times near that limit,
// wrap. The stores order expiries as signed numbers, so they evict a
// wrapped key at once, as Spark's full scan does.
func (d *DedupeWithinWatermark) Process(key []byte, eventTime int64) (bool, error) {
	return d.store.Add(key, eventTime+d.delayMicros)
}

// ProcessBatch is Process over a run of keys: expiresAt = eventTime +
// delay for each, wrapping as Process does.
func (d *DedupeWithinWatermark) ProcessBatch(keys []byte, ends []int32, eventTimes []int64, added []bool) error {
	if cap(d.exps) < len(eventTimes) {
		d.exps = make([]int64, len(eventTimes))
	}
	d.exps = d.exps[:len(eventTimes)]
	for i, et := range eventTimes {
		d.exps[i] = et + d.delayMicros
	}
	return addBatch(d.store, keys, ends, d.exps, added)
}

// Evict removes keys with expiresAt <= watermark.
func (d *DedupeWithinWatermark) Evict(watermark int64) (int, error) {
	return d.store.Evict(watermark)
}

// Len returns the number of keys in state.
func (d *DedupeWithinWatermark) Len() int { return d.store.Len() }

// Store returns the state store.
func (d *DedupeWithinWatermark) Store() engines.Store { return d.store }

// addBatch adds a run of keys to s: in one call when s is a BatchAdder,
// else one Add per key.
func addBatch(s engines.Store, keys []byte, ends []int32, exps []int64, added []bool) error {
	if ba, ok := s.(engines.BatchAdder); ok {
		return ba.AddBatch(keys, ends, exps, added)
	}
	start := int32(0)
	for i, end := range ends {
		ok, err := s.Add(keys[start:end], exps[i])
		if err != nil {
			return err
		}
		added[i] = ok
		start = end
	}
	return nil
}

// fill returns buf resized to n with every element v, reusing its memory.
func fill(buf []int64, n int, v int64) []int64 {
	if cap(buf) < n {
		buf = make([]int64, n)
	}
	buf = buf[:n]
	for i := range buf {
		buf[i] = v
	}
	return buf
}
