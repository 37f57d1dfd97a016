package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/generators"
)

// TestEventsWorkload: a workload read from a log takes its ids, start
// and duration from the log, and the keys it replaces are refused, each
// in one line at its key path.
func TestEventsWorkload(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "log.csv"), []byte("k,et,at,customer_id\n7,1767225601000,1767225605000,3\n8,1767225602000,1767225623500,4\n7,1767225601000,1767225631000,3\n"), 0o644)
	file := filepath.Join(dir, "s.yaml")
	const q = "queries:\n  - {name: q, query: 'dropDuplicates([\"event_id\"])'}\n"
	s, err := Parse([]byte("name: s\ntrigger: 10s\nworkload:\n  events: {file: log.csv, id: k, eventTime: et, arrivalTime: at}\n"+q), file)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Workload.Events
	if e.Index == nil || e.Index.Rows != 3 || e.Index.Events != 2 {
		t.Fatalf("index %+v", e.Index)
	}
	if s.Workload.IDs != generators.Ints {
		t.Errorf("ids %s, want int", s.Workload.IDs)
	}
	if want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); !s.Start.Equal(want) {
		t.Errorf("start %s, want %s (the first arrival, 00:00:05, down to a whole trigger)", s.Start, want)
	}
	if s.Duration.Std() != 31*time.Second {
		t.Errorf("duration %s, want 31s (to the last arrival)", s.Duration)
	}
	if w := strings.Join(s.Warnings(), "\n"); !strings.Contains(w, "et as epoch milliseconds") {
		t.Errorf("warnings %q do not say the unit was detected", w)
	}
	for _, c := range []struct{ yaml, want string }{
		{"workload:\n  rate: 10/s\n  events: {file: log.csv, id: k, eventTime: et, arrivalTime: at}\n", "workload.rate: must be left out with workload.events"},
		{"start: 2026-01-01T00:00:00Z\nworkload:\n  events: {file: log.csv, id: k, eventTime: et, arrivalTime: at}\n", "start: must be left out with workload.events"},
		{"workload:\n  events: {file: log.csv, id: k, eventTime: et, arrivalTime: at, timeUnit: ns}\n", "workload.events.timeUnit: must be one of"},
		{"workload:\n  events: {file: log.csv, id: k, eventTime: et, arrivalTime: at, start: 2026-01-01T00:00:10Z}\n", "workload.events.start: must be at or before the log's first arrival"},
		{"workload:\n  events: {file: log.csv, id: k, eventTime: et, arrivalTime: at}\nqueries:\n  - {name: q, query: 'dropDuplicates([\"attempt\"])'}\n", "queries[0].query: names attempt, a column the log log.csv does not hold"},
		{"workload:\n  events: {file: nope.csv, id: k, eventTime: et, arrivalTime: at}\n", "workload.events.file: " + filepath.Join(dir, "nope.csv") + ": cannot read the log"},
		{"workload:\n  events: {file: log.csv, eventTime: et, arrivalTime: at}\n", "workload.events.id: must be set"},
	} {
		yaml := "name: s\ntrigger: 10s\n" + c.yaml
		if !strings.Contains(c.yaml, "queries:") {
			yaml += q
		}
		_, err := Parse([]byte(yaml), file)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.yaml, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "duration") {
			t.Errorf("%q: error %v names duration, which the log gives", c.yaml, err)
		}
	}
}
