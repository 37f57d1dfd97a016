package kstreams

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dedupsim/dedupsim/engines"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/kstreams"
)

// ParseTime parses a time base as a trace's or a scenario query's "time"
// names it: "stream", "record" or "wall-clock".
func ParseTime(s string) (kstreams.TimeBase, error) {
	switch s {
	case "stream":
		return kstreams.StreamTime, nil
	case "record":
		return kstreams.RecordTime, nil
	case "wall-clock":
		return kstreams.WallClock, nil
	}
	return 0, fmt.Errorf("%s, want \"stream\" (the task's stream time), \"record\" (the record's timestamp) or \"wall-clock\" (a key-value store purged by a wall-clock punctuation)", fileio.Quote(s))
}

// CheckPunctuate reports whether ms is a punctuation interval P that
// ProcessorContext.schedule takes.
func CheckPunctuate(ms int64) error {
	if ms < 1 {
		return fmt.Errorf("must be at least 1 ms (schedule refuses a punctuation interval below 1 ms), got %d ms", ms)
	}
	return nil
}

// CheckWindow reports whether ms is a window W the processor takes.
func CheckWindow(ms int64) error {
	if ms < 1 {
		return errors.New("must be at least 1 ms (the processor's maintain duration per event must be >= 1)")
	}
	return nil
}

// MaxPartitions bounds a query's partitions: one window store and stream
// time each, in memory.
const MaxPartitions = 1 << 16

// CheckPartitions reports whether n is a partition count a query takes.
func CheckPartitions(n int64) error {
	if n < 1 || n > MaxPartitions {
		return fmt.Errorf("must be from 1 to %d (the partitions of the topic keyed by the event id, one task each)", MaxPartitions)
	}
	return nil
}

// ScenarioQuery returns the window-store dedup (keep-first) with window
// W = window ms, the time base and the number of partitions (tasks, 0 or
// 1 for one): the query a scenario runs, as a trace without steps.
func ScenarioQuery(window int64, base kstreams.TimeBase, partitions int) *Trace {
	return &Trace{Mode: KeepFirst, Window: window, Time: base, Partitions: partitions}
}

// ScenarioWallClock returns the wall-clock fix on one task: a key-value
// store of first-seen wall-clock times, purged every punctuate ms of wall
// clock of the entries window ms old or older; the query a scenario runs
// with time wall-clock.
func ScenarioWallClock(window, punctuate int64) *Trace {
	return &Trace{Mode: KeepFirst, Window: window, Time: kstreams.WallClock, Punctuate: punctuate}
}

// ScenarioKeepLast returns keep-last on one task: toTable, or
// groupByKey().reduce when reduce is set; the query a scenario runs with
// mode keep-last. It has no window: the table keeps every key forever.
func ScenarioKeepLast(reduce bool) *Trace {
	return &Trace{Mode: KeepLast, Reduce: reduce}
}

// tasks returns the number of tasks t runs on, at least 1.
func (t *Trace) tasks() int { return max(t.Partitions, 1) }

// QueryText returns t's query object, the JSON `simulate explain` takes:
// {"engine": "kafka-streams", "window": "2m", "time": "stream"}, with
// "partitions" when there are more than one; keep-last's is
// {"engine": "kafka-streams", "mode": "keep-last", "form": "toTable"}.
func (t *Trace) QueryText() string {
	if t.Mode == KeepLast {
		form := "toTable"
		if t.Reduce {
			form = "reduce"
		}
		return fmt.Sprintf(`{"engine":%q,"mode":"keep-last","form":%q}`, Engine, form)
	}
	o := struct {
		Engine     string `json:"engine"`
		Window     string `json:"window"`
		Time       string `json:"time"`
		Punctuate  string `json:"punctuate,omitempty"`
		Partitions int    `json:"partitions,omitempty"`
	}{Engine, ms(t.Window), t.Time.String(), "", 0}
	if t.Time == kstreams.WallClock {
		o.Punctuate = ms(t.Punctuate)
	}
	if t.tasks() > 1 {
		o.Partitions = t.tasks()
	}
	b, _ := json.Marshal(o)
	return string(b)
}

// ScenarioOperator runs the window-store dedup of a scenario query on its
// tasks: the record key is the event id, its timestamp the row's event
// time. With one partition every row reaches the one task; with N, the
// stream is repartitioned by the event id: a row goes to the task of
// partition kstreams.PartitionForKey(key, N), the producer's default
// partitioner on the serialized key, and each task has its own window
// store and stream time.
//
// A keep-last query (table set) runs one task's table instead: every
// record upserts its key's row and is forwarded (Emitted), so a copy after
// the first is forwarded again, and the table keeps every key forever.
//
// A wall-clock query runs one task's WallClockDedup, the wall clock being
// the row's arrival (processing time): the task starts (its punctuation is
// scheduled) at the first row's arrival, and before each row, and at each
// State, the clock moves to that time, firing the punctuation if due.
type ScenarioOperator struct {
	tasks  []*kstreams.Dedup
	base   kstreams.TimeBase
	table  *kstreams.Table
	reduce bool
	// wall is the wall-clock query's processor, nil until its first row
	// (window and punctuate make it).
	wall              *kstreams.WallClockDedup
	window, punctuate int64
}

// NewScenarioOperator returns fresh tasks for the query t: the window
// store of keep-first, or the table of keep-last (one task: keep-last
// takes no partitions).
func (t *Trace) NewScenarioOperator() (*ScenarioOperator, error) {
	if t.Mode == KeepLast {
		if t.tasks() > 1 {
			return nil, errors.New("kafka-streams: partitions: only keep-first (the window-store pattern) takes partitions")
		}
		return &ScenarioOperator{table: kstreams.NewTable(t.Reduce), reduce: t.Reduce}, nil
	}
	if t.Time == kstreams.WallClock {
		if t.tasks() > 1 {
			return nil, errors.New("kafka-streams: partitions: a wall-clock query runs on one task")
		}
		if err := CheckPunctuate(t.Punctuate); err != nil {
			return nil, fmt.Errorf("kafka-streams: punctuate %v", err)
		}
		if err := CheckWindow(t.Window); err != nil {
			return nil, fmt.Errorf("kafka-streams: window %v", err)
		}
		return &ScenarioOperator{base: t.Time, window: t.Window, punctuate: t.Punctuate}, nil
	}
	if err := CheckPartitions(int64(t.tasks())); err != nil {
		return nil, fmt.Errorf("kafka-streams: partitions %v", err)
	}
	s := &ScenarioOperator{tasks: make([]*kstreams.Dedup, t.tasks()), base: t.Time}
	for i := range s.tasks {
		d, err := kstreams.NewDedup(t.Window, t.Time)
		if err != nil {
			return nil, err
		}
		s.tasks[i] = d
	}
	return s, nil
}

// Function names the processor: the Confluent tutorial's
// FindDistinctEvents in stream time, the integration test's
// DeduplicationTransformer in record time.
//
// Keep-last's are KTableSource (toTable) and KStreamReduce (reduce).
func (s *ScenarioOperator) Function() string {
	if s.table != nil {
		if s.reduce {
			return "KStreamReduce"
		}
		return "KTableSource"
	}
	switch s.base {
	case kstreams.RecordTime:
		return "DeduplicationTransformer"
	case kstreams.WallClock:
		return "WallClockPunctuatedDedup"
	}
	return "FindDistinctEvents"
}

// Partition returns the partition, and so the task, that a record of key
// (the serialized event id) goes to.
func (s *ScenarioOperator) Partition(key []byte) int {
	if len(s.tasks) <= 1 {
		return 0
	}
	return kstreams.PartitionForKey(key, len(s.tasks))
}

// Process pipes one record of key (the serialized event id) with
// timestamp eventMs through its partition's task and returns Emitted when
// it was forwarded, else DroppedDuplicate. Keep-last forwards every
// record: always Emitted. A wall-clock query needs the record's arrival:
// see ProcessAt.
func (s *ScenarioOperator) Process(key []byte, eventMs int64) engines.Outcome {
	return s.ProcessAt(key, eventMs, eventMs)
}

// ProcessAt is Process for a record arriving at wall-clock time procMs:
// a wall-clock query first moves its clock to procMs (firing the
// punctuation if due), then looks the key up; the other queries ignore
// procMs.
func (s *ScenarioOperator) ProcessAt(key []byte, procMs, eventMs int64) engines.Outcome {
	if s.base == kstreams.WallClock {
		s.advance(procMs)
		if s.wall.Process(key) {
			return engines.Emitted
		}
		return engines.DroppedDuplicate
	}
	if s.table != nil {
		s.table.Upsert(key, eventMs)
		return engines.Emitted
	}
	return s.tasks[s.Partition(key)].Process(string(key), eventMs)
}

// Observe moves the clocks of the task of key (the serialized event id)
// as a record with timestamp eventMs would, without processing it (a run
// split by key: another part's record). Keep-last's table has no clock.
func (s *ScenarioOperator) Observe(key []byte, eventMs int64) {
	if s.table == nil {
		s.tasks[s.Partition(key)].Observe(eventMs)
	}
}

// advance moves a wall-clock query's clock to procMs, starting its task
// there on the first call.
func (s *ScenarioOperator) advance(procMs int64) {
	if s.wall == nil {
		// The window and interval were checked by NewScenarioOperator.
		s.wall, _ = kstreams.NewWallClockDedup(s.window, s.punctuate, procMs)
		return
	}
	s.wall.Advance(procMs)
}

// StateAt is State at wall-clock time procMs: a wall-clock query first
// moves its clock there (firing the punctuation if due) and returns its
// store's entries, logical and physical alike (a delete leaves no row);
// the other queries ignore procMs.
func (s *ScenarioOperator) StateAt(procMs int64) (logical, physical int64) {
	if s.base == kstreams.WallClock {
		s.advance(procMs)
	}
	return s.State()
}

// Punctuations returns the punctuations a wall-clock query has fired (0
// for the others).
func (s *ScenarioOperator) Punctuations() int64 {
	if s.wall == nil {
		return 0
	}
	return s.wall.Punctuations()
}

// WallClock reports whether the operator is a wall-clock query's.
func (s *ScenarioOperator) WallClock() bool { return s.base == kstreams.WallClock }

// State returns the window stores' rows, summed over the tasks: logical
// (those all() returns) and physical (every row of a live segment).
// Wall-clock time does not enter: stream time moves only with records.
// Keep-last's table has one row per key ever seen, both logical and
// physical: nothing expires.
//
// A wall-clock query's store, as of its clock's last move (see StateAt).
func (s *ScenarioOperator) State() (logical, physical int64) {
	if s.base == kstreams.WallClock {
		if s.wall == nil {
			return 0, 0
		}
		n := int64(s.wall.Len())
		return n, n
	}
	if s.table != nil {
		n := int64(s.table.Len())
		return n, n
	}
	for _, d := range s.tasks {
		st := d.Store()
		logical += int64(st.Len())
		physical += int64(st.PhysicalLen())
	}
	return logical, physical
}

// TaskState returns the state of partition p's task alone: its stream
// time (-1 before its first record) and its store's logical and physical
// rows.
// Keep-first only.
func (s *ScenarioOperator) TaskState(p int) (streamTime, logical, physical int64) {
	d := s.tasks[p]
	return d.StreamTime(), int64(d.Store().Len()), int64(d.Store().PhysicalLen())
}

// KeepLast reports whether the operator is keep-last's table.
func (s *ScenarioOperator) KeepLast() bool { return s.table != nil }

// DroppedRecords returns dropped-records-total summed over the tasks:
// puts into an expired segment (0 for keep-last, which has no window
// store).
func (s *ScenarioOperator) DroppedRecords() int64 {
	var n int64
	for _, d := range s.tasks {
		n += d.Store().DroppedRecords()
	}
	return n
}
