package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanOnALog: plan LOG --id --event-time --arrival-time answers as
// plan does on the scenario written by hand whose workload is that log
// (trigger 10s, tolerance 1m, the within-watermark query), the JSON plan
// for plan, byte for byte; --query takes a query's text too; and the
// log's flags without their columns, or with a scenario file, are one
// line of error.
func TestPlanOnALog(t *testing.T) {
	log, err := filepath.Abs("../../experiments/fit-sample/events.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	yml := filepath.Join(dir, "by-hand.yaml")
	os.WriteFile(yml, []byte(`name: by-hand
trigger: 10s
workload:
  events: {file: `+log+`, id: event_id, eventTime: event_time, arrivalTime: ingest_time, badClockTolerance: 1m}
queries:
  - name: within-watermark
    query: withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])
`), 0o644)
	flags := []string{"--max-missed-rate", "1%", "--json", "-q"}
	code, want, errs := simulate(t, append([]string{"plan", yml, "--query", "within-watermark", "--seeds", "1"}, flags...)...)
	if code != 0 || !strings.Contains(want, `"recommendedDelaySeconds"`) {
		t.Fatalf("plan on the scenario: exit %d, %s%s", code, want, errs)
	}
	logArgs := []string{"plan", log, "--id", "event_id", "--event-time", "event_time", "--arrival-time", "ingest_time"}
	code, got, errs := simulate(t, append(logArgs, flags...)...)
	if code != 0 || got != want {
		t.Fatalf("plan on the log: exit %d, %s\nwant %s\n%s", code, got, want, errs)
	}
	if !strings.Contains(errs, "is an event log: planning query within-watermark on its own rows, trigger 10s, bad-clock tolerance 1m (simulate fit's defaults), seeds 1") {
		t.Fatalf("plan on the log does not say what it planned on: %s", errs)
	}
	code, got, errs = simulate(t, append(append(logArgs, "--query", `withWatermark("event_time", "1 minute").dropDuplicatesWithinWatermark(["event_id"])`), flags...)...)
	if code != 0 || got != strings.ReplaceAll(want, `"within-watermark"`, `"query"`) {
		t.Fatalf("plan on the log with a query's text: exit %d, %s\n%s", code, got, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", log, "--id", "event_id", "--arrival-time", "ingest_time"}, "--event-time is required with an event log"},
		{[]string{"plan", log, "--event-time", "event_time", "--arrival-time", "ingest_time"}, "--id is required with an event log"},
		{[]string{"plan", yml, "--id", "event_id", "--event-time", "event_time", "--arrival-time", "ingest_time"}, "a scenario file; --id, --event-time and --arrival-time are for an event log"},
		{[]string{"plan", log, "--id", "nope", "--event-time", "event_time", "--arrival-time", "ingest_time"}, `column nope: missing from the header`},
	} {
		code, _, errs := simulate(t, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%q: exit %d, %q; want one line with %q", c.args, code, errs, c.want)
		}
	}
}
