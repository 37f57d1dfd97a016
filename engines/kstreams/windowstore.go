// Package kstreams models the state that Kafka Streams deduplication
// patterns keep: the persistent (RocksDB) segmented window store of the
// canonical window-store dedup processor, that processor itself, and the
// KTable upsert of keep-last (toTable).
//
// The rules follow apache/kafka 4.4's source (docs/kafka-streams.md names
// the files): stream time is the largest record timestamp a task has seen;
// a window store sees only entries with ts >= observedStreamTime -
// retention + 1, where observedStreamTime is the largest timestamp ever put
// into the store; the store is cut into segments of segmentInterval ms
// (segment id = ts / segmentInterval) and, on every put, drops the segments
// older than segmentId(observedStreamTime - retention), so rows that are
// logically gone stay physically present for up to a segment; a put into
// such a segment is dropped and counted on the task's dropped-records
// sensor. Times are milliseconds, as in Kafka.
package kstreams

import (
	"fmt"
	"sort"
)

// MinSegmentInterval is the floor of the default segment interval of
// Stores.persistentWindowStore: max(retention/2, 60 s).
const MinSegmentInterval int64 = 60_000

// DefaultSegmentInterval returns the segment interval that
// Stores.persistentWindowStore gives a store of the given retention.
func DefaultSegmentInterval(retention int64) int64 {
	return max(retention/2, MinSegmentInterval)
}

// noTimestamp is Kafka's ConsumerRecord.NO_TIMESTAMP: the stream time of a
// task or store that has seen nothing.
const noTimestamp int64 = -1

// Row is one (key, window start) entry of a window store.
type Row struct {
	Key       string
	Timestamp int64
}

// WindowStore is a persistent window store with retainDuplicates=false:
// one row per (key, window start), a later put of the same pair
// overwriting the earlier. Its zero value is not usable; see
// NewWindowStore.
type WindowStore struct {
	retention       int64
	segmentInterval int64
	// observed is the store's observedStreamTime.
	observed int64
	// segments maps a live segment id to its rows, keyed by key.
	segments map[int64]map[string][]int64
	// segRows counts the rows of each live segment; physical their sum.
	segRows  map[int64]int
	physical int
	// dropped counts puts into expired segments.
	dropped int64
}

// NewWindowStore returns an empty store with the given retention and
// segment interval, both in ms and positive.
func NewWindowStore(retention, segmentInterval int64) (*WindowStore, error) {
	if retention <= 0 || segmentInterval <= 0 {
		return nil, fmt.Errorf("window store: retention %d ms and segment interval %d ms must be positive", retention, segmentInterval)
	}
	return &WindowStore{
		retention:       retention,
		segmentInterval: segmentInterval,
		observed:        noTimestamp,
		segments:        map[int64]map[string][]int64{},
		segRows:         map[int64]int{},
	}, nil
}

// segmentID is AbstractSegments.segmentId: Java's truncating division,
// which Go's shares.
func (s *WindowStore) segmentID(ts int64) int64 { return ts / s.segmentInterval }

// minVisible is the smallest window start a fetch or all() can return.
func (s *WindowStore) minVisible() int64 { return s.observed - s.retention + 1 }

// Fetch reports whether key has a visible row with a window start in
// [from, to] (WindowStore.fetch(key, from, to).hasNext()): from is first
// raised to observedStreamTime - retention + 1.
func (s *WindowStore) Fetch(key string, from, to int64) bool {
	from = max(from, s.minVisible())
	if to < from {
		return false
	}
	for id := s.segmentID(from); id <= s.segmentID(to); id++ {
		seg := s.segments[id]
		if seg == nil {
			continue
		}
		for _, ts := range seg[key] {
			if ts >= from && ts <= to {
				return true
			}
		}
	}
	return false
}

// Put writes the row (key, ts), as WindowStore.put(key, value, ts) does:
// the store's observed stream time moves to ts if larger; a put whose
// segment is older than segmentId(observed - retention) is dropped and
// counted (it reports false); every segment older than that is deleted,
// whether or not the put was kept.
func (s *WindowStore) Put(key string, ts int64) bool {
	s.observed = max(s.observed, ts)
	id := s.segmentID(ts)
	minLive := s.segmentID(s.observed - s.retention)
	kept := id >= minLive
	if kept {
		seg := s.segments[id]
		if seg == nil {
			seg = map[string][]int64{}
			s.segments[id] = seg
		}
		row := seg[key]
		i := sort.Search(len(row), func(i int) bool { return row[i] >= ts })
		if i == len(row) || row[i] != ts {
			row = append(row, 0)
			copy(row[i+1:], row[i:])
			row[i] = ts
			seg[key] = row
			s.segRows[id]++
			s.physical++
		}
	} else {
		s.dropped++
	}
	for sid := range s.segments {
		if sid < minLive {
			s.physical -= s.segRows[sid]
			delete(s.segments, sid)
			delete(s.segRows, sid)
		}
	}
	return kept
}

// Advance moves the store's observed stream time to ts if larger and
// deletes the segments a put at ts would delete, as Put does, without
// writing a row or counting a drop.
func (s *WindowStore) Advance(ts int64) {
	s.observed = max(s.observed, ts)
	minLive := s.segmentID(s.observed - s.retention)
	for sid := range s.segments {
		if sid < minLive {
			s.physical -= s.segRows[sid]
			delete(s.segments, sid)
			delete(s.segRows, sid)
		}
	}
}

// ObservedStreamTime returns the largest timestamp put into the store, or
// -1 before the first put.
func (s *WindowStore) ObservedStreamTime() int64 { return s.observed }

// DroppedRecords returns how many puts were dropped into expired segments.
func (s *WindowStore) DroppedRecords() int64 { return s.dropped }

// PhysicalLen returns the number of rows held in live segments, visible
// or not, without listing them.
func (s *WindowStore) PhysicalLen() int { return s.physical }

// Len returns the number of visible rows (those Rows lists). Only the
// segments that straddle the visibility bound are scanned.
func (s *WindowStore) Len() int {
	from := s.minVisible()
	n := 0
	for id, seg := range s.segments {
		if (id+1)*s.segmentInterval-1 < from {
			continue
		}
		if id*s.segmentInterval >= from {
			n += s.segRows[id]
			continue
		}
		for _, row := range seg {
			for _, ts := range row {
				if ts >= from {
					n++
				}
			}
		}
	}
	return n
}

// Rows returns the rows that all() returns (the logical state), sorted by
// key, then window start.
func (s *WindowStore) Rows() []Row { return s.rows(s.minVisible()) }

// PhysicalRows returns every row still held in a live segment, logically
// visible or not, sorted like Rows.
func (s *WindowStore) PhysicalRows() []Row { return s.rows(noTimestamp - 1<<62) }

func (s *WindowStore) rows(from int64) []Row {
	var out []Row
	for _, seg := range s.segments {
		for key, row := range seg {
			for _, ts := range row {
				if ts >= from {
					out = append(out, Row{Key: key, Timestamp: ts})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Timestamp < out[j].Timestamp
	})
	return out
}

// Segments returns the start times (id * segmentInterval, the suffix of
// the segment's directory name) of the live segments, ascending.
func (s *WindowStore) Segments() []int64 {
	out := make([]int64, 0, len(s.segments))
	for id := range s.segments {
		out = append(out, id*s.segmentInterval)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
