// Package fitfile is the format of fit.json, what `simulate fit` found in
// an event log: each estimate with its interval and method, and the
// series the fit report draws (rate over time, observed and fitted
// distribution functions, lateness, copies per event), plus the side by
// side runs of the log and the fitted scenario when they were made. It
// holds plain values only, so that reports renders it without knowing the
// fitter (generators/fit) and sim fills it.
package fitfile

import (
	"encoding/json"
	"fmt"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// Format versions fit.json.
const Format = "dedupsim-fit/1"

// Report is fit.json.
type Report struct {
	Format string `json:"format"`
	// Log is the log as given; Scenario the fitted scenario's file name;
	// Command the command line that wrote the report.
	Log      string `json:"log"`
	Scenario string `json:"scenario"`
	Command  string `json:"command"`
	// Rows are the log's rows, Events its events (estimated from the
	// sample), SampledEvents the events followed one by one (a hash
	// sample of ids, fraction SampleFraction).
	Rows           int64   `json:"rows"`
	Events         float64 `json:"events"`
	SampledEvents  int64   `json:"sampledEvents"`
	SampleFraction float64 `json:"sampleFraction"`
	// Estimates are every estimate, in the scenario's order.
	Estimates []Estimate `json:"estimates"`
	// Rate is the rate over time with the fitted profile.
	Rate RateSeries `json:"rate"`
	// Delay and Gap are the arrival delay of originals and the gap
	// between copies: observed against fitted.
	Delay Dist `json:"arrivalDelay"`
	Gap   Dist `json:"retryGap"`
	// Lateness is event time minus arrival (seconds) against arrival
	// (seconds from start), a sample of rows and every bad clock; the
	// Tolerance (seconds) marks bad clocks.
	Lateness  []XY    `json:"lateness"`
	Tolerance float64 `json:"toleranceSeconds"`
	// Copies[k] is the events with k extra copies among those followed
	// (index 0: events with none).
	Copies []int64 `json:"copiesPerEvent"`
	// Compare is the log and the fitted scenario run through the same
	// queries (Queries: "name: query"); empty when not run.
	Compare []CompareRow `json:"compare,omitempty"`
	Queries []string     `json:"queries,omitempty"`
	// Notes are caveats, one sentence each.
	Notes []string `json:"notes,omitempty"`
}

// Estimate is one fitted value with its interval.
type Estimate struct {
	// Name is what is estimated ("arrival delay: mu"); Key the scenario
	// key it sets.
	Name string `json:"name"`
	Key  string `json:"key"`
	// Value, Lo and Hi are rendered as the scenario writes them (Text);
	// the numbers are in Unit.
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Unit  string  `json:"unit"`
	Text  string  `json:"text"`
	// Method says how the value and the interval were made.
	Method string `json:"method"`
}

// XY is one point.
type XY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// RateSeries is the rate over time: per bin of BinSeconds, the rows and
// the estimated originals per second, and the fitted profile's segments.
type RateSeries struct {
	BinSeconds float64   `json:"binSeconds"`
	Rows       []float64 `json:"rowsPerSecond"`
	Originals  []float64 `json:"originalsPerSecond"`
	Profile    []Segment `json:"profile"`
}

// Segment is one fitted profile segment, in seconds from start.
type Segment struct {
	Start  float64 `json:"startSeconds"`
	Length float64 `json:"lengthSeconds"`
	Rate   float64 `json:"rate"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// Dist is an observed distribution of seconds against the fitted one.
type Dist struct {
	// Family is the fitted family (or "empirical"), Spec its scenario
	// form, KS its Kolmogorov-Smirnov statistic and Critical the 1%
	// critical value; N the values observed.
	Family   string  `json:"family"`
	Spec     string  `json:"spec"`
	KS       float64 `json:"ks"`
	Critical float64 `json:"critical"`
	N        int     `json:"n"`
	// Observed are quantiles of the observed values (x = seconds, y =
	// share at or below); Fitted the fitted CDF at the same x.
	Observed []XY `json:"observed"`
	Fitted   []XY `json:"fitted"`
}

// CompareRow is one query's measure on the log and on the fitted
// scenario.
type CompareRow struct {
	Query  string  `json:"query"`
	Metric string  `json:"metric"`
	Log    float64 `json:"log"`
	Fitted float64 `json:"fitted"`
	// Diff is (Fitted - Log) / Log, or 0 when both are 0.
	Diff float64 `json:"diff"`
}

// Write writes r as path atomically.
func Write(path string, r *Report) error {
	r.Format = Format
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := fileio.WriteFile(path, append(js, '\n')); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
