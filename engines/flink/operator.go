package flink

import (
	"bytes"
	"fmt"
	"math"

	"github.com/dedupsim/dedupsim/engines/internal/expiry"
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
// carries (a -U carries the row emitted before, from state: its ID and
// RowTime).
type Change struct {
	Kind Kind
	Row  Row
}

// MinWatermark is the watermark before any arrives (Flink's
// Long.MIN_VALUE): no row is late against it.
const MinWatermark int64 = math.MinInt64

// DefaultCleanupSize is the entries Flink's heap backend visits for
// incremental TTL cleanup at every access of a state with TTL:
// StateTtlConfig's default IncrementalCleanupStrategy(5, false), which
// the table runtime's TTL config (StateConfigUtil.createTtlConfig) keeps,
// cleanup in background being on by default. The false is
// runCleanupForEveryRecord: only state accesses run it.
const DefaultCleanupSize = 5

// Stats counts the work of the state model, for tests and benchmarks.
type Stats struct {
	// IndexPopped is the items the expiry index handed back: one per entry
	// found expired, plus one per entry rewritten after its item was
	// placed (re-placed at its new expiry). Counting logical state costs
	// these and nothing else.
	IndexPopped int64
	// CleanupVisited and CleanupRemoved are incremental cleanup's entries
	// visited and expired entries it removed.
	CleanupVisited, CleanupRemoved int64
	// Puts are the state writes (update), Deletes the expired entries a
	// read cleared (clear): what a RocksDB backend writes to its
	// memtable. Compactions and CompactionRemoved are the modelled
	// compactions (Compact) and the expired entries they dropped.
	Puts, Deletes, Compactions, CompactionRemoved int64
}

// Operator is one keyed dedup operator at parallelism 1.
//
// State: the keys' entries live in a byte-keyed table (no allocation per
// lookup); with TTL on, every held main entry is also in an expiry index
// (engines/internal/expiry) until the TTL clock passes its expiry, so
// that LogicalEntries costs the entries expired since the last count, not
// a scan. Physical removal follows Flink's heap backend: a read clears an
// expired entry, and, with Config.CleanupSize > 0, incremental cleanup
// visits that many entries of the state at every access, in hash order.
type Operator struct {
	cfg  Config
	fn   Function
	tab  keyTable
	idx  expiry.Index
	now  int64 // the TTL clock
	wm   int64
	late int64
	// physical is the entries held (main and waiting values); expired is
	// the held mains the index has found expired at countedAt.
	physical  int
	expired   int
	countedAt int64
	// cursor is incremental cleanup's slot: its pass over the table in
	// hash order.
	cursor uint32
	stats  Stats
	popFn  func([]expiry.Item)
	repush []expiry.Item
	// kbuf and vbuf hold a string row's key and value as bytes.
	kbuf, vbuf []byte
	// timers are the insert-only keep-first's event-time timers, a
	// min-heap by (at, seq): one per row that became a waiting row; an
	// item whose entry no longer waits with its seq is stale.
	timers []timer
	// The current mini-batch bundle: bkeys are its keys in order of first
	// arrival (their bytes in barena), bhash finds a key's first entry by
	// its hash (bundleKey.sameHash chains the others), brows the rows a
	// key's bundle value holds (linked by bundleRow.next, values in
	// bvals); count is the CountBundleTrigger's count. Everything is
	// truncated at a flush and reused, so a row allocates nothing once
	// the bundle has had its size.
	bkeys    []bundleKey
	bhash    map[uint64]int
	barena   []byte
	brows    []bundleRow
	bvals    []byte
	count    int64
	timerSeq int64
	// bundleCap is the capacity of the bundle's HashMap table (0 before
	// its first key): it grows with the keys and is never shrunk.
	bundleCap int
	// waited and displaced are what the last row did to the insert-only
	// keep-first's waiting rows (Waiting).
	waited      bool
	displaced   int
	hasDisplace bool
}

// bundleKey is one key of the bundle: its bytes barena[off:off+n], its
// hash, its rows from first to last (brows indexes; -1: none) and the
// next key of the bundle with the same hash (-1: none).
type bundleKey struct {
	off, n      int
	h           uint64
	first, last int
	sameHash    int
}

// bundleRow is one buffered row: the row as fed (a string row keeps its
// Key and Value; a row given as bytes has neither), its value
// bvals[voff:voff+vn] and the key's next buffered row (-1: none).
type bundleRow struct {
	row      Row
	voff, vn int
	next     int
}

type timer struct {
	ei      int
	at, seq int64
}

// New returns an operator for cfg, its TTL clock at 0 and its watermark
// at MinWatermark, as a fresh harness.
func New(cfg Config) (*Operator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := &Operator{
		cfg:   cfg,
		fn:    cfg.Function(),
		tab:   newKeyTable(tableBits(cfg)),
		idx:   expiry.New(),
		wm:    MinWatermark,
		bhash: make(map[uint64]int),
	}
	o.popFn = o.onPopped
	return o, nil
}

// tableBits is the key table's initial size: Flink's bucket positions
// when incremental cleanup walks them, else small.
func tableBits(cfg Config) uint32 {
	if cfg.CleanupSize > 0 && cfg.TTL > 0 {
		return flinkKeyTableBits
	}
	return minKeyTableBits
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

// Waiting reports what the last row processed did to the insert-only
// rowtime keep-first's waiting rows: waits is true when it became its
// key's waiting row (to be emitted when the watermark reaches its
// rowtime), and displaced is the ID of the waiting row it replaced (an
// earlier rowtime wins), ok false when it replaced none. Both are false
// for the other functions.
func (o *Operator) Waiting() (waits bool, displaced int, ok bool) {
	return o.waited, o.displaced, o.hasDisplace
}

// Stats returns the work counters of the state model.
func (o *Operator) Stats() Stats { return o.stats }

// ttlOn reports whether a state with TTL enabled is read here.
func (o *Operator) ttlOn() bool { return o.cfg.TTL > 0 }

// access is the access callback of a state with TTL (TtlValueState's
// value() and update() run it first): incremental cleanup
// (TtlIncrementalCleanup.runCleanup) goes on with its pass over the state
// table until it has visited CleanupSize entries, removing the expired
// ones. As Flink's StateIncrementalVisitor does, it looks for each entry
// among at most CleanupSize bucket positions (CopyOnWriteStateMap's
// StateEntryChainIterator, maxTraversedMapPositions) and ends the access
// when they are all empty or its key group's map ends; it skips key
// groups that hold nothing, and leaves one as soon as it holds nothing
// (the map's visitor has no next once the map is empty); once the pass has covered the table, the
// next access starts a new one (initIteratorIfNot), at once if the
// access visited nothing. (Flink visits a bucket's chain at a time; the
// model's table has no chains, and its key groups are its table's
// segments, by its own hash.)
func (o *Operator) access() {
	size := o.cfg.CleanupSize
	if size <= 0 || !o.ttlOn() || o.cfg.RocksDB {
		return
	}
	t := &o.tab
	n := uint32(len(t.Slots))
	segSize := uint32(1) << t.SegmentShift()
	visited, restarted := 0, false
	for visited < size {
		// hasNext: a key group holding entries, from the cursor on (a
		// map the cleanup has just emptied is left at once).
		for o.cursor < n && t.Occupied(t.SegmentOf(o.cursor)) == 0 {
			o.cursor = (o.cursor | (segSize - 1)) + 1
		}
		if o.cursor >= n {
			o.cursor = 0
			if visited > 0 || restarted {
				return
			}
			restarted = true
			continue
		}
		// nextEntries: the next entry within size positions of the map.
		end := min(o.cursor+uint32(size), (o.cursor|(segSize-1))+1)
		for o.cursor < end && (t.Slots[o.cursor].Ref == 0 || !t.entries[t.Slots[o.cursor].Ref-1].main.present) {
			o.cursor++
		}
		if o.cursor == end {
			return // no entry within reach: the access ends
		}
		ei := int(t.Slots[o.cursor].Ref - 1)
		e := &t.entries[ei]
		visited++
		o.stats.CleanupVisited++
		if expired(e.main.written, o.cfg.TTL, o.now) {
			o.stats.CleanupRemoved++
			if o.dropMain(ei, o.cursor) {
				continue // a later entry may have shifted into the slot
			}
		}
		o.cursor++
	}
}

// noSlot asks dropMain to find the entry's slot itself.
const noSlot = ^uint32(0)

// dropMain clears entry ei's main value and frees the entry when it
// holds nothing else (at slot, or found); it reports whether it freed it.
func (o *Operator) dropMain(ei int, slot uint32) bool {
	e := &o.tab.entries[ei]
	if !e.main.present {
		return false
	}
	e.main.present = false
	o.physical--
	if e.expired {
		o.expired--
		e.expired = false
	}
	e.indexed = false
	e.gen++
	if e.wait.present {
		return false
	}
	if slot == noSlot {
		slot = o.tab.slotOf(ei)
	}
	o.tab.removeAt(slot)
	return true
}

// readMain is value() of the main state: an expired entry is cleared
// (physically removed) and reads as absent (NeverReturnExpired); reads
// do not refresh the timestamp (OnCreateAndWrite). It returns the
// entry's index, -1 when the key holds no entry.
func (o *Operator) readMain(key []byte, h uint64) (int, bool) {
	o.access()
	ei := o.tab.find(key, h)
	if ei < 0 {
		return -1, false
	}
	e := &o.tab.entries[ei]
	if !e.main.present {
		return ei, false
	}
	if o.ttlOn() && expired(e.main.written, o.cfg.TTL, o.now) {
		o.stats.Deletes++
		if o.dropMain(ei, noSlot) {
			return -1, false
		}
		return ei, false
	}
	return ei, true
}

// writeMain is update() of the main state: the row and the TTL clock of
// the write. It returns the entry's index.
func (o *Operator) writeMain(key []byte, h uint64, id int, rowTime int64, val []byte) int {
	o.access()
	o.stats.Puts++
	ei := o.tab.findOrInsert(key, h)
	e := &o.tab.entries[ei]
	switch {
	case !e.main.present:
		o.physical++
	case e.expired:
		o.expired--
		e.expired = false
	}
	e.main.present, e.main.id, e.main.rowTime, e.main.written = true, id, rowTime, o.now
	e.main.updated = false
	e.main.val = append(e.main.val[:0], val...)
	if o.ttlOn() {
		at := expiry.OrderKey(expiryOf(o.now, o.cfg.TTL))
		if e.indexed && at < e.itemAt {
			// An earlier expiry than the item's (the clock went back):
			// retire the item, place a new one.
			e.gen++
			e.indexed = false
		}
		if !e.indexed {
			o.idx.Push(expiry.Item{At: at, Ref: uint32(ei), Tag: e.gen})
			e.indexed, e.itemAt = true, at
		}
	}
	return ei
}

// advance brings the count of expired mains to the TTL clock: the
// expiry index hands back the items at or below it. An item whose entry
// was rewritten since is placed again at its new expiry (the index holds
// one item per held main, whatever the number of writes).
func (o *Operator) advance() {
	if !o.ttlOn() {
		return
	}
	if o.now < o.countedAt {
		o.recount()
	}
	o.countedAt = o.now
	if o.idx.Len() == 0 {
		return
	}
	o.idx.PopUpTo(expiry.OrderKey(o.now), o.popFn)
	for _, it := range o.repush {
		o.idx.Push(it)
	}
	o.repush = o.repush[:0]
}

// onPopped takes the index's items expired at the TTL clock.
func (o *Operator) onPopped(its []expiry.Item) {
	w := expiry.OrderKey(o.now)
	for _, it := range its {
		o.stats.IndexPopped++
		e := &o.tab.entries[it.Ref]
		if !e.used || e.gen != it.Tag || !e.indexed {
			continue // the main it stood for was cleared
		}
		if at := expiry.OrderKey(expiryOf(e.main.written, o.cfg.TTL)); at > w {
			e.itemAt = at // rewritten since: not expired yet
			o.repush = append(o.repush, expiry.Item{At: at, Ref: it.Ref, Tag: e.gen})
			continue
		}
		e.indexed, e.expired = false, true
		o.expired++
	}
}

// recount handles a TTL clock moved back: mains counted expired that are
// alive again at the clock go back into the index. A scan, but only when
// the clock goes back (never in a scenario).
func (o *Operator) recount() {
	for ei := range o.tab.entries {
		e := &o.tab.entries[ei]
		if !e.used || !e.expired || expired(e.main.written, o.cfg.TTL, o.now) {
			continue
		}
		e.expired = false
		o.expired--
		at := expiry.OrderKey(expiryOf(e.main.written, o.cfg.TTL))
		o.idx.Push(expiry.Item{At: at, Ref: uint32(ei), Tag: e.gen})
		e.indexed, e.itemAt = true, at
	}
}

// Process handles one input row (an INSERT) at the current TTL clock and
// watermark and appends what the operator emits to out. Emitted rows
// that come from state (a -U's previous row, a fired timer's waiting
// row) carry the stored row's ID and RowTime only.
func (o *Operator) Process(r Row, out []Change) []Change {
	o.kbuf = append(o.kbuf[:0], r.Key...)
	o.vbuf = append(o.vbuf[:0], r.Value...)
	return o.process(o.kbuf, o.vbuf, r, out)
}

// ProcessBytes is Process for a row given as bytes: key encodes the
// PARTITION BY columns, val the row (compared by keep-last without TTL;
// nil otherwise will do). The emitted rows carry id and rowTime only. It
// allocates nothing once the state (and, under mini-batch, the bundle)
// has reached its size.
func (o *Operator) ProcessBytes(key, val []byte, rowTime int64, id int, out []Change) []Change {
	return o.process(key, val, Row{RowTime: rowTime, ID: id}, out)
}

func (o *Operator) process(key, val []byte, r Row, out []Change) []Change {
	o.waited, o.hasDisplace = false, false
	switch {
	case o.fn.MiniBatch():
		return o.addToBundle(key, val, r, out)
	case o.fn == ProcTimeKeepLast && !o.cfg.GenerateUpdateBefore && !o.cfg.GenerateInsert:
		return append(out, Change{UpdateAfter, r}) // no state at all
	case o.fn == RowTimeKeepFirstInsertOnly && r.RowTime < o.wm:
		o.late++ // late, before any state access
		return out
	}
	h := hashKey(key)
	switch o.fn {
	case ProcTimeKeepFirst:
		out = o.firstRowOnProcTime(key, h, r, out)
	case ProcTimeKeepLast:
		out = o.lastRowOnProcTime(key, h, r, val, out)
	case RowTimeChangelog:
		pre, ok := o.readRow(key, h)
		if o.keep(pre, ok, r) {
			out = o.updateResult(pre, ok, r, out)
			o.writeMain(key, h, r.ID, r.RowTime, val)
		}
	case RowTimeKeepFirstInsertOnly:
		out = o.insertOnlyKeepFirst(key, h, r, val, out)
	}
	return out
}

// readRow reads the main state's row: its ID and RowTime.
func (o *Operator) readRow(key []byte, h uint64) (Row, bool) {
	ei, ok := o.readMain(key, h)
	if !ok {
		return Row{}, false
	}
	m := &o.tab.entries[ei].main
	return Row{ID: m.id, RowTime: m.rowTime}, true
}

// firstRowOnProcTime is DeduplicateFunctionHelper.processFirstRowOnProcTime:
// a duplicate only reads the flag, so TTL counts from the first copy.
func (o *Operator) firstRowOnProcTime(key []byte, h uint64, r Row, out []Change) []Change {
	if _, ok := o.readMain(key, h); ok {
		return out
	}
	o.writeMain(key, h, 0, 0, nil)
	return append(out, Change{Insert, r})
}

// lastRowOnProcTime is DeduplicateFunctionHelper.processLastRowOnProcTime
// for an insert-only input: every row writes, so TTL counts from the last
// copy; with TTL on, an identical row still emits -U/+U ("to prevent too
// early state eviction of downstream operators").
//
// Without TTL an identical row is suppressed only while the stored row is
// still an INSERT: on the heap backend the state holds the row object,
// whose kind Flink sets to UPDATE_AFTER after state.update when it emits
// it as +U, and the planner's generated equaliser
// (EqualiserCodeGenerator) compares row kinds first. So a1, a1, a2, a2
// emits +I a1, (nothing), -U a1 +U a2, -U a2 +U a2: after the first +U
// every identical repeat is an update. RocksDB serializes the row at
// update, before its kind is set, so there the stored row stays INSERT and
// every identical repeat is suppressed.
func (o *Operator) lastRowOnProcTime(key []byte, h uint64, r Row, val []byte, out []Change) []Change {
	if !o.cfg.GenerateUpdateBefore && !o.cfg.GenerateInsert {
		return append(out, Change{UpdateAfter, r})
	}
	ei, ok := o.readMain(key, h)
	var pre Row
	same := false
	if ok {
		m := &o.tab.entries[ei].main
		pre = Row{ID: m.id, RowTime: m.rowTime}
		same = !o.ttlOn() && (!m.updated || o.cfg.RocksDB) && bytes.Equal(m.val, val)
	}
	ei = o.writeMain(key, h, r.ID, r.RowTime, val)
	switch {
	case !ok:
		return append(out, Change{Insert, r})
	case same:
		return out
	}
	o.tab.entries[ei].main.updated = true
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
// timer at its rowtime. The waiting row's state has no TTL, so reading it
// runs no cleanup.
func (o *Operator) insertOnlyKeepFirst(key []byte, h uint64, r Row, val []byte, out []Change) []Change {
	if _, ok := o.readMain(key, h); ok {
		return out
	}
	ei := o.tab.find(key, h)
	if ei >= 0 && o.tab.entries[ei].wait.present && r.RowTime >= o.tab.entries[ei].wait.rowTime {
		return out
	}
	o.timerSeq++
	ei = o.tab.findOrInsert(key, h)
	e := &o.tab.entries[ei]
	if !e.wait.present {
		o.physical++
	} else {
		o.displaced, o.hasDisplace = e.wait.id, true
	}
	o.waited = true
	e.wait.present, e.wait.id, e.wait.rowTime, e.wait.written = true, r.ID, r.RowTime, o.now
	e.wait.val = append(e.wait.val[:0], val...)
	e.seq = o.timerSeq
	o.pushTimer(timer{ei, r.RowTime, o.timerSeq})
	return out
}

// timerLess orders timers by time, then by registration.
func timerLess(a, b timer) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

// pushTimer adds t to the timer heap.
func (o *Operator) pushTimer(t timer) {
	h := append(o.timers, t)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !timerLess(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	o.timers = h
}

// popTimer removes and returns the earliest timer.
func (o *Operator) popTimer() timer {
	h := o.timers
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && timerLess(h[l], h[m]) {
			m = l
		}
		if l+1 < n && timerLess(h[l+1], h[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	o.timers = h
	return top
}

// addToBundle is AbstractMapBundleOperator.processElement with the
// functions' addInput and a CountBundleTrigger: the bundle is flushed once
// it holds MiniBatchSize rows. Keep-first keeps a key's first row,
// keep-last its last, rowtime every row in order.
func (o *Operator) addToBundle(key, val []byte, r Row, out []Change) []Change {
	h := hashKey(key)
	ki := -1
	head, seen := o.bhash[h]
	if seen {
		for i := head; i >= 0; i = o.bkeys[i].sameHash {
			k := &o.bkeys[i]
			if bytes.Equal(o.barena[k.off:k.off+k.n], key) {
				ki = i
				break
			}
		}
	} else {
		head = -1
	}
	if ki < 0 {
		ki = len(o.bkeys)
		o.bkeys = append(o.bkeys, bundleKey{off: len(o.barena), n: len(key), h: h, first: -1, last: -1, sameHash: head})
		o.barena = append(o.barena, key...)
		o.bhash[h] = ki
		o.bundleCap = max(o.bundleCap, hashMapCapacity)
		for len(o.bkeys) > o.bundleCap/4*3 {
			o.bundleCap *= 2
		}
	}
	k := &o.bkeys[ki]
	if o.fn != ProcTimeMiniBatchKeepFirst || k.first < 0 {
		ri := len(o.brows)
		o.brows = append(o.brows, bundleRow{row: r, voff: len(o.bvals), vn: len(val), next: -1})
		o.bvals = append(o.bvals, val...)
		switch {
		case k.first < 0 || o.fn == ProcTimeMiniBatchKeepLast: // the key's only row
			k.first, k.last = ri, ri
		default: // rowtime: every row, in order
			o.brows[k.last].next = ri
			k.last = ri
		}
	}
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
	for ki := range o.bkeys {
		bk := o.bkeys[ki]
		key := append(o.kbuf[:0], o.barena[bk.off:bk.off+bk.n]...)
		o.kbuf = key
		h := bk.h
		first := o.brows[bk.first]
		switch o.fn {
		case ProcTimeMiniBatchKeepFirst:
			out = o.firstRowOnProcTime(key, h, first.row, out)
		case ProcTimeMiniBatchKeepLast:
			o.vbuf = append(o.vbuf[:0], o.bvals[first.voff:first.voff+first.vn]...)
			out = o.lastRowOnProcTime(key, h, first.row, o.vbuf, out)
		case RowTimeMiniBatch:
			// RowTimeMiniBatchDeduplicateFunction: every buffered row is
			// compared with the kept one (all changes are sent), and the
			// kept row is written once per bundle, even when unchanged,
			// which refreshes its TTL.
			pre, ok := o.readRow(key, h)
			for ri := bk.first; ri >= 0; ri = o.brows[ri].next {
				r := o.brows[ri].row
				if o.keep(pre, ok, r) {
					out = o.updateResult(pre, ok, r, out)
					pre, ok = Row{ID: r.ID, RowTime: r.RowTime}, true
				}
			}
			o.writeMain(key, h, pre.ID, pre.RowTime, nil)
		}
	}
	o.bkeys, o.barena, o.brows, o.bvals = o.bkeys[:0], o.barena[:0], o.brows[:0], o.bvals[:0]
	clear(o.bhash)
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
	// The timers at or below the watermark, in time order; a stale one
	// (its row was replaced by an earlier one, or emitted) fires nothing.
	for len(o.timers) > 0 && o.timers[0].at <= wm {
		t := o.popTimer()
		e := &o.tab.entries[t.ei]
		if !e.used || !e.wait.present || e.seq != t.seq {
			continue
		}
		out = append(out, Change{Insert, Row{ID: e.wait.id, RowTime: e.wait.rowTime}})
		// onTimer: emit, clear the waiting row, update the flag. The flag
		// is written first here so that the entry, still holding the
		// waiting row, is not freed in between; cleanup visits only the
		// flag state, where this key has no entry, so the order changes
		// nothing.
		o.kbuf = append(o.kbuf[:0], e.key...)
		o.writeMain(o.kbuf, hashKey(o.kbuf), 0, 0, nil)
		o.tab.entries[t.ei].wait.present = false
		o.physical--
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
// emitted flag). It costs the entries expired since the last call (the
// expiry index), not a scan of the state.
func (o *Operator) LogicalEntries() int {
	o.advance()
	return o.physical - o.expired
}

// Compact is a full compaction of a RocksDB backend's state at the TTL
// clock (RocksDB's compactRange, which flushes the memtable first, as
// RocksDBKeyedStateBackend.compactState runs it): Flink's compaction
// filter (FlinkCompactionFilter, set for every state with TTL) drops
// every entry expired at the clock; the logical count does not change.
// The filter reads the clock at the start and after every
// QueryTimeAfterNumEntries entries; the model's clock does not move
// during a compaction, so every entry is judged at one instant. It
// returns the entries dropped. It scans the table (a compaction visits
// every entry); it does nothing without TTL or on the heap backend.
func (o *Operator) Compact() int {
	if !o.cfg.RocksDB || !o.ttlOn() {
		return 0
	}
	o.advance()
	o.stats.Compactions++
	if o.expired == 0 {
		return 0
	}
	n := 0
	for ei := range o.tab.entries {
		e := &o.tab.entries[ei]
		if e.used && e.main.present && e.expired {
			o.dropMain(ei, noSlot)
			n++
		}
	}
	o.stats.CompactionRemoved += int64(n)
	return n
}

// PhysicalEntries returns the number of entries still held: the logical
// ones plus expired entries not removed yet. Without incremental cleanup
// (CleanupSize 0) only a read removes an expired entry, and the count is
// an upper bound of Flink's heap backend (numKeyedStateEntries); with
// DefaultCleanupSize the model also removes them as Flink's incremental
// cleanup does, at the same rate, in the model's hash order (Flink's
// follows its key hashes, so which expired entries go first differs).
// On RocksDB (Config.RocksDB) an expired entry stays until a read clears
// it or Compact drops it: the count is RocksDB's keys exactly when every
// compaction that ran is modelled by a Compact call.
func (o *Operator) PhysicalEntries() int { return o.physical }

// String describes the operator for errors and explain output.
func (o *Operator) String() string {
	return fmt.Sprintf("%s (ttl %d ms)", o.fn.ClassName(), o.cfg.TTL)
}
