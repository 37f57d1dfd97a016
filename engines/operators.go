// Package engines holds dedupsim's models of Spark's two streaming dedup
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
package engines

// Operator is one dedup operator as the executor drives it.
type Operator interface {
	// Name is Spark's operator short name: "dedupe" or "dedupeWithinWatermark".
	Name() string
	// Process decides a row that passed the late filter: it stores the key
	// and reports true (emit) when the key is new, and reports false
	// (duplicate) otherwise. eventTime is in microseconds.
	Process(key []byte, eventTime int64) (bool, error)
	// Evict removes the keys that the eviction watermark (microseconds)
	// expires and returns how many.
	Evict(watermark int64) (int, error)
	// Len returns the number of keys in state.
	Len() int
	// Store returns the operator's state store.
	Store() Store
}

// Dedupe models StreamingDeduplicateExec.
type Dedupe struct {
	store     Store
	evictable bool
}

// NewDedupe returns a dropDuplicates operator over store. evictByEventTime
// is true when the watermarked event-time column is among the keys: only
// then is a key's event time its expiry.
func NewDedupe(store Store, evictByEventTime bool) *Dedupe {
	return &Dedupe{store: store, evictable: evictByEventTime}
}

// Name returns "dedupe".
func (d *Dedupe) Name() string { return "dedupe" }

// Process stores key unless present. The key's expiry is its event time
// when the event time is a key column, and never otherwise.
func (d *Dedupe) Process(key []byte, eventTime int64) (bool, error) {
	exp := NoExpiry
	if d.evictable {
		exp = eventTime
	}
	return d.store.Add(key, exp)
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
func (d *Dedupe) Store() Store { return d.store }

// DedupeWithinWatermark models StreamingDeduplicateWithinWatermarkExec.
type DedupeWithinWatermark struct {
	store       Store
	delayMicros int64
}

// NewDedupeWithinWatermark returns a dropDuplicatesWithinWatermark operator
// over store with the watermark delay of its event-time column.
func NewDedupeWithinWatermark(store Store, delayMs int64) *DedupeWithinWatermark {
	return &DedupeWithinWatermark{store: store, delayMicros: delayMs * 1000}
}

// Name returns "dedupeWithinWatermark".
func (d *DedupeWithinWatermark) Name() string { return "dedupeWithinWatermark" }

// Process stores key with expiresAt = eventTime + delay unless present.
func (d *DedupeWithinWatermark) Process(key []byte, eventTime int64) (bool, error) {
	return d.store.Add(key, eventTime+d.delayMicros)
}

// Evict removes keys with expiresAt <= watermark.
func (d *DedupeWithinWatermark) Evict(watermark int64) (int, error) {
	return d.store.Evict(watermark)
}

// Len returns the number of keys in state.
func (d *DedupeWithinWatermark) Len() int { return d.store.Len() }

// Store returns the state store.
func (d *DedupeWithinWatermark) Store() Store { return d.store }
