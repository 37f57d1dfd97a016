package scenario

import (
	"strconv"
	"strings"
	"testing"
)

// The queries of each engine but Spark, as a scenario writes them.
const (
	flinkQuery = `
  - name: f
    engine: flink
    query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1
`
	kstreamsQuery = `
  - name: k
    engine: kafka-streams
    window: 2 minutes
`
	beamQuery = `
  - name: b
    engine: beam
`
)

// TestSweepRefusesAHorizonAnEngineRefuses checks that a swept value that
// one query of another engine than Spark refuses as its horizon is one
// line at the value, naming the query and the key it sets: 0 is a Spark
// delay, but a Kafka Streams window and a Beam duration must be at least
// 1 ms, and a Flink TTL of 0 turns expiry off.
func TestSweepRefusesAHorizonAnEngineRefuses(t *testing.T) {
	sweep := "sweep:\n  delay: [1m, 0s]\n"
	wantError(t, base+kstreamsQuery+sweep, "sweep.delay[1]", "sets window of queries[1] (a kafka-streams query), which must", "at least 1 ms")
	wantError(t, base+beamQuery+sweep, "sweep.delay[1]", "sets duration of queries[1] (a beam query), which must", "at least 1 ms")
	wantError(t, base+flinkQuery+sweep, "sweep.delay[1]", "sets options.table.exec.state.ttl of queries[1] (a flink query), which must",
		"above 0 in a sweep", "turns state expiry off")
	// One line per query that refuses it.
	_, err := parseDoc(t, base+flinkQuery+kstreamsQuery+beamQuery+sweep)
	if err == nil || strings.Count(err.Error(), "\n") != 2 || strings.Count(err.Error(), "sweep.delay[1]: sets") != 3 {
		t.Errorf("three engines refusing 0s: %v", err)
	}
	// Spark takes a delay of 0.
	if _, err := parseDoc(t, base+sweep); err != nil {
		t.Errorf("a Spark sweep with 0s: %v", err)
	}
	// A query refused without the sweep is reported at its own key only.
	wantError(t, base+"  - name: k\n    engine: kafka-streams\n    window: 1500us\n"+sweep, "queries[1].window", "whole number of milliseconds")
}

// TestSweepCountsEveryEnginesJobs checks Scenario.Jobs: a query of
// another engine than Spark runs once per swept value, like a Spark query
// with a withWatermark; a Spark query without one runs once. The job
// limit counts them.
func TestSweepCountsEveryEnginesJobs(t *testing.T) {
	s, err := parseDoc(t, base+flinkQuery+kstreamsQuery+beamQuery+"sweep:\n  delay: [1m, 2m]\n")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Jobs(); n != 1+3*2 {
		t.Errorf("Jobs() = %d, want 7", n)
	}
	for i, want := range []bool{false, true, true, true} {
		if got := s.Queries[i].IsSwept(); got != want {
			t.Errorf("queries[%d].IsSwept() = %v", i, got)
		}
	}
	var b strings.Builder
	b.WriteString(base + beamQuery + "sweep:\n  delay: [")
	for i := range MaxJobs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i+1) + "s")
	}
	b.WriteString("]\n")
	wantError(t, b.String(), "sweep.delay", "at most 1000 jobs per run", "every query of another engine run once per sweep value", "got 1001 jobs")
}
