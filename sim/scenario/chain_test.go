package scenario

// The tests in this file check queries with the real planner (sim/spark/chain),
// through the exported Parse and Load. The other tests stand a fake
// planner in for it (fakeQueries), so that they do not depend on the
// planner's messages.

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoodQueriesPlan loads every good scenario with the real planner.
func TestGoodQueriesPlan(t *testing.T) {
	for _, path := range yamlFiles(t, "good") {
		if _, err := Load(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestQueryErrorsNamePath checks that a query the planner rejects is
// reported at queries[i].query, for a chain that does not parse and for
// one that parses but cannot run.
func TestQueryErrorsNamePath(t *testing.T) {
	const doc = `name: q
duration: 1h
workload: {rate: 10/s}
queries:
  - name: fine
    query: dropDuplicates(["event_id"])
  - name: unparsable
    query: dropDuplicates(["event_id"
  - name: no-watermark
    query: dropDuplicatesWithinWatermark(["event_id"])
  - name: unknown-column
    query: dropDuplicates(["device"])
`
	_, err := Parse([]byte(doc), "q.yaml")
	var paths []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *Error
		if !errors.As(e, &se) {
			t.Fatalf("%T: %v", e, e)
		}
		paths = append(paths, se.Path)
		if !strings.HasPrefix(se.Error(), "scenario q.yaml: "+se.Path+": must be a query Spark can run: ") {
			t.Errorf("unexpected form: %s", se)
		}
	}
	want := []string{"queries[1].query", "queries[2].query", "queries[3].query"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("errors at %v, want %v:\n%v", paths, want, err)
	}
}

// TestLoadEmpirical reads a scenario through Load, with its empirical
// files relative to the scenario file.
func TestLoadEmpirical(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "good", "empirical.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Workload.ArrivalDelay.Samples; len(got) != 4 || got[0] != 1 || got[3] != 60 {
		t.Errorf("samples %v, want [1 2.5 30 60]", got)
	}
}
