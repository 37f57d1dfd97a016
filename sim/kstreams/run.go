package kstreams

import (
	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/kstreams"
)

// Line is what one step did: the records forwarded to the output topic and
// the state after the step. Keep-first lines carry the window store
// (Store: the rows all() returns; PhysicalRows: every row still in a live
// segment; Segments: the live segments' start times) and
// DroppedRecordsTotal; keep-last lines carry the table.
type Line struct {
	Step       int      `json:"step"`
	StreamTime int64    `json:"streamTime"`
	Output     []Record `json:"output"`

	Store               *[]StoreRow `json:"store,omitempty"`
	PhysicalRows        *int        `json:"physicalRows,omitempty"`
	Segments            *[]int64    `json:"segments,omitempty"`
	DroppedRecordsTotal *int64      `json:"droppedRecordsTotal,omitempty"`

	// Punctuations counts the wall-clock punctuations fired so far (a
	// wall-clock query's lines; its store rows carry each key's
	// first-seen wall-clock time).
	Punctuations *int64 `json:"punctuations,omitempty"`

	Table                     *[]Record `json:"table,omitempty"`
	IdempotentUpdateSkipTotal *int64    `json:"idempotentUpdateSkipTotal,omitempty"`
}

// StoreRow is one window-store row: the event id and its window start.
type StoreRow struct {
	Key       string `json:"key"`
	Timestamp int64  `json:"timestamp"`
}

// Run runs every step of t and returns one line per step.
func Run(t *Trace) ([]Line, error) {
	if t.Mode == KeepLast {
		return runTable(t), nil
	}
	if t.Time == kstreams.WallClock {
		return runWallClock(t)
	}
	d, err := kstreams.NewDedup(t.Window, t.Time)
	if err != nil {
		return nil, err
	}
	lines := make([]Line, 0, len(t.Steps))
	for i, s := range t.Steps {
		l := Line{Step: i, Output: []Record{}}
		for _, r := range s.Records {
			if d.Process(r.Key, r.Timestamp) == engines.Emitted {
				l.Output = append(l.Output, r)
			}
		}
		st := d.Store()
		l.StreamTime = d.StreamTime()
		rows := []StoreRow{}
		for _, r := range st.Rows() {
			rows = append(rows, StoreRow{Key: r.Key, Timestamp: r.Timestamp})
		}
		l.Store = &rows
		phys := st.PhysicalLen()
		l.PhysicalRows = &phys
		segs := st.Segments()
		l.Segments = &segs
		dropped := st.DroppedRecords()
		l.DroppedRecordsTotal = &dropped
		lines = append(lines, l)
	}
	return lines, nil
}

func runTable(t *Trace) []Line {
	tb := kstreams.NewTable(t.Reduce)
	streamTime := int64(-1)
	lines := make([]Line, 0, len(t.Steps))
	for i, s := range t.Steps {
		l := Line{Step: i, Output: []Record{}}
		for _, r := range s.Records {
			streamTime = max(streamTime, r.Timestamp)
			f := tb.Process(r.Key, r.Value, r.Timestamp)
			l.Output = append(l.Output, Record{Key: f.Key, Value: f.Value, Timestamp: f.Timestamp})
		}
		l.StreamTime = streamTime
		table := []Record{}
		for _, r := range tb.Rows() {
			table = append(table, Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp})
		}
		l.Table = &table
		lines = append(lines, l)
	}
	return lines
}

// runWallClock runs a wall-clock query's trace as TopologyTestDriver
// does: the task starts at wall-clock time 0, an advanceWallClock step
// moves the clock (firing the punctuation if due), records are processed
// at the clock's current time.
func runWallClock(t *Trace) ([]Line, error) {
	d, err := kstreams.NewWallClockDedup(t.Window, t.Punctuate, 0)
	if err != nil {
		return nil, err
	}
	streamTime := int64(-1)
	lines := make([]Line, 0, len(t.Steps))
	for i, s := range t.Steps {
		l := Line{Step: i, Output: []Record{}}
		if s.Advance {
			d.Advance(d.WallClock() + s.WallClock)
		}
		for _, r := range s.Records {
			streamTime = max(streamTime, r.Timestamp)
			if d.Process([]byte(r.Key)) {
				l.Output = append(l.Output, r)
			}
		}
		l.StreamTime = streamTime
		rows := []StoreRow{}
		for _, r := range d.Rows() {
			rows = append(rows, StoreRow{Key: r.Key, Timestamp: r.Timestamp})
		}
		l.Store = &rows
		n := d.Punctuations()
		l.Punctuations = &n
		lines = append(lines, l)
	}
	return lines, nil
}
