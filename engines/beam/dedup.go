// Package beam models Apache Beam's Deduplicate transform (Java
// Deduplicate.keyedValues, its stateful DeduplicateFn) as the Java
// DirectRunner runs it, in the global window.
//
// Per key, DeduplicateFn keeps a ValueState "seen" and one expiry timer in
// the chosen time domain. The first element of a key (seen unset) sets the
// timer with offset(d).setRelative(), marks the key seen and is output;
// every later element of the key is dropped while seen is set and does not
// move the timer. When the timer fires it clears seen, so the next copy is
// output again: in the global window nothing is ever late.
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

// Dedup is DeduplicateFn over every key of the global window.
type Dedup struct {
	domain   TimeDomain
	duration int64
	// expiry maps a seen key to the time its timer fires at.
	expiry         map[string]int64
	watermark      int64
	processingTime int64
}

// NewDedup returns the transform with the given domain and duration d
// (ms, positive). Processing time starts at 0.
func NewDedup(domain TimeDomain, duration int64) (*Dedup, error) {
	if duration <= 0 {
		return nil, fmt.Errorf("beam deduplicate: duration %d ms must be positive", duration)
	}
	return &Dedup{domain: domain, duration: duration, expiry: map[string]int64{}, watermark: MinTimestamp}, nil
}

// Process runs one element of key. Its event timestamp plays no part: in
// event time the timer follows the input watermark (see the package
// comment).
//
// Worked example (event time, d = 10 s): the watermark is at 5 s when
// x@1s arrives: output, timer at 15 s. The watermark moves to 12 s, x@1s
// again: dropped (with the timestamp's rule, 1 + 10 = 11 s, it would have
// been output). The watermark moves to 15 s: nothing fires; to 15.001 s:
// x is cleared.
func (d *Dedup) Process(key string) engines.Outcome {
	if _, seen := d.expiry[key]; seen {
		return engines.DroppedDuplicate
	}
	now := d.processingTime
	if d.domain == EventTime {
		now = d.watermark
	}
	d.expiry[key] = now + d.duration
	return engines.Emitted
}

// AdvanceWatermark moves the input watermark to wm (never back) and fires
// the event-time timers it passes. It returns how many keys it cleared.
func (d *Dedup) AdvanceWatermark(wm int64) int {
	d.watermark = max(d.watermark, wm)
	if d.domain != EventTime {
		return 0
	}
	return d.fire(d.watermark)
}

// AdvanceProcessingTime moves processing time forward by delta ms and
// fires the processing-time timers it reaches.
func (d *Dedup) AdvanceProcessingTime(delta int64) int {
	d.processingTime += delta
	if d.domain != ProcessingTime {
		return 0
	}
	return d.fire(d.processingTime)
}

// fire clears every key whose timer fires at time now.
func (d *Dedup) fire(now int64) int {
	n := 0
	for key, at := range d.expiry {
		if fires(at, now) {
			delete(d.expiry, key)
			n++
		}
	}
	return n
}

// fires reports whether a timer set for at has fired once the domain's
// time is now: strictly past it, in both domains, on the DirectRunner.
func fires(at, now int64) bool { return now > at }

// Watermark returns the input watermark.
func (d *Dedup) Watermark() int64 { return d.watermark }

// ProcessingTime returns processing time since the start.
func (d *Dedup) ProcessingTime() int64 { return d.processingTime }

// Keys returns the seen keys with their pending timer, sorted by key.
func (d *Dedup) Keys() []KeyTimer {
	out := make([]KeyTimer, 0, len(d.expiry))
	for k, at := range d.expiry {
		out = append(out, KeyTimer{Key: k, Expiry: at})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// KeyTimer is a seen key and the time its expiry timer is set for.
type KeyTimer struct {
	Key    string
	Expiry int64
}
