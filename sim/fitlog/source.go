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
		return &logSource{r: r, customer: s.Customer != ""}, nil
	}, nil
}

// logSource adapts an eventlog.Reader to fit.Source.
type logSource struct {
	r        *eventlog.Reader
	customer bool
}

func (s *logSource) Next(rec *fit.Record) (bool, error) {
	if !s.r.Next() {
		return false, s.r.Err()
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
