package scenario_test

// The fuzzers live in the external test package so that they can take an
// accepted scenario all the way to the generators and the runner, which
// import this package.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/runner"
	"github.com/dedupsim/dedupsim/sim/runner/runnertest"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Budgets of the work done on one accepted input.
const (
	fuzzRows = 2000
	fuzzTime = 2 * time.Second
)

// FuzzParse checks that Parse never panics and keeps its promises on any
// input. A scenario it rejects gets one line per problem, each naming the
// file, each printable. A scenario it accepts:
//
//   - validates, marshals, and stays within the limits (rows per batch,
//     jobs, a trigger of whole milliseconds);
//   - has printable, one-line warnings;
//   - expands into as many runner jobs as Scenario.Jobs says;
//   - builds a generator whose first rows come in arrival order;
//   - runs through the runner on those rows without panicking.
//
// Interesting inputs live in testdata/fuzz/FuzzParse; the good and bad
// scenarios of testdata/ seed the corpus too. Run it with
//
//	go test ./sim/scenario -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"good", "bad"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "fuzz.yaml"
		s, err := scenario.Parse(data, file)
		if err != nil {
			if s != nil {
				t.Fatal("a scenario returned along with errors")
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "scenario "+file+": ") {
					t.Fatalf("error line does not name the file: %q", line)
				}
				checkPrintable(t, line)
			}
			return
		}
		if s == nil {
			t.Fatal("nil scenario without an error")
		}
		checkAccepted(t, s)
	})
}

// checkPrintable fails when line holds a control character.
func checkPrintable(t *testing.T, line string) {
	t.Helper()
	for _, r := range line {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			t.Fatalf("line holds control character %U: %q", r, line)
		}
	}
}

// checkAccepted takes an accepted scenario through everything a run does
// before and while it runs, within the budgets.
func checkAccepted(t *testing.T, s *scenario.Scenario) {
	if verr := s.Validate(); verr != nil {
		t.Fatalf("Parse accepted a scenario that Validate rejects: %v", verr)
	}
	if _, merr := json.Marshal(s); merr != nil {
		t.Fatalf("resolved scenario does not marshal: %v", merr)
	}
	if s.Trigger < scenario.MinTrigger || s.Trigger%scenario.MinTrigger != 0 {
		t.Fatalf("accepted trigger %s", s.Trigger)
	}
	if rows, _ := s.RowsPerBatch(); rows > scenario.MaxRowsPerBatch {
		t.Fatalf("accepted %g rows per batch", rows)
	}
	for _, w := range s.WarningLines() {
		checkPrintable(t, w)
	}
	jobs, err := runner.Jobs(s)
	if err != nil {
		t.Fatalf("accepted a scenario the runner cannot expand: %v", err)
	}
	if len(jobs) != s.Jobs() || len(jobs) > scenario.MaxJobs {
		t.Fatalf("runner makes %d jobs, Scenario.Jobs says %d (limit %d)", len(jobs), s.Jobs(), scenario.MaxJobs)
	}
	g, err := generators.New(s.Generator())
	if err != nil {
		t.Fatalf("accepted a scenario the generators reject: %v", err)
	}
	deadline := time.Now().Add(fuzzTime)
	var r generators.Row
	last := int64(-1 << 63)
	for i := 0; i < fuzzRows && time.Now().Before(deadline) && g.Next(&r); i++ {
		if r.Arrival < last {
			t.Fatalf("row %d arrives at %d, before the previous row (%d)", i, r.Arrival, last)
		}
		last = r.Arrival
	}
	// A short run on the first rows: the runner's loop (triggers, faults,
	// sink draws) must not panic on anything the loader accepts.
	ctx, cancel := context.WithTimeout(context.Background(), fuzzTime)
	defer cancel()
	res, err := runner.Run(ctx, s, runnertest.With(runner.Options{Workers: 1, Store: scenario.StoreMemory}, runnertest.Hooks{
		NewSource: func(sc *scenario.Scenario) (runner.Source, error) {
			g, err := generators.New(sc.Generator())
			if err != nil {
				return nil, err
			}
			return &capped{g: g, left: fuzzRows / 10, deadline: time.Now().Add(fuzzTime / 2)}, nil
		},
	}))
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("accepted a scenario the runner fails on: %v", err)
	}
	if err != nil {
		return
	}
	defer res.Close()
	// `simulate report` must be able to read back what the run wrote.
	var buf bytes.Buffer
	if err := res.WriteTimeseries(&buf); err != nil {
		t.Fatalf("timeseries.csv: %v", err)
	}
	if _, err := metrics.ReadTimeseries(&buf); err != nil {
		t.Fatalf("accepted a scenario whose timeseries.csv cannot be read back: %v", err)
	}
	if _, err := metrics.MarshalSummary(res.Summary); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
}

// capped is a generator cut after a number of rows or a wall-clock time.
type capped struct {
	g        *generators.Generator
	left     int
	deadline time.Time
}

func (c *capped) Next(r *generators.Row) bool {
	if c.left <= 0 || time.Now().After(c.deadline) {
		return false
	}
	c.left--
	return c.g.Next(r)
}

// FuzzAccepted fills the keys that decide how a run proceeds (start,
// duration, trigger, rates, profile, heartbeat, retries, bad clocks,
// faults, sweep) into a scenario that is otherwise valid, so that most
// inputs are accepted and reach checkAccepted: the generator, the job
// expansion and a short run. FuzzParse mutates whole files and rarely
// gets past the loader. Interesting inputs live in
// testdata/fuzz/FuzzAccepted. Run it with
//
//	go test ./sim/scenario -run '^$' -fuzz FuzzAccepted -fuzztime 60s
func FuzzAccepted(f *testing.F) {
	// Arguments: start, duration, trigger, rate, heartbeat, the first
	// segment's for and rate (no profile when for is empty), the second
	// segment's for (its rate is rate), retries.probability, the mean of
	// copies, the retry delay, futureTimestamps.probability, the largest
	// skew, the faults' at and the sweep's delay (also the jitter).
	f.Add("2026-01-01T00:00:00Z", "1h", "10s", "100/s", "", "", "", "", "0.1", "2", "30s", "0", "1h", "30m", "1m")
	f.Add("2026-01-01T00:00:00Z", "10m", "1ms", "1000/s", "1ms", "1s", "5/s", "1s", "0.5", "1", "1ms", "0.01", "7d", "1m", "1s")
	f.Add("1000-01-01T00:00:00Z", "2000000h", "1d", "1e-9", "1h", "", "", "", "1", "1e6", "1e9", "1", "1e9", "1000000h", "5m")
	// A start near the end of year 9999 ran, and wrote a timeseries whose
	// 5-digit years could not be read back.
	f.Add("9999-12-31T23:30:00Z", "1h", "10s", "10/s", "", "", "", "", "0", "1", "1s", "0.01", "7d", "30m", "1m")
	// A trigger below a microsecond passed validation and divided by
	// zero in the runner.
	f.Add("2026-01-01T00:00:00Z", "1h", "500ns", "10/s", "", "", "", "", "0", "1", "1s", "0", "1h", "30m", "1m")
	f.Fuzz(func(t *testing.T, start, duration, trigger, rate, heartbeat, seg1For, seg1Rate, seg2For, retryP, copiesMean, retryDelay, badP, badSkew, faultAt, delay string) {
		q := func(s string) string { return quoteYAML(s) }
		var b strings.Builder
		b.WriteString("name: fz\nstart: " + q(start) + "\nduration: " + q(duration) + "\ntrigger: " + q(trigger) + "\nworkload:\n")
		if seg1For == "" {
			b.WriteString("  rate: " + q(rate) + "\n")
		} else {
			b.WriteString("  profile:\n    - {for: " + q(seg1For) + ", rate: " + q(seg1Rate) + "}\n    - {for: " + q(seg2For) + ", rate: " + q(rate) + "}\n")
		}
		if heartbeat != "" {
			b.WriteString("  heartbeat: " + q(heartbeat) + "\n")
		}
		b.WriteString("  ids: int\n  arrivalDelay: {dist: exponential, mean: " + q(retryDelay) + "}\n")
		b.WriteString("  retries: {probability: " + q(retryP) + ", copies: {dist: geometric, mean: " + q(copiesMean) + "}, delay: {dist: pareto, min: " + q(retryDelay) + ", alpha: 1.1}, timestamp: jitter, jitter: " + q(delay) + "}\n")
		b.WriteString("  futureTimestamps: {probability: " + q(badP) + ", skew: {dist: uniform, min: 0, max: " + q(badSkew) + "}}\n")
		b.WriteString("queries:\n  - {name: a, query: 'withWatermark(\"event_time\", \"1 minute\").dropDuplicatesWithinWatermark([\"event_id\"])'}\n")
		b.WriteString("  - {name: b, query: 'dropDuplicates([\"event_id\"])'}\n")
		b.WriteString("sink: {kind: append, failureProbability: 0.3}\n")
		b.WriteString("faults:\n  - {at: " + q(faultAt) + ", kind: restart}\n  - {at: " + q(faultAt) + ", kind: lose-checkpoint}\n")
		b.WriteString("sweep: {delay: [" + q(delay) + "]}\n")
		s, err := scenario.Parse([]byte(b.String()), "fz.yaml")
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				checkPrintable(t, line)
			}
			return
		}
		checkAccepted(t, s)
	})
}

// quoteYAML renders s as a YAML double-quoted scalar.
func quoteYAML(s string) string {
	out, _ := json.Marshal(s)
	return string(out)
}
