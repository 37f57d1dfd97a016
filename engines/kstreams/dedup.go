package kstreams

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
)

// TimeBase says which time the window-store dedup processor looks up and
// stores a record at.
type TimeBase uint8

const (
	// StreamTime is the Confluent tutorial's processor (FindDistinctEvents):
	// context.currentStreamTimeMs(), the task's stream time including the
	// record being processed.
	StreamTime TimeBase = iota
	// RecordTime is the older example (EventDeduplicationLambdaIntegrationTest):
	// context.timestamp(), the record's own timestamp.
	RecordTime
	// WallClock is the wall-clock fix (WallClockDedup): a key-value store
	// of first-seen wall-clock times, purged by a wall-clock punctuation.
	// The window-store processor (Dedup) does not take it.
	WallClock
)

// String returns the name the trace format uses.
func (b TimeBase) String() string {
	switch b {
	case RecordTime:
		return "record"
	case WallClock:
		return "wall-clock"
	}
	return "stream"
}

// Dedup is the canonical window-store dedup processor on one task: a
// window store with retention W and window size W (retainDuplicates
// false, the default segment interval), and for each record, at time t
// (stream time or the record's timestamp):
//
//	dup := store.fetch(id, t - W/2, t + (W - W/2)).hasNext()
//	store.put(id, t, t)          // also for a duplicate: a refresh
//	forward the record unless dup (the tutorial forwards null, filtered)
//
// Worked example (W = 2 min, stream time; times in seconds): a@0 is new,
// stored at 0. b@100 moves stream time to 100. a@100 looks in [40, 160]:
// the row a@0 is outside, so the copy is emitted again although it came
// 100 s after the first, well within the "2-minute window": the
// effective horizon is W/2 of stream time since the last copy.
type Dedup struct {
	window     int64
	left       int64
	right      int64
	base       TimeBase
	streamTime int64
	store      *WindowStore
}

// NewDedup returns the processor with window (retention and window size)
// W ms, W >= 1 as the processor requires.
func NewDedup(window int64, base TimeBase) (*Dedup, error) {
	if window < 1 {
		return nil, fmt.Errorf("kafka-streams dedup: window %d ms: maintain duration per event must be >= 1", window)
	}
	if base == WallClock {
		return nil, fmt.Errorf("kafka-streams dedup: the window-store processor looks up at stream or record time; wall-clock time is WallClockDedup's")
	}
	store, err := NewWindowStore(window, DefaultSegmentInterval(window))
	if err != nil {
		return nil, err
	}
	left := window / 2
	return &Dedup{window: window, left: left, right: window - left, base: base, streamTime: noTimestamp, store: store}, nil
}

// Process runs one record of key id with timestamp ts (>= 0) through the
// task: stream time first, then the lookup and the put.
func (d *Dedup) Process(id string, ts int64) engines.Outcome {
	d.streamTime = max(d.streamTime, ts)
	t := ts
	if d.base == StreamTime {
		t = d.streamTime
	}
	dup := d.store.Fetch(id, t-d.left, t+d.right)
	d.store.Put(id, t)
	if dup {
		return engines.DroppedDuplicate
	}
	return engines.Emitted
}

// Observe moves the task's clocks as a record with timestamp ts (>= 0)
// would, without looking it up or storing it: stream time, then the
// store's observed stream time at the time the record would be put at,
// which expires the segments that put would expire. A run split by key
// (sim/shard) feeds it the records of the keys another part decides, so
// that this part's stream time is the whole task's.
func (d *Dedup) Observe(ts int64) {
	d.streamTime = max(d.streamTime, ts)
	t := ts
	if d.base == StreamTime {
		t = d.streamTime
	}
	d.store.Advance(t)
}

// StreamTime returns the task's stream time, -1 before the first record.
func (d *Dedup) StreamTime() int64 { return d.streamTime }

// Store returns the processor's window store, to read its state.
func (d *Dedup) Store() *WindowStore { return d.store }
