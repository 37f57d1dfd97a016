package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/engines"
)

func dur(d time.Duration) *time.Duration { return &d }

// TestScenarioQueryForKeys checks the resolution of Kafka Streams and Beam
// scenario queries: defaults, the query text, and every bad key as its
// own *KeyError.
func TestScenarioQueryForKeys(t *testing.T) {
	if got := ScenarioEngines(); !slices.Equal(got, []string{"flink", "kafka-streams", "beam"}) {
		t.Errorf("ScenarioEngines %v", got)
	}
	sq, err := ScenarioQueryFor("kafka-streams", QuerySpec{Window: dur(2 * time.Minute)})
	if err != nil || sq.Text != `{"engine":"kafka-streams","window":"2m","time":"stream"}` || sq.Store != "rocksdb-window-store" || !slices.Equal(sq.Keys, []string{"event_id"}) || len(sq.Warnings) == 0 {
		t.Errorf("kafka-streams: %+v, %v", sq, err)
	}
	sq, err = ScenarioQueryFor("beam", QuerySpec{})
	if err != nil || sq.Text != `{"engine":"beam","timeDomain":"processing","duration":"10m"}` || sq.Store != "direct-runner" {
		t.Errorf("beam defaults: %+v, %v", sq, err)
	}
	for _, c := range []struct {
		engine string
		spec   QuerySpec
		keys   []string
	}{
		{"kafka-streams", QuerySpec{}, []string{"window"}},
		{"kafka-streams", QuerySpec{Window: dur(0), Time: "wall"}, []string{"window", "time"}},
		{"kafka-streams", QuerySpec{Window: dur(1500 * time.Microsecond)}, []string{"window"}},
		{"beam", QuerySpec{Duration: dur(-time.Second), TimeDomain: "wall"}, []string{"duration", "timeDomain"}},
	} {
		_, err := ScenarioQueryFor(c.engine, c.spec)
		var keys []string
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				var ke *KeyError
				if !errors.As(e, &ke) {
					t.Errorf("%s %+v: %v is not a KeyError", c.engine, c.spec, e)
					continue
				}
				keys = append(keys, ke.Key)
			}
		}
		if !slices.Equal(keys, c.keys) {
			t.Errorf("%s %+v: errors on %v (%v), want %v", c.engine, c.spec, keys, err, c.keys)
		}
	}
	if _, err := ScenarioQueryFor("storm", QuerySpec{}); err == nil || !strings.Contains(err.Error(), `"storm"`) {
		t.Errorf("storm: %v", err)
	}
}

// TestScenarioOperatorsThroughTheRegistry feeds the registry's Kafka
// Streams and Beam operators three rows (key, arrival ms, event time ms)
// and checks outcomes, emitted counts, state and counters.
func TestScenarioOperatorsThroughTheRegistry(t *testing.T) {
	rows := []struct {
		key         string
		proc, event int64
	}{{"a", 0, 0}, {"a", 30_000, 0}, {"a", 70_000, 70_000}}
	for _, c := range []struct {
		engine   string
		spec     QuerySpec
		want     []engines.Outcome
		logical  int64
		counters []Counter
	}{
		// W = 2 min: a@70 looks in [10 s, 130 s] and misses a@0; the
		// second a@0 rewrote the row (a, 0): rows (a, 0) and (a, 70).
		{"kafka-streams", QuerySpec{Window: dur(2 * time.Minute)}, []engines.Outcome{engines.Emitted, engines.DroppedDuplicate, engines.Emitted}, 2, []Counter{{"droppedRecordsTotal", 0}}},
		// d = 1 min of processing time: the timer at 60 s fired by 70 s.
		{"beam", QuerySpec{Duration: dur(time.Minute)}, []engines.Outcome{engines.Emitted, engines.DroppedDuplicate, engines.Emitted}, 1, []Counter{{"timersFired", 1}}},
	} {
		sq, err := ScenarioQueryFor(c.engine, c.spec)
		if err != nil {
			t.Fatal(err)
		}
		op, err := sq.NewOperator()
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			o, n := op.Process([]byte(r.key), nil, r.proc, r.event)
			if o != c.want[i] || (n == 1) != (o == engines.Emitted) {
				t.Errorf("%s row %d: %v, %d emitted; want %v", c.engine, i, o, n, c.want[i])
			}
		}
		if l, _ := op.State(80_000); l != c.logical || !slices.Equal(op.Counters(), c.counters) {
			t.Errorf("%s: state %d, counters %v; want %d, %v", c.engine, l, op.Counters(), c.logical, c.counters)
		}
	}
}

// TestSweptQueryFor checks that a sweep sets each engine's horizon key to
// the swept value as it is (the query text shows Kafka Streams' window
// and Beam's duration; Flink's TTL is the option, which keeps the
// query's others) and refuses 0 on the horizon key.
func TestSweptQueryFor(t *testing.T) {
	for e, k := range map[string]string{"flink": "options.table.exec.state.ttl", "kafka-streams": "window", "beam": "duration", "spark": ""} {
		if got := HorizonKey(e); got != k {
			t.Errorf("HorizonKey(%s) = %q, want %q", e, got, k)
		}
	}
	sq, err := SweptQueryFor("kafka-streams", QuerySpec{Window: dur(time.Hour), Time: "record"}, 90*time.Second)
	if err != nil || sq.Text != `{"engine":"kafka-streams","window":"1m30s","time":"record"}` {
		t.Errorf("kafka-streams: %q, %v", sq.Text, err)
	}
	sq, err = SweptQueryFor("beam", QuerySpec{TimeDomain: "event"}, 20*time.Second)
	if err != nil || sq.Text != `{"engine":"beam","timeDomain":"event","duration":"20s"}` {
		t.Errorf("beam: %q, %v", sq.Text, err)
	}
	opts := map[string]string{"version": "2.0"}
	spec := QuerySpec{Query: "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1", Options: opts}
	swept, err := flinkHorizon(spec, 150*time.Second)
	if err != nil || len(swept.Options) != 2 || swept.Options["table.exec.state.ttl"] != "150 s" || swept.Options["version"] != "2.0" || len(opts) != 1 {
		t.Errorf("flink options %v (the query's %v), %v", swept.Options, opts, err)
	}
	if _, err := SweptQueryFor("flink", spec, time.Minute); err != nil {
		t.Errorf("flink: %v", err)
	}
	for _, e := range []string{"flink", "kafka-streams", "beam"} {
		spec := spec
		spec.Options, spec.Window = nil, dur(time.Minute)
		if e == "flink" {
			spec.Window = nil
		}
		_, err := SweptQueryFor(e, spec, 0)
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != HorizonKey(e) {
			t.Errorf("%s swept to 0: %v, want a KeyError on %s", e, err, HorizonKey(e))
		}
	}
}
