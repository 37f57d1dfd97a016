package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/generators/eventlog"
	"go.yaml.in/yaml/v3"
)

// hasEvents reports whether the scenario's root mapping has a
// workload.events key: then duration is optional (the log's arrivals
// give it).
func hasEvents(root *yaml.Node) bool {
	w := member(root, "workload")
	return w != nil && member(w, "events") != nil
}

// member returns the value of key k in the mapping n, or nil.
func member(n *yaml.Node, k string) *yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if resolve(n.Content[i]).Value == k {
			return resolve(n.Content[i+1])
		}
	}
	return nil
}

// readEvents resolves a workload read from an event log
// (generators.Events): it reads the log once (generators.ScanLog, which
// checks every row), then takes from it the id form (workload.ids), the
// start of the trigger grid (workload.events.start, or the first arrival
// rounded down to a whole trigger since the epoch) and, unless given,
// the duration (from the start to the last arrival). A problem of the
// log is one line under workload.events.file naming the log's file, row
// and column.
func (s *Scenario) readEvents(p *problems, dir string) {
	e := s.Workload.Events
	if e == nil || e.Index != nil {
		return
	}
	_, durationGiven := p.lines["duration"]
	if !durationGiven {
		// Until the log gives it: a problem of the log is then its one
		// line, not a second one about the duration.
		s.Duration = interval.Duration(time.Second)
	}
	if _, given := p.lines["start"]; given {
		p.add("start", "must be left out with workload.events: the trigger grid starts at workload.events.start, or at the log's first arrival rounded down to a whole trigger")
	}
	if _, given := p.lines["workload.ids"]; given {
		p.add("workload.ids", "must be left out with workload.events: the log's ids give their form")
	}
	if e.File == "" || len(e.ID) == 0 || e.EventTime == "" || e.ArrivalTime == "" {
		return // reported as missing keys
	}
	g := s.Generator()
	for _, pr := range g.Check() {
		if strings.HasPrefix(pr.Path, "workload.") {
			return // collect reports them
		}
	}
	e.Resolve(dir)
	x, err := generators.ScanLog(e)
	if err != nil {
		p.add("workload.events.file", "%s", fileio.Clean(err.Error()))
		return
	}
	e.Index = x
	if x.Detected {
		e.TimeUnit = "auto"
	}
	s.Workload.IDs = x.IDs()
	trig := s.Trigger.Micros()
	switch {
	case e.Start != nil:
		s.Start = e.Start.UTC()
	case trig > 0:
		first := x.FirstArrival
		start := first / trig * trig
		if first < 0 && first%trig != 0 {
			start -= trig
		}
		s.Start = time.UnixMicro(start).UTC()
	default:
		s.Start = time.UnixMicro(x.FirstArrival).UTC()
	}
	if !durationGiven {
		d := x.LastArrival - s.Start.UnixMicro()
		s.Duration = interval.Duration(max(d, 1) * 1000)
	}
	if x.FirstArrival < s.Start.UnixMicro() {
		p.add("workload.events.start", "must be at or before the log's first arrival (%s), got %s", time.UnixMicro(x.FirstArrival).UTC().Format(time.RFC3339Nano), s.Start.Format(time.RFC3339Nano))
	}
}

// checkEventColumns refuses a query that names a schema column the log
// does not hold (customer_id, attempt, payload, ingest_time): its rows
// would carry 0 there, and the query would key on nothing.
func (s *Scenario) checkEventColumns(p *problems) {
	e := s.Workload.Events
	if e == nil || e.Index == nil {
		return
	}
	for i, q := range s.Queries {
		text := q.Query
		for _, v := range q.Options {
			text += " " + v
		}
		for _, c := range []int{generators.ColCustomerID, generators.ColIngestTime, generators.ColAttempt, generators.ColPayload} {
			name := generators.Columns()[c].Name
			if e.Index.Has[c] || name == e.ArrivalTime || !strings.Contains(strings.ToLower(text), name) {
				continue
			}
			p.add(index("queries", i)+".query", "names %s, a column the log %s does not hold: add it to the log or key on columns it has", name, fileio.Show(e.File))
		}
	}
}

// eventWarnings says what the loader detected in the log.
func (s *Scenario) eventWarnings() []string {
	e := s.Workload.Events
	if e == nil || e.Index == nil || !e.Index.Detected {
		return nil
	}
	x := e.Index
	if x.EventUnit == eventlog.UnitRFC3339 && x.ArrivalUnit == eventlog.UnitRFC3339 {
		return nil // text needs no unit
	}
	return []string{fmt.Sprintf("workload.events.timeUnit: detected from the first row: %s as %s, %s as %s (set timeUnit to say so)",
		e.EventTime, unitWords(x.EventUnit), e.ArrivalTime, unitWords(x.ArrivalUnit))}
}

func unitWords(u eventlog.TimeUnit) string {
	switch u {
	case eventlog.UnitSeconds:
		return "epoch seconds"
	case eventlog.UnitMillis:
		return "epoch milliseconds"
	case eventlog.UnitMicros:
		return "epoch microseconds"
	}
	return "RFC 3339 text"
}
