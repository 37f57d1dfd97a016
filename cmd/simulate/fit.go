package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/reports"
	"github.com/dedupsim/dedupsim/sim/fitlog"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

func newFitCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		ids                                         []string
		eventTime, arrivalTime, customer, unit, out string
		name, trigger, tolerance                    string
		queries                                     []string
		maxEvents                                   int
		seed                                        uint64
		noCheck                                     bool
	)
	cmd := &cobra.Command{
		Use:   "fit LOG",
		Short: "Fit a scenario to an event log, with a fit report",
		Long: `fit reads an event log (CSV with a header, JSON lines or Parquet, gzip or not; a
file, a folder or a glob, rows in arrival order) and writes a scenario whose
generated traffic reproduces the log's: the rate profile with its stalls
(binary segmentation on Poisson counts), the arrival delay of originals and
the gap between copies (the family of the smallest Kolmogorov-Smirnov
statistic, or the observed values), the share of events resent and their
copies, whether copies keep, re-stamp or jitter the event time, bad clocks (a
share with a skew, or fewer than 20 as bad-clock faults at their own times),
the key form and the customers. Each estimate has its 95% interval and its
method, in a comment of the scenario and in the report.

--out DIR is a folder written whole or not at all: NAME.yaml (the scenario,
loaded by the scenario loader before anything is published), the value files
of its empirical distributions, and the fit report (report.md, report.html,
fit.json, charts), and NAME-log.yaml, the log's own scenario (workload: events)
with the same trigger, tolerance and queries. Unless --no-check, the log and
the fitted scenario are run through the same queries and the report sets
their duplicates, missed duplicates, false drops and peak state side by side.
It replaces only a missing path, an empty folder or a
folder dedupsim wrote. Methods and accuracy: docs/fit.md.`,
		Example: `  simulate fit experiments/fit-sample/events.csv.gz --id event_id --event-time event_time --arrival-time ingest_time --customer customer_id --out /tmp/fitted
  simulate fit experiments/fit-sample/events.csv.gz --id event_id --event-time event_time --arrival-time ingest_time --out /tmp/fitted2 --name sample && simulate run /tmp/fitted2/sample.yaml --out /tmp/fitted2-run`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("want one log (a file, a folder or a glob), got %d arguments (e.g. simulate fit events.csv --id event_id --event-time event_time --arrival-time ingest_time --out fitted)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, f := range []struct{ name, v string }{{"event-time", eventTime}, {"arrival-time", arrivalTime}, {"out", out}} {
				if f.v == "" {
					return fmt.Errorf("--%s is required", f.name)
				}
			}
			if len(ids) == 0 {
				return fmt.Errorf("--id is required: the id column, or several for a composite id")
			}
			var o fitlog.Options
			var err error
			if o.Fit.Trigger, err = positiveDuration("trigger", trigger); err != nil {
				return err
			}
			if o.Fit.Tolerance, err = positiveDuration("tolerance", tolerance); err != nil {
				return err
			}
			if maxEvents < 1 {
				return fmt.Errorf("--max-events: must be at least 1, got %d", maxEvents)
			}
			if name != "" {
				// The name names the scenario's file inside --out: "../x"
				// wrote x.yaml beside it.
				if err := scenario.CheckName(name); err != nil {
					return fmt.Errorf("--name: %w", err)
				}
			}
			for _, q := range queries {
				if err := checkFitQuery(q); err != nil {
					return err
				}
			}
			o.Fit.MaxEvents, o.Fit.Seed = maxEvents, seed
			o.Name, o.Queries, o.Log = name, queries, args[0]
			o.Command = fitCommandLine(cmd, args[0])
			spec := fitlog.LogSpec{Path: args[0], ID: ids, EventTime: eventTime, ArrivalTime: arrivalTime, TimeUnit: unit, Customer: customer}
			open, units, err := fitlog.OpenerWithUnits(spec)
			if err != nil {
				return err
			}
			f, err := fitlog.Fit(open, o)
			if err != nil {
				return err
			}
			if u := units(); u != "" {
				fmt.Fprintf(stderr, "%s: %s\n", args[0], u)
				f.Report.Notes = append(f.Report.Notes, capitalizeFirst(u)+".")
			}
			var check *fitlog.Check
			if !noCheck {
				check = &fitlog.Check{Ctx: cmd.Context(), Log: spec}
			}
			if err := fitlog.Write(out, f, check, reports.RenderFit); err != nil {
				return fmt.Errorf("--out %w", err)
			}
			r := f.Result
			fmt.Fprintf(stdout, "%s: %d rows, about %.0f events; %d profile segments, arrival delay %s, %.3g resent, %d bad clocks\n",
				args[0], r.Rows, r.Events, len(r.Profile), r.ArrivalDelay.Spec.Kind, r.Resent.Value, r.BadClockRows)
			fmt.Fprintf(stderr, "scenario: %s/%s\nreport: %s/report.html\n", out, f.File, out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&ids, "id", nil, "the id column; several (comma-separated or repeated) for a composite id")
	fl.StringVar(&eventTime, "event-time", "", "the event-time column")
	fl.StringVar(&arrivalTime, "arrival-time", "", "the arrival-time column (broker or ingestion time)")
	fl.StringVar(&customer, "customer", "", "a column holding the customer, for workload.customers (optional)")
	fl.StringVar(&unit, "time-unit", "", "how times are written: rfc3339, s, ms or us (default: detected)")
	fl.StringVar(&out, "out", "", "the folder to write: the scenario, its value files and the fit report")
	fl.StringVar(&name, "name", "", "the scenario's name (default: fitted-<log file name>)")
	fl.StringArrayVar(&queries, "query", nil, "a query of the scenario (repeatable; default: within-watermark dedup on event_id at 30 seconds and 10 minutes)")
	fl.StringVar(&trigger, "trigger", "10s", "the scenario's trigger; profile segments last at least one")
	fl.StringVar(&tolerance, "tolerance", "1m", "how far ahead of its arrival an event time may be before it is a bad clock")
	fl.IntVar(&maxEvents, "max-events", 200_000, "the most events followed one by one (a hash sample of ids above it)")
	fl.BoolVar(&noCheck, "no-check", false, "do not run the log and the fitted scenario side by side (the log's runs take the time of a run over the log)")
	fl.Uint64Var(&seed, "seed", 1, "the seed of the reservoir samples and the bootstrap, and the scenario's")
	return cmd
}

// positiveDuration parses flag's value as a scenario duration above 0.
func positiveDuration(flag, v string) (time.Duration, error) {
	d, err := interval.Parse(v)
	if err != nil {
		return 0, fmt.Errorf("--%s: %w", flag, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("--%s: must be above 0, got %s", flag, v)
	}
	return d, nil
}

// fitCommandLine is the command as the report names it.
func fitCommandLine(cmd *cobra.Command, log string) string {
	parts := []string{"simulate fit", log}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		parts = append(parts, "--"+f.Name, f.Value.String())
	})
	return strings.Join(parts, " ")
}

func capitalizeFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// checkFitQuery refuses, in one line, a --query the fitted scenario could
// not run (it failed when the scenario was loaded, blamed on fit): it is
// checked as a scenario's query, on the generated columns the fitted
// scenario has.
func checkFitQuery(q string) error {
	text, err := json.Marshal(q)
	if err != nil {
		return fmt.Errorf("--query %s: %w", fileio.Quote(q), err)
	}
	doc := "name: q\nduration: 1m\nworkload: {rate: 1/s}\nqueries:\n  - {name: q, query: " + string(text) + "}\n"
	if _, err := scenario.Parse([]byte(doc), "fit"); err != nil {
		msg := strings.TrimPrefix(strings.Split(err.Error(), "\n")[0], "scenario fit: queries[0].query: ")
		return fmt.Errorf("--query %s: %s", fileio.Quote(q), msg)
	}
	return nil
}
