package fitlog

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/metrics/fitfile"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// The measures the comparison sets side by side, per query.
const (
	MeasureDuplicates    = "duplicates"
	MeasureMissed        = "missed duplicates"
	MeasureFalseDropsBad = "false drops (bad clock)"
	MeasureFalseDrops    = "false drops (all)"
	MeasurePeakStateRows = "peak state rows"
	MeasureLogicalEvents = "events"
	MeasureInputRows     = "input rows"
)

// measures lists each measure with how to read it from a query's summary.
var measures = []struct {
	name string
	get  func(q *metrics.QuerySummary) int64
}{
	{MeasureInputRows, func(q *metrics.QuerySummary) int64 { return q.InputRows }},
	{MeasureLogicalEvents, func(q *metrics.QuerySummary) int64 { return q.LogicalEvents }},
	{MeasureDuplicates, func(q *metrics.QuerySummary) int64 { return q.TrueDuplicates }},
	{MeasureMissed, func(q *metrics.QuerySummary) int64 { return q.MissedDuplicates }},
	{MeasureFalseDropsBad, func(q *metrics.QuerySummary) int64 { return q.FalseDropsByCause.BadClock }},
	{MeasureFalseDrops, func(q *metrics.QuerySummary) int64 { return q.FalseDrops }},
	{MeasurePeakStateRows, func(q *metrics.QuerySummary) int64 { return q.PeakStateRows }},
}

// LogScenario returns a scenario file whose workload is the log itself
// (workload.events), with the fit's trigger, tolerance and the queries:
// the log's own runs.
func LogScenario(name string, s LogSpec, trigger, tolerance string, queries []string) []byte {
	var b strings.Builder
	q := strconv.Quote
	abs, err := filepath.Abs(s.Path)
	if err != nil {
		abs = s.Path
	}
	ids := make([]string, len(s.ID))
	for i, id := range s.ID {
		ids[i] = q(id)
	}
	fmt.Fprintf(&b, "name: %s\ntrigger: %s\nworkload:\n  events:\n", name, trigger)
	fmt.Fprintf(&b, "    file: %s\n    id: [%s]\n    eventTime: %s\n    arrivalTime: %s\n", q(abs), strings.Join(ids, ", "), q(s.EventTime), q(s.ArrivalTime))
	if s.TimeUnit != "" {
		fmt.Fprintf(&b, "    timeUnit: %s\n", q(s.TimeUnit))
	}
	fmt.Fprintf(&b, "    badClockTolerance: %s\nqueries:\n", tolerance)
	for i, qu := range queries {
		fmt.Fprintf(&b, "  - name: q%d\n    query: '%s'\n", i+1, strings.ReplaceAll(qu, "'", "''"))
	}
	return []byte(b.String())
}

// Compare runs the log (logYAML, a LogScenario written at logFile) and the
// fitted scenario (at fittedFile) through the same queries and returns,
// per query and measure, both values and their relative difference.
func Compare(ctx context.Context, logFile, fittedFile string, opts runner.Options) ([]fitfile.CompareRow, error) {
	run := func(file string) (*metrics.Summary, error) {
		sc, err := scenario.Load(file)
		if err != nil {
			return nil, err
		}
		res, err := runner.Run(ctx, sc, opts)
		if err != nil {
			return nil, err
		}
		defer res.Close()
		return res.Summary, nil
	}
	logSum, err := run(logFile)
	if err != nil {
		return nil, fmt.Errorf("running the log: %w", err)
	}
	fitSum, err := run(fittedFile)
	if err != nil {
		return nil, fmt.Errorf("running the fitted scenario: %w", err)
	}
	if len(logSum.Queries) != len(fitSum.Queries) {
		return nil, fmt.Errorf("the log ran %d queries, the fitted scenario %d", len(logSum.Queries), len(fitSum.Queries))
	}
	var rows []fitfile.CompareRow
	for i := range logSum.Queries {
		lq, fq := &logSum.Queries[i], &fitSum.Queries[i]
		for _, m := range measures {
			l, f := float64(m.get(lq)), float64(m.get(fq))
			row := fitfile.CompareRow{Query: lq.Name, Metric: m.name, Log: l, Fitted: f}
			if l != 0 {
				row.Diff = (f - l) / l
			} else if f != 0 {
				row.Diff = 1
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}
