package fitlog

import (
	"fmt"

	"github.com/dedupsim/dedupsim/generators/eventlog"
	"github.com/dedupsim/dedupsim/generators/fit"
)

// LogSpec names a log and its columns for a fit.
type LogSpec struct {
	// Path is a file, a folder or a glob (generators/eventlog).
	Path string
	// ID names the id column, or several for a composite id.
	ID []string
	// EventTime and ArrivalTime name the time columns; TimeUnit says how
	// they are written ("" detects it).
	EventTime, ArrivalTime, TimeUnit string
	// Customer names the customer column; "" when there is none.
	Customer string
}

// Opener returns a fit.Opener reading the log of s with eventlog's reader
// (each call opens it again from its first row), or the first problem of
// s.
func Opener(s LogSpec) (fit.Opener, error) {
	open, _, err := OpenerWithUnits(s)
	return open, err
}

// OpenerWithUnits is Opener, and a function that says, once the log was
// read, how its time columns' units were detected ("" when they were
// given, or before any row).
func OpenerWithUnits(s LogSpec) (fit.Opener, func() string, error) {
	var units string
	open, err := opener(s, &units)
	return open, func() string { return units }, err
}

func opener(s LogSpec, units *string) (fit.Opener, error) {
	tu, err := eventlog.ParseTimeUnit(s.TimeUnit)
	if err != nil {
		return nil, fmt.Errorf("time unit: %w", err)
	}
	spec := eventlog.Spec{Path: s.Path, ID: s.ID, EventTime: s.EventTime, ArrivalTime: s.ArrivalTime, TimeUnit: tu}
	if s.Customer != "" {
		spec.Extra = []string{s.Customer}
	}
	if err := spec.Check(); err != nil {
		return nil, err
	}
	return func() (fit.Source, error) {
		r, err := eventlog.Open(spec)
		if err != nil {
			return nil, err
		}
		return &logSource{r: r, customer: s.Customer != "", spec: spec, units: units}, nil
	}, nil
}

// logSource adapts an eventlog.Reader to fit.Source.
type logSource struct {
	r        *eventlog.Reader
	customer bool
	spec     eventlog.Spec
	units    *string
	seen     bool
}

func (s *logSource) Next(rec *fit.Record) (bool, error) {
	if !s.r.Next() {
		return false, s.r.Err()
	}
	if !s.seen {
		s.seen = true
		if et, at, detected := s.r.Units(); detected {
			*s.units = fmt.Sprintf("times detected from the first row: %s as %s, %s as %s (--time-unit sets them)", s.spec.EventTime, unitText(et), s.spec.ArrivalTime, unitText(at))
		}
	}
	x := s.r.Record()
	rec.ID, rec.EventTime, rec.Arrival = x.ID, x.EventTime, x.Arrival
	rec.Customer = nil
	if s.customer {
		rec.Customer = x.Extra[0]
	}
	return true, nil
}

func (s *logSource) Close() error { return s.r.Close() }

func unitText(u eventlog.TimeUnit) string {
	switch u {
	case eventlog.UnitRFC3339:
		return "RFC 3339 text"
	case eventlog.UnitSeconds:
		return "epoch seconds"
	case eventlog.UnitMillis:
		return "epoch milliseconds"
	case eventlog.UnitMicros:
		return "epoch microseconds"
	}
	return string(u)
}
