// Package beam models Apache Beam's Deduplicate transform (Java
// Deduplicate.keyedValues, its stateful DeduplicateFn) as the Java
// DirectRunner runs it, in the global window or in fixed windows.
//
// Per key, DeduplicateFn keeps a ValueState "seen" and one expiry timer in
// the chosen time domain. The first element of a key (seen unset) sets the
// timer with offset(d).setRelative(), marks the key seen and is output;
// every later element of the key is dropped while seen is set and does not
// move the timer. When the timer fires it clears seen, so the next copy is
// output again: in the global window nothing is ever late.
//
// In fixed windows state is per key and window: copies in different
// windows are not duplicates. Once the watermark is past a window's
// garbage-collection time (its end - 1 ms, allowed lateness 0) the runner
// clears the window's state and drops every later element of it as late
// (on the DirectRunner its GroupAlsoByWindow stage drops them and counts
// DroppedDueToLateness; StatefulDoFnRunner's StatefulParDoDropped is the
// counter of runners that drop them in the ParDo), and an event-time
// expiry timer is capped at that time (minTargetAndGcTime).
//
// What setRelative means is the Java runner's (runners-core
// SimpleDoFnRunner.TimerInternalsTimer.getCurrentTime): in event time the
// timer is set to the transform's current input watermark + d, not to the
// element's timestamp + d (Python's DeduplicatePerKey uses the timestamp);
// in processing time to the current processing time + d. Before the first
// watermark advance the input watermark is Beam's minimum timestamp, so
// those timers fire at the first advance. On the DirectRunner a timer set
// for T fires once its domain's time is past T (strictly), between two
// TestStream events. Both facts were measured by oracles/beam (cases
// own-event-time-timer-from-the-watermark, own-event-time-timer-boundary,
// own-processing-time-timer-boundary). Times are milliseconds.
package beam

import (
	"fmt"
	"slices"
	"sort"

	"github.com/dedupsim/dedupsim/engines"
)

// TimeDomain is the domain of the expiry timer.
type TimeDomain uint8

const (
	// ProcessingTime is Beam's default (TimeDomain.PROCESSING_TIME).
	ProcessingTime TimeDomain = iota
	// EventTime is TimeDomain.EVENT_TIME: the timer follows the watermark.
	EventTime
)

// String returns the name the trace format uses.
func (d TimeDomain) String() string {
	if d == EventTime {
		return "event"
	}
	return "processing"
}

// DefaultDuration is Deduplicate.DEFAULT_DURATION: 10 minutes.
const DefaultDuration int64 = 10 * 60 * 1000

// MinTimestamp is the watermark before any advance: Beam's
// BoundedWindow.TIMESTAMP_MIN_VALUE in ms.
const MinTimestamp int64 = -9223372036854775

// maxTimestamp is Beam's BoundedWindow.TIMESTAMP_MAX_VALUE in ms: past
// every timer.
const maxTimestamp int64 = 9223372036854775

// globalGC is the garbage-collection time of the global window:
// GlobalWindow.maxTimestamp(), TIMESTAMP_MAX_VALUE less a day.
const globalGC int64 = 9223372036854775 - 24*60*60*1000

// stateKey is a key in one window (its start; 0 in the global window).
type stateKey struct {
	key   string
	start int64
}

// Dedup is DeduplicateFn over every key and window.
type Dedup struct {
	domain   TimeDomain
	duration int64
	// window is the fixed windows' size, 0 for the global window;
	// lateness their allowed lateness.
	window, lateness int64
	// expiry maps a seen key and window to the time its timer is set for.
	expiry map[stateKey]int64
	// queue holds the seen keys in the order their timers were set, from
	// queue[head], each with its timer before the window's cap: a later
	// timer is never earlier (processing time and the watermark only move
	// forward, d is fixed), so firing pops from the front and costs what
	// it fires, not the size of the state. An entry whose key a window's
	// garbage collection cleared first is skipped when popped (such a key
	// never comes back: its window's elements are late).
	queue []timer
	head  int
	// windows are the starts of the fixed windows holding seen keys, in
	// order; members the keys set in each (a key set again after its
	// timer fired is listed again). A window's garbage collection clears
	// its keys.
	windows        []int64
	members        map[int64][]string
	watermark      int64
	processingTime int64
	droppedLate    int64
	fired          int64
}

// timer is a queued expiry timer: the key and window, and the time it
// was set for before the window's cap.
type timer struct {
	k  stateKey
	at int64
}

// NewDedup returns the transform with the given domain, duration d (ms,
// positive) and fixed-window size (ms; 0 for the global window), allowed
// lateness 0. Processing time starts at 0.
func NewDedup(domain TimeDomain, duration, window int64) (*Dedup, error) {
	return NewWindowed(domain, duration, window, 0)
}

// NewWindowed is NewDedup with an allowed lateness (ms, at least 0) for
// fixed windows: a window's garbage-collection time is its end - 1 ms +
// lateness (LateDataUtils.garbageCollectionTime), which both caps the
// event-time timers of its keys and says when its state is cleared and
// its elements are dropped as late.
func NewWindowed(domain TimeDomain, duration, window, lateness int64) (*Dedup, error) {
	if duration <= 0 {
		return nil, fmt.Errorf("beam deduplicate: duration %d ms must be positive", duration)
	}
	if window < 0 {
		return nil, fmt.Errorf("beam deduplicate: window size %d ms must not be negative", window)
	}
	if lateness < 0 || lateness > 0 && window == 0 {
		return nil, fmt.Errorf("beam deduplicate: allowed lateness %d ms must be at least 0, and 0 in the global window", lateness)
	}
	return &Dedup{domain: domain, duration: duration, window: window, lateness: lateness, expiry: map[stateKey]int64{}, members: map[int64][]string{}, watermark: MinTimestamp}, nil
}

// windowOf returns the start of the window of an element at ts and the
// window's garbage-collection time.
func (d *Dedup) windowOf(ts int64) (start, gc int64) {
	if d.window == 0 {
		return 0, globalGC
	}
	start = ts - ((ts%d.window)+d.window)%d.window
	return start, d.gcOf(start)
}

// gcOf returns the garbage-collection time of the fixed window starting
// at start: its maxTimestamp plus the allowed lateness.
func (d *Dedup) gcOf(start int64) int64 { return start + d.window - 1 + d.lateness }

// Process runs one element of key with event timestamp ts. The timestamp
// only picks the window: in event time the timer follows the input
// watermark (see the package comment).
//
// Worked example (global window, event time, d = 10 s): the watermark is
// at 5 s when x@1s arrives: output, timer at 15 s. The watermark moves to
// 12 s, x@1s again: dropped (with the timestamp's rule, 1 + 10 = 11 s, it
// would have been output). The watermark moves to 15 s: nothing fires; to
// 15.001 s: x is cleared.
func (d *Dedup) Process(key string, ts int64) engines.Outcome {
	start, gc := d.windowOf(ts)
	if gc < d.watermark {
		d.droppedLate++
		return engines.DroppedLate
	}
	k := stateKey{key: key, start: start}
	if _, seen := d.expiry[k]; seen {
		return engines.DroppedDuplicate
	}
	at := d.processingTime + d.duration
	if d.domain == EventTime {
		at = d.watermark + d.duration
		d.expiry[k] = min(at, gc)
		if d.window == 0 {
			// One cap for every key: the queue stays in order. A fixed
			// window's cap is its own, met by its garbage collection.
			at = min(at, gc)
		}
	} else {
		d.expiry[k] = at
	}
	d.queue = append(d.queue, timer{k, at})
	if d.window > 0 {
		m, ok := d.members[start]
		if !ok {
			i, _ := slices.BinarySearch(d.windows, start)
			d.windows = slices.Insert(d.windows, i, start)
		}
		d.members[start] = append(m, key)
	}
	return engines.Emitted
}

// fireQueue fires the timers at the front of the queue that have fired
// once their domain's time is now, and returns how many keys it cleared.
func (d *Dedup) fireQueue(now int64) int {
	n := 0
	for d.head < len(d.queue) {
		e := d.queue[d.head]
		if !fires(e.at, now) {
			break
		}
		if _, ok := d.expiry[e.k]; ok {
			delete(d.expiry, e.k)
			n++
		}
		d.queue[d.head] = timer{}
		d.head++
	}
	// Reuse the queue's front once half of it is spent, so that it holds
	// the live timers and no more than as many spent slots.
	if d.head > 0 && d.head >= len(d.queue)/2 {
		live := copy(d.queue, d.queue[d.head:])
		clear(d.queue[live:])
		d.queue, d.head = d.queue[:live], 0
	}
	d.fired += int64(n)
	return n
}

// collect clears the fixed windows whose garbage-collection time the
// watermark is past, oldest first, and returns how many keys it cleared.
func (d *Dedup) collect() int {
	n := 0
	for len(d.windows) > 0 && fires(d.gcOf(d.windows[0]), d.watermark) {
		start := d.windows[0]
		for _, key := range d.members[start] {
			k := stateKey{key: key, start: start}
			if _, ok := d.expiry[k]; ok {
				delete(d.expiry, k)
				n++
			}
		}
		delete(d.members, start)
		d.windows = slices.Delete(d.windows, 0, 1)
	}
	d.fired += int64(n)
	return n
}

// AdvanceWatermark moves the input watermark to wm (never back), fires the
// event-time timers it passes and clears the windows it expires. It
// returns how many keys it cleared.
func (d *Dedup) AdvanceWatermark(wm int64) int {
	d.watermark = max(d.watermark, wm)
	n := 0
	if d.domain == EventTime {
		// A timer capped at its window's GC time goes with the window.
		n = d.fireQueue(d.watermark)
	}
	if d.window == 0 {
		if d.domain == ProcessingTime && fires(globalGC, d.watermark) {
			// The end of the global window clears every key.
			n += d.fireQueue(maxTimestamp)
		}
		return n
	}
	return n + d.collect()
}

// AdvanceProcessingTime moves processing time forward by delta ms and
// fires the processing-time timers it passes.
func (d *Dedup) AdvanceProcessingTime(delta int64) int {
	d.processingTime += delta
	if d.domain != ProcessingTime {
		return 0
	}
	return d.fireQueue(d.processingTime)
}

// fires reports whether a timer set for at has fired once its domain's
// time is now: strictly past it, in both domains, on the DirectRunner.
func fires(at, now int64) bool { return now > at }

// Len returns the number of seen (key, window) pairs: the state rows.
func (d *Dedup) Len() int { return len(d.expiry) }

// TimersFired returns how many expiry timers have fired (each clearing
// its key), counting a window's garbage collection as its keys' timers.
func (d *Dedup) TimersFired() int64 { return d.fired }

// Watermark returns the input watermark.
func (d *Dedup) Watermark() int64 { return d.watermark }

// ProcessingTime returns processing time since the start.
func (d *Dedup) ProcessingTime() int64 { return d.processingTime }

// DroppedLate returns how many elements were dropped for an expired window
// (the DirectRunner's DroppedDueToLateness).
func (d *Dedup) DroppedLate() int64 { return d.droppedLate }

// Keys returns the seen keys with their window and pending timer, sorted
// by key, then window.
func (d *Dedup) Keys() []KeyTimer {
	out := make([]KeyTimer, 0, len(d.expiry))
	for k, at := range d.expiry {
		out = append(out, KeyTimer{Key: k.key, Window: k.start, Expiry: at})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Window < out[j].Window
	})
	return out
}

// KeyTimer is a seen key, the start of its window (0 in the global
// window) and the time its expiry timer is set for.
type KeyTimer struct {
	Key    string
	Window int64
	Expiry int64
}
