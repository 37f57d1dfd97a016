// Package scenario loads the scenario files of experiments/: it decodes the
// YAML (unknown keys are errors), fills in the defaults of SCENARIO.md and
// validates the result, reporting every problem at once, one line each,
// naming the file, the key path and what was expected:
//
//	scenario experiments/x.yaml: workload.retries.delay.p99: must be above the median (30s), got 10s
//
// The resolved Scenario (defaults filled in) marshals to JSON
// deterministically, with durations rendered as "2h" or "30s" and rates as
// "2000/s", so that results files can embed it.
package scenario
