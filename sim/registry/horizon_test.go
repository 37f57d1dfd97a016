package registry

import (
	"strings"
	"testing"
	"time"
)

// TestScenarioQueriesNameTheirHorizon: every engine's scenario query says
// how long it remembers a key by its own name, and a Flink rowtime
// keep-first query (insert-only from 2.1) warns that it drops late rows.
func TestScenarioQueriesNameTheirHorizon(t *testing.T) {
	keepFirst := "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1"
	rowtime := "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ASC) AS rn FROM events) WHERE rn = 1"
	for _, c := range []struct {
		engine string
		spec   QuerySpec
		name   string
		value  time.Duration // 0: none
	}{
		{"flink", QuerySpec{Query: keepFirst, Options: map[string]string{"table.exec.state.ttl": "10 min"}}, "TTL", 10 * time.Minute},
		{"flink", QuerySpec{Query: keepFirst}, "TTL", 0},
		{"kafka-streams", QuerySpec{Window: dur(20 * time.Minute)}, "W", 20 * time.Minute},
		{"kafka-streams", QuerySpec{Mode: "keep-last"}, "W", 0},
		{"beam", QuerySpec{Duration: dur(10 * time.Minute)}, "d", 10 * time.Minute},
	} {
		sq, err := ScenarioQueryFor(c.engine, c.spec)
		if err != nil {
			t.Fatalf("%s %+v: %v", c.engine, c.spec, err)
		}
		h := sq.Horizon
		got := time.Duration(0)
		if h.Value != nil {
			got = *h.Value
		}
		if h.Name != c.name || got != c.value {
			t.Errorf("%s %+v: horizon %s %v, want %s %v", c.engine, c.spec, h.Name, got, c.name, c.value)
		}
	}
	sq, err := ScenarioQueryFor("flink", QuerySpec{Query: rowtime, Options: map[string]string{"version": "2.1", "watermark": "5 s"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sq.Warnings) != 1 || !strings.Contains(sq.Warnings[0], "numLateRecordsDropped") {
		t.Errorf("rowtime keep-first on 2.1: warnings %q, want the late-row drop", sq.Warnings)
	}
	sq, err = ScenarioQueryFor("flink", QuerySpec{Query: rowtime, Options: map[string]string{"version": "2.0", "watermark": "5 s"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sq.Warnings) != 0 {
		t.Errorf("rowtime keep-first on 2.0 (a changelog function, no late drop): warnings %q", sq.Warnings)
	}
}
