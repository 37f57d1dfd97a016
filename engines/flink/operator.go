package flink

import (
	"fmt"
	"math"
	"slices"
)

// Row is one input row as the operator sees it. Key is the encoding of the
// PARTITION BY columns (equal keys, equal strings); RowTime is the
// event-time attribute in milliseconds (rowtime dedups only); Value is an
// encoding of the whole row, compared only by keep-last without TTL (Flink's
// RecordEqualiser); ID is the caller's handle to the row, returned in the
// output.
type Row struct {
	Key     string
	Value   string
	RowTime int64
	ID      int
}

// Change is one emitted changelog row: its kind and the input row it
// carries (a -U carries the row emitted before).
type Change struct {
	Kind Kind
	Row  Row
}

// MinWatermark is the watermark before any arrives (Flink's
// Long.MIN_VALUE): no row is late against it.
const MinWatermark int64 = math.MinInt64

// ttlValue is one entry of a keyed ValueState: present, its value, and the
// TTL clock of its last write.
type ttlValue struct {
	present bool
	row     Row
	written int64
}

// keyState is the state of one key: the function's "deduplicate-state"
// (a flag for proctime keep-first, the kept row otherwise), or, for the
// insert-only rowtime keep-first, the waiting row (no TTL) and the
// already-emitted flag (with TTL).
type keyState struct {
	main    ttlValue
	waiting ttlValue
	// timer is the event-time timer of the waiting row (valid while
	// waiting.present); seq orders timers of equal time by registration.
	seq int64
}

// Operator is one keyed dedup operator at parallelism 1.
type Operator struct {
	cfg   Config
	fn    Function
	state map[string]*keyState
	now   int64 // the TTL clock
	wm    int64
	late  int64
	// bundle holds the rows of the current mini-batch, per key, keys in
	// order of first arrival; count is the CountBundleTrigger's count.
	bundle     map[string][]Row
	bundleKeys []string
	count      int64
	timerSeq   int64
}

// New returns an operator for cfg, its TTL clock at 0 and its watermark
// at MinWatermark, as a fresh harness.
func New(cfg Config) (*Operator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Operator{
		cfg:    cfg,
		fn:     cfg.Function(),
		state:  make(map[string]*keyState),
		wm:     MinWatermark,
		bundle: make(map[string][]Row),
	}, nil
}

// Function returns the Flink function the operator models.
func (o *Operator) Function() Function { return o.fn }

// SetTTLTime sets the state TTL clock (milliseconds; Flink's TTL time
// provider, the wall clock in production).
func (o *Operator) SetTTLTime(ms int64) { o.now = ms }

// TTLTime returns the state TTL clock.
func (o *Operator) TTLTime() int64 { return o.now }

// CurrentWatermark returns the operator's watermark.
func (o *Operator) CurrentWatermark() int64 { return o.wm }

// LateDropped returns numLateRecordsDropped: rows the insert-only rowtime
// keep-first dropped because their rowtime was below the watermark.
func (o *Operator) LateDropped() int64 { return o.late }

// ttlOn reports whether a state with TTL enabled is read here.
func (o *Operator) ttlOn() bool { return o.cfg.TTL > 0 }

// read is ValueState.value() of a TTL state: an expired entry is cleared
// (physically removed) and reads as absent (NeverReturnExpired); reads do
// not refresh the timestamp (OnCreateAndWrite).
func (o *Operator) read(v *ttlValue, withTTL bool) (Row, bool) {
	if !v.present {
		return Row{}, false
	}
	if withTTL && o.ttlOn() && expired(v.written, o.cfg.TTL, o.now) {
		*v = ttlValue{}
		return Row{}, false
	}
	return v.row, true
}

// write is ValueState.update(): the value and the TTL clock of the write.
func (o *Operator) write(v *ttlValue, r Row) {
	*v = ttlValue{present: true, row: r, written: o.now}
}

func (o *Operator) key(k string) *keyState {
	s := o.state[k]
	if s == nil {
		s = &keyState{}
		o.state[k] = s
	}
	return s
}

// Process handles one input row (an INSERT) at the current TTL clock and
// watermark and appends what the operator emits to out.
func (o *Operator) Process(r Row, out []Change) []Change {
	switch {
	case o.fn.MiniBatch():
		return o.addToBundle(r, out)
	case o.fn == ProcTimeKeepLast && !o.cfg.GenerateUpdateBefore && !o.cfg.GenerateInsert:
		return append(out, Change{UpdateAfter, r}) // no state at all
	case o.fn == RowTimeKeepFirstInsertOnly && r.RowTime < o.wm:
		o.late++ // late, before any state access
		return out
	}
	s := o.key(r.Key)
	switch o.fn {
	case ProcTimeKeepFirst:
		out = o.firstRowOnProcTime(s, r, out)
	case ProcTimeKeepLast:
		out = o.lastRowOnProcTime(s, r, out)
	case RowTimeChangelog:
		pre, ok := o.read(&s.main, true)
		if o.keep(pre, ok, r) {
			out = o.updateResult(pre, ok, r, out)
			o.write(&s.main, r)
		}
	case RowTimeKeepFirstInsertOnly:
		out = o.insertOnlyKeepFirst(s, r, out)
	}
	o.dropEmpty(r.Key, s)
	return out
}

// firstRowOnProcTime is DeduplicateFunctionHelper.processFirstRowOnProcTime:
// a duplicate only reads the flag, so TTL counts from the first copy.
func (o *Operator) firstRowOnProcTime(s *keyState, r Row, out []Change) []Change {
	if _, ok := o.read(&s.main, true); ok {
		return out
	}
	o.write(&s.main, Row{})
	return append(out, Change{Insert, r})
}

// lastRowOnProcTime is DeduplicateFunctionHelper.processLastRowOnProcTime
// for an insert-only input: every row writes, so TTL counts from the last
// copy; with TTL on, an identical row still emits -U/+U ("to prevent too
// early state eviction of downstream operators").
func (o *Operator) lastRowOnProcTime(s *keyState, r Row, out []Change) []Change {
	if !o.cfg.GenerateUpdateBefore && !o.cfg.GenerateInsert {
		return append(out, Change{UpdateAfter, r})
	}
	pre, ok := o.read(&s.main, true)
	o.write(&s.main, r)
	switch {
	case !ok:
		return append(out, Change{Insert, r})
	case !o.ttlOn() && pre.Value == r.Value:
		return out
	}
	if o.cfg.GenerateUpdateBefore {
		out = append(out, Change{UpdateBefore, pre})
	}
	return append(out, Change{UpdateAfter, r})
}

// keep is DeduplicateFunctionHelper.shouldKeepCurrentRow: keep-last keeps
// r when pre.rowtime <= r.rowtime (a tie goes to the later arrival),
// keep-first when r.rowtime < pre.rowtime (a tie goes to the earlier).
func (o *Operator) keep(pre Row, ok bool, r Row) bool {
	if !ok {
		return true
	}
	if o.cfg.KeepLast {
		return pre.RowTime <= r.RowTime
	}
	return r.RowTime < pre.RowTime
}

// updateResult is DeduplicateFunctionHelper.updateDeduplicateResult.
func (o *Operator) updateResult(pre Row, ok bool, r Row, out []Change) []Change {
	if !o.cfg.GenerateUpdateBefore && !o.cfg.GenerateInsert {
		return append(out, Change{UpdateAfter, r})
	}
	if !ok {
		return append(out, Change{Insert, r})
	}
	if o.cfg.GenerateUpdateBefore {
		out = append(out, Change{UpdateBefore, pre})
	}
	return append(out, Change{UpdateAfter, r})
}

// insertOnlyKeepFirst is RowTimeDeduplicateKeepFirstRowFunction.processElement
// (Flink 2.1+) for a row not below the watermark (Process drops and counts
// those first): a key already emitted (flag alive) drops the row silently;
// otherwise the row with the smallest rowtime waits, with an event-time
// timer at its rowtime.
func (o *Operator) insertOnlyKeepFirst(s *keyState, r Row, out []Change) []Change {
	if _, ok := o.read(&s.main, true); ok {
		return out
	}
	pre, ok := o.read(&s.waiting, false)
	if !ok || r.RowTime < pre.RowTime {
		o.timerSeq++
		s.seq = o.timerSeq
		o.write(&s.waiting, r)
	}
	return out
}

// dropEmpty forgets a key that holds no entry at all (only to bound the
// model's memory; an absent key and an empty one behave alike).
func (o *Operator) dropEmpty(k string, s *keyState) {
	if !s.main.present && !s.waiting.present {
		delete(o.state, k)
	}
}

// addToBundle is AbstractMapBundleOperator.processElement with the
// functions' addInput and a CountBundleTrigger: the bundle is flushed once
// it holds MiniBatchSize rows.
func (o *Operator) addToBundle(r Row, out []Change) []Change {
	rows, seen := o.bundle[r.Key]
	if !seen {
		o.bundleKeys = append(o.bundleKeys, r.Key)
	}
	switch o.fn {
	case ProcTimeMiniBatchKeepFirst: // the first row of the key stays
		if !seen {
			rows = append(rows, r)
		}
	case ProcTimeMiniBatchKeepLast: // the last row of the key replaces it
		rows = append(rows[:0], r)
	default: // rowtime: every row, in order
		rows = append(rows, r)
	}
	o.bundle[r.Key] = rows
	o.count++
	if o.count >= o.cfg.MiniBatchSize {
		out = o.flush(out)
	}
	return out
}

// flush is finishBundle: each key's buffered rows go through the
// function's helper at the current TTL clock. Flink iterates a HashMap,
// so the order across keys is Flink's hash order; the model uses the
// order of first arrival (within a key the order is exact).
func (o *Operator) flush(out []Change) []Change {
	o.count = 0
	for _, k := range o.bundleKeys {
		rows := o.bundle[k]
		s := o.key(k)
		switch o.fn {
		case ProcTimeMiniBatchKeepFirst:
			out = o.firstRowOnProcTime(s, rows[0], out)
		case ProcTimeMiniBatchKeepLast:
			out = o.lastRowOnProcTime(s, rows[0], out)
		case RowTimeMiniBatch:
			// RowTimeMiniBatchDeduplicateFunction: every buffered row is
			// compared with the kept one (all changes are sent), and the
			// kept row is written once per bundle, even when unchanged,
			// which refreshes its TTL.
			pre, ok := o.read(&s.main, true)
			for _, r := range rows {
				if o.keep(pre, ok, r) {
					out = o.updateResult(pre, ok, r, out)
					pre, ok = r, true
				}
			}
			o.write(&s.main, pre)
		}
		o.dropEmpty(k, s)
		delete(o.bundle, k)
	}
	o.bundleKeys = o.bundleKeys[:0]
	return out
}

// Watermark processes a watermark: a mini-batch operator flushes its
// bundle first; the insert-only rowtime keep-first fires the timers at or
// below it, in time order, emitting each waiting row (+I) and setting the
// key's already-emitted flag (with TTL).
func (o *Operator) Watermark(wm int64, out []Change) []Change {
	if o.fn.MiniBatch() {
		out = o.flush(out)
	}
	o.wm = wm
	if o.fn != RowTimeKeepFirstInsertOnly {
		return out
	}
	type timer struct {
		key     string
		at, seq int64
	}
	var due []timer
	for k, s := range o.state {
		if s.waiting.present && s.waiting.row.RowTime <= wm {
			due = append(due, timer{k, s.waiting.row.RowTime, s.seq})
		}
	}
	slices.SortFunc(due, func(a, b timer) int {
		if a.at != b.at {
			return cmpInt(a.at, b.at)
		}
		return cmpInt(a.seq, b.seq)
	})
	for _, t := range due {
		s := o.state[t.key]
		r := s.waiting.row
		out = append(out, Change{Insert, r})
		s.waiting = ttlValue{}
		o.write(&s.main, Row{})
	}
	return out
}

// EndOfInput ends a bounded input: the maximum watermark, which flushes a
// bundle and fires every timer.
func (o *Operator) EndOfInput(out []Change) []Change {
	return o.Watermark(math.MaxInt64, out)
}

// LogicalEntries returns the number of state entries a read would see:
// entries without TTL, and TTL entries not expired at the TTL clock. The
// insert-only rowtime keep-first has two per key at most (waiting row,
// emitted flag).
func (o *Operator) LogicalEntries() int {
	n := 0
	for _, s := range o.state {
		if s.main.present && !(o.ttlOn() && expired(s.main.written, o.cfg.TTL, o.now)) {
			n++
		}
		if s.waiting.present {
			n++
		}
	}
	return n
}

// PhysicalEntries returns the number of entries still held: the logical
// ones plus expired entries no read has removed yet. Flink's heap backend
// also removes expired entries by incremental cleanup (at every state
// access it visits up to 5 entries of that state's table, in hash order),
// which the model does not follow: Flink's count lies between
// LogicalEntries and PhysicalEntries.
func (o *Operator) PhysicalEntries() int {
	n := 0
	for _, s := range o.state {
		if s.main.present {
			n++
		}
		if s.waiting.present {
			n++
		}
	}
	return n
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// String describes the operator for errors and explain output.
func (o *Operator) String() string {
	return fmt.Sprintf("%s (ttl %d ms)", o.fn.ClassName(), o.cfg.TTL)
}
