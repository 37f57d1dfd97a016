package fitlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/generators/eventlog"
	"github.com/dedupsim/dedupsim/generators/fit"
	"github.com/dedupsim/dedupsim/metrics/fitfile"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// DefaultQueries are the queries a fitted scenario runs unless told
// otherwise: within-watermark dedup at a short and a long delay.
var DefaultQueries = []string{
	`withWatermark("event_time", "30 seconds").dropDuplicatesWithinWatermark(["event_id"])`,
	`withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])`,
}

// Options say what to fit and how to write it.
type Options struct {
	// Fit tunes the fitter.
	Fit fit.Options
	// Name is the scenario's name; Queries its queries (DefaultQueries
	// when empty).
	Name    string
	Queries []string
	// Log names the log in the scenario's and the report's text; Command
	// is the command line, for the report.
	Log, Command string
}

// Fitted is a fit ready to write.
type Fitted struct {
	Result   *fit.Result
	Scenario fit.Written
	Report   *fitfile.Report
	// File is the scenario's file name inside the output folder.
	File string
	// Options are the options it was fitted with, defaults resolved.
	Options Options
}

// Check is the side by side check of a fit: the log's own scenario
// (LogScenario), written beside the fitted one, and both run through the
// same queries.
type Check struct {
	// Ctx cancels the runs.
	Ctx context.Context
	// Log is the log fitted.
	Log LogSpec
	// Runner are the runs' options (workers); its ScratchDir is set to
	// the staging folder's.
	Runner runner.Options
}

var nameRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// NameFor returns a scenario name made of a log's file name: its base
// without extensions, with every character a name cannot hold replaced.
func NameFor(log string) string {
	b := filepath.Base(log)
	if i := strings.IndexByte(b, '.'); i > 0 {
		b = b[:i]
	}
	b = strings.Trim(nameRE.ReplaceAllString(b, "-"), "-._")
	if b == "" {
		b = "log"
	}
	if len(b) > 90 {
		b = b[:90]
	}
	return "fitted-" + b
}

// Fit fits the log open reads and renders the scenario and the report.
func Fit(open fit.Opener, o Options) (*Fitted, error) {
	r, err := fit.Fit(open, o.Fit)
	if err != nil {
		// The reader's errors name the file; the fitter's name the log.
		var le *eventlog.Error
		if !errors.As(err, &le) {
			err = fmt.Errorf("%s: %w", o.Log, err)
		}
		return nil, err
	}
	if o.Name == "" {
		o.Name = NameFor(o.Log)
	}
	if len(o.Queries) == 0 {
		o.Queries = DefaultQueries
	}
	o.Fit = r.Options
	f := &Fitted{Result: r, File: o.Name + ".yaml", Options: o}
	f.Scenario = r.Scenario(o.Name, o.Name, o.Log, o.Queries)
	f.Report = Report(r, o.Log, f.File, o.Command)
	return f, nil
}

// Write publishes f as the folder out, in one step: the scenario file,
// the empirical value files it names, and the report render writes
// (reports.RenderFit). The scenario is loaded by the scenario loader in
// the staging folder first: a scenario that would not load is an error,
// and out is left as it was on any failure. out is replaced only when it
// is missing, empty or a folder dedupsim wrote.
//
// With check, the folder also holds NAME-log.yaml, the log's own scenario
// (workload.events) with the same trigger, tolerance and queries, and the
// report sets both runs side by side (Report.Compare).
func Write(out string, f *Fitted, check *Check, render func(dir string, r *fitfile.Report) error) error {
	return runner.Publish(out, func(st *fileio.Staging) error {
		for name, data := range f.Scenario.Files {
			if err := fileio.WriteFile(filepath.Join(st.Dir, name), data); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		path := filepath.Join(st.Dir, f.File)
		if err := fileio.WriteFile(path, f.Scenario.YAML); err != nil {
			return fmt.Errorf("%s: %w", f.File, err)
		}
		if _, err := scenario.Load(path); err != nil {
			return fmt.Errorf("the fitted scenario does not load (a bug of fit): %w", err)
		}
		if check != nil {
			logFile := filepath.Join(st.Dir, f.Options.Name+"-log.yaml")
			yml := LogScenario(f.Options.Name+"-log", check.Log, f.Options.Fit.Trigger.String(), f.Options.Fit.Tolerance.String(), f.Options.Queries)
			if err := fileio.WriteFile(logFile, yml); err != nil {
				return fmt.Errorf("%s: %w", filepath.Base(logFile), err)
			}
			scratch, err := st.ScratchDir()
			if err != nil {
				return err
			}
			opts := check.Runner
			opts.ScratchDir = scratch
			rows, err := Compare(check.Ctx, logFile, path, opts)
			if err != nil {
				return err
			}
			f.Report.Compare = rows
			f.Report.Queries = nil
			for i, q := range f.Options.Queries {
				f.Report.Queries = append(f.Report.Queries, fmt.Sprintf("q%d: %s", i+1, q))
			}
		}
		if render != nil {
			if err := render(st.Dir, f.Report); err != nil {
				return err
			}
		}
		return nil
	})
}
