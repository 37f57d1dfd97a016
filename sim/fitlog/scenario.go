package fitlog

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/generators/fit"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// FitScenario returns sc with its event-log workload (workload.events)
// replaced by a workload fitted to the log: the fitted rate profile,
// delays, retries and bad clocks (as futureTimestamps, or as bad-clock
// faults beside sc's other faults), with sc's start, duration and seed
// replaced by the fit's and everything else (queries, trigger, store,
// spark block) kept. dir receives the fitted scenario file and its
// empirical value files, which the caller removes when done. This is how
// traffic measured in a log is scaled to another rate: the fitted traffic
// is scaled, never the log's own rows.
func FitScenario(sc *scenario.Scenario, dir string) (*scenario.Scenario, *Fitted, error) {
	e := sc.Workload.Events
	if e == nil {
		return nil, nil, fmt.Errorf("%s: workload: not an event log", sc.File)
	}
	open, err := Opener(LogSpec{Path: e.Path, ID: e.ID, EventTime: e.EventTime, ArrivalTime: e.ArrivalTime, TimeUnit: e.TimeUnit})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: workload.events: %w", sc.File, err)
	}
	tol := e.BadClockTolerance.Std()
	if tol <= 0 {
		tol = time.Minute
	}
	name := sc.Name + "-fitted"
	f, err := Fit(open, Options{Fit: fit.Options{Trigger: sc.Trigger.Std(), Tolerance: tol, Seed: max(sc.Seed, 1)}, Name: name, Log: e.File,
		Queries: []string{`dropDuplicates(["event_id"])`}})
	if err != nil {
		return nil, nil, err
	}
	for n, data := range f.Scenario.Files {
		if err := fileio.WriteFile(filepath.Join(dir, n), data); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	path := filepath.Join(dir, f.File)
	if err := fileio.WriteFile(path, f.Scenario.YAML); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.File, err)
	}
	fitted, err := scenario.Load(path)
	if err != nil {
		return nil, nil, fmt.Errorf("the fitted scenario does not load (a bug of fit): %w", err)
	}
	out := *sc
	out.Workload = fitted.Workload
	out.Start, out.Duration, out.Seed = fitted.Start, fitted.Duration, sc.Seed
	out.Faults = nil
	for _, fl := range sc.Faults {
		if fl.Kind != scenario.BadClock {
			out.Faults = append(out.Faults, fl)
		}
	}
	out.Faults = append(out.Faults, fitted.Faults...)
	if err := out.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: the scenario with the fitted workload: %w", sc.File, err)
	}
	return &out, f, nil
}
