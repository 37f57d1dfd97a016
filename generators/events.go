package generators

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/eventlog"
	"github.com/dedupsim/dedupsim/generators/randvar"
)

// Events is a workload read from an event log instead of generated: the
// user's own traffic (workload.events, docs/scenario.md). The log gives
// every row and its ground truth (LogSource).
type Events struct {
	// File is the log: a file, a folder or a glob, relative to the
	// scenario file.
	File string `json:"file" yaml:"file" need:"the log: a file, a folder or a glob, relative to the scenario file"`
	// ID names the id column, or several (a composite key).
	ID ColumnList `json:"id" yaml:"id" need:"the id column, or a list of them" want:"a column name or a list of column names"`
	// EventTime and ArrivalTime name the time columns.
	EventTime   string `json:"eventTime" yaml:"eventTime" need:"the event-time column"`
	ArrivalTime string `json:"arrivalTime" yaml:"arrivalTime" need:"the arrival-time column"`
	// TimeUnit is how the time columns are written: rfc3339, s, ms, us,
	// or auto (detected from the first row; the resolved scenario says
	// what was detected).
	TimeUnit string `json:"timeUnit" yaml:"timeUnit" want:"rfc3339, s, ms, us or auto"`
	// Format forces the files' format: csv, jsonl or parquet; "" detects
	// it from each file's first bytes.
	Format string `json:"format,omitempty" yaml:"format" want:"csv, jsonl or parquet"`
	// Sort asks the reader to sort the rows by arrival (rows with equal
	// arrivals keep their order in the files), in bounded memory
	// (SortBudget), spilling sorted runs to temporary files.
	Sort bool `json:"sort,omitempty" yaml:"sort" want:"true or false"`
	// BadClockTolerance is how far ahead of its arrival a row's event
	// time may be before the row counts as a bad clock [1m].
	BadClockTolerance interval.Duration `json:"badClockTolerance" yaml:"badClockTolerance"`
	// Start is the origin of the trigger grid; unset, the first arrival
	// rounded down to a whole trigger since the epoch.
	Start *time.Time `json:"start,omitempty" yaml:"start" want:"an RFC 3339 time such as 2026-01-01T00:00:00Z"`

	// Path is File resolved against the scenario's folder.
	Path string `json:"-" yaml:"-"`
	// Index is the log's first pass (ScanLog), set by the loader.
	Index *LogIndex `json:"-" yaml:"-"`
	// SortBudget is the memory, in bytes, the first pass (and sort:
	// true) may hold ids or rows in before spilling to disk; 0 is
	// eventlog.DefaultSortBudget (64 MiB).
	SortBudget int `json:"-" yaml:"-"`
}

// ColumnList is one column name or a list of them.
type ColumnList []string

// SetDefaults sets the defaults of an events block.
func (e *Events) SetDefaults() { e.BadClockTolerance = interval.Duration(time.Minute) }

// Spec returns the reader's spec of the log: its columns, and the
// schema's columns (customer_id, ingest_time, attempt, payload) as
// optional ones.
func (e *Events) Spec() eventlog.Spec {
	path := e.Path
	if path == "" {
		path = e.File
	}
	u, _ := eventlog.ParseTimeUnit(e.TimeUnit)
	var opt []string
	for _, c := range logColumns {
		if !e.uses(c.name) {
			opt = append(opt, c.name)
		}
	}
	return eventlog.Spec{Path: path, ID: e.ID, EventTime: e.EventTime, ArrivalTime: e.ArrivalTime, TimeUnit: u,
		Format: eventlog.Format(e.Format), Optional: opt, Sort: e.Sort, SortBudget: e.SortBudget}
}

// uses reports whether the log's own columns (id, times) include name.
func (e *Events) uses(name string) bool {
	if name == e.EventTime || name == e.ArrivalTime {
		return true
	}
	for _, c := range e.ID {
		if c == name {
			return true
		}
	}
	return false
}

// logColumns are the schema's columns a log may carry under their own
// names: integers, and ingest_time a time.
var logColumns = []struct {
	name string
	col  int
}{{"customer_id", ColCustomerID}, {"ingest_time", ColIngestTime}, {"attempt", ColAttempt}, {"payload", ColPayload}}

// Resolve anchors the log's path at dir (the scenario's folder).
func (e *Events) Resolve(dir string) {
	e.Path = e.File
	if e.File != "" && !filepath.IsAbs(e.File) {
		e.Path = filepath.Join(dir, e.File)
	}
}

// checkEvents reports the problems of a workload read from a log: its
// keys, and the generated traffic's keys that the log replaces.
func (ps *problems) checkEvents(c *Config) {
	w := &c.Workload
	e := w.Events
	const path = "workload.events"
	if _, err := eventlog.ParseTimeUnit(e.TimeUnit); err != nil {
		ps.add(path+".timeUnit", "must be one of rfc3339, s, ms, us, auto, got %q", e.TimeUnit)
	}
	switch eventlog.Format(e.Format) {
	case eventlog.FormatAuto, eventlog.FormatCSV, eventlog.FormatJSONL, eventlog.FormatParquet:
	default:
		ps.add(path+".format", "must be one of csv, jsonl, parquet (or left out to detect it), got %q", e.Format)
	}
	if e.BadClockTolerance < 0 {
		ps.add(path+".badClockTolerance", "must be at least 0, got %s", e.BadClockTolerance)
	}
	for i, c := range e.ID {
		if c == "" {
			ps.add(fmt.Sprintf("%s.id[%d]", path, i), "must be a column name, got nothing")
		}
	}
	if e.ArrivalTime != "" && e.ArrivalTime == e.EventTime {
		ps.add(path+".arrivalTime", "must differ from eventTime (%s): the log needs both times", e.EventTime)
	}
	// The log replaces the generated traffic.
	refuse := func(key string) {
		ps.add("workload."+key, "must be left out with workload.events: the log gives the traffic")
	}
	if w.Rate != nil {
		refuse("rate")
	}
	if w.Profile != nil {
		refuse("profile")
	}
	if d := w.ArrivalDelay; !(d.Kind == "" || d.Kind == randvar.KindConstant && d.Value == 0) {
		refuse("arrivalDelay")
	}
	if w.Retries.Probability > 0 {
		refuse("retries")
	}
	if w.FutureTimestamps.Probability > 0 {
		refuse("futureTimestamps")
	}
	if w.Heartbeat != 0 {
		refuse("heartbeat")
	}
	for i, b := range c.BadClockRows {
		key := b.Key
		if key == "" {
			key = fmt.Sprintf("badClockRows[%d]", i)
		}
		ps.add(key+".kind", "must not be bad-clock with workload.events: the log's own rows are the traffic (its bad clocks are counted from it)")
	}
}
