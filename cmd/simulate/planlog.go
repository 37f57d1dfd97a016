package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dedupsim/dedupsim/sim/fitlog"
)

// planLogQueries are the queries of the scenario plan builds from a log:
// the two dedups of experiments/capacity-plan.yaml, on the log's id.
var planLogQueries = []struct{ name, query string }{
	{"within-watermark", `withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])`},
	{"pair-keyed", `withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])`},
}

// withPlanLog lets plan take an event log instead of a scenario file:
// with --id, --event-time and --arrival-time, its argument is a log (a
// file, a folder or a glob), and plan runs on a scenario whose workload
// is the log (workload.events) with simulate fit's defaults (trigger 10s,
// bad-clock tolerance 1m) and the queries within-watermark and
// pair-keyed; --query may also be a query's text. Every other flag is
// plan's own.
func withPlanLog(cmd *cobra.Command) *cobra.Command {
	var (
		ids                                              []string
		eventTime, arrivalTime, unit, trigger, tolerance string
	)
	fl := cmd.Flags()
	fl.StringSliceVar(&ids, "id", nil, "with an event log instead of a scenario: its id column; several (comma-separated or repeated) for a composite id")
	fl.StringVar(&eventTime, "event-time", "", "with an event log: its event-time column")
	fl.StringVar(&arrivalTime, "arrival-time", "", "with an event log: its arrival-time column (broker or ingestion time)")
	fl.StringVar(&unit, "time-unit", "", "with an event log: how its times are written: rfc3339, s, ms or us (default: detected)")
	fl.StringVar(&trigger, "trigger", "10s", "with an event log: the scenario's trigger (simulate fit's default)")
	fl.StringVar(&tolerance, "tolerance", "1m", "with an event log: how far ahead of its arrival an event time may be before it is a bad clock")
	cmd.Use = "plan FILE|LOG --query NAME"
	cmd.Long += `

plan LOG --id COL --event-time COL --arrival-time COL plans on an event log
directly, without a scenario file: the scenario is the log itself
(workload.events, docs/scenario.md) with simulate fit's defaults (trigger 10s,
bad-clock tolerance 1m; --trigger, --tolerance) and two queries,
within-watermark (dropDuplicatesWithinWatermark on event_id) and pair-keyed
(dropDuplicates on event_id and event_time), each at 1 minute, which plan
varies; --query names one (default within-watermark) or is a query's text.
A log's rows are the same on every seed, so --seeds defaults to 1 there.`
	cmd.Example += `
  simulate plan experiments/fit-sample/events.csv.gz --id event_id --event-time event_time --arrival-time ingest_time --max-missed-rate 1%`
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		fl := cmd.Flags()
		isLog := false
		for _, n := range []string{"id", "event-time", "arrival-time", "time-unit", "trigger", "tolerance"} {
			isLog = isLog || fl.Changed(n)
		}
		if !isLog {
			return run(cmd, args)
		}
		log := args[0]
		for _, f := range []struct{ name, v string }{{"event-time", eventTime}, {"arrival-time", arrivalTime}} {
			if f.v == "" {
				return fmt.Errorf("--%s is required with an event log (plan %s --id COL --event-time COL --arrival-time COL)", f.name, log)
			}
		}
		if len(ids) == 0 {
			return fmt.Errorf("--id is required with an event log: the id column, or several for a composite id")
		}
		if ext := strings.ToLower(filepath.Ext(log)); ext == ".yaml" || ext == ".yml" {
			return fmt.Errorf("%s: a scenario file; --id, --event-time and --arrival-time are for an event log (its workload.events names the columns)", log)
		}
		if _, err := positiveDuration("trigger", trigger); err != nil {
			return err
		}
		if _, err := positiveDuration("tolerance", tolerance); err != nil {
			return err
		}
		query, _ := fl.GetString("query")
		queries, names := make([]string, len(planLogQueries)), make([]string, len(planLogQueries))
		for i, q := range planLogQueries {
			queries[i], names[i] = q.query, q.name
		}
		switch {
		case query == "":
			query = planLogQueries[0].name
		case strings.Contains(query, "("):
			queries, names, query = []string{query}, []string{"query"}, "query"
		}
		if err := fl.Set("query", query); err != nil {
			return err
		}
		if !fl.Changed("seeds") {
			if err := fl.Set("seeds", "1"); err != nil {
				return err
			}
		}
		tmp, err := os.MkdirTemp("", "dedupsim-plan-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		spec := fitlog.LogSpec{Path: log, ID: ids, EventTime: eventTime, ArrivalTime: arrivalTime, TimeUnit: unit}
		yml := string(fitlog.LogScenario(fitlog.NameFor(log)[len("fitted-"):], spec, trigger, tolerance, queries))
		for i, n := range names {
			yml = strings.Replace(yml, fmt.Sprintf("  - name: q%d\n", i+1), "  - name: "+n+"\n", 1)
		}
		file := filepath.Join(tmp, filepath.Base(log)+".yaml")
		if err := os.WriteFile(file, []byte(yml), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "plan: %s is an event log: planning query %s on its own rows, trigger %s, bad-clock tolerance %s (simulate fit's defaults), seeds %s\n",
			log, query, trigger, tolerance, fl.Lookup("seeds").Value)
		return run(cmd, []string{file})
	}
	return cmd
}
