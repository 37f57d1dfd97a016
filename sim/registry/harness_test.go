package registry

import (
	"slices"
	"testing"
	"time"

	"github.com/dedupsim/dedupsim/metrics"
)

// TestEveryEngineHasHarnessFacts: every engine the registry lists has its
// harness facts (a horizon name, its peak state's names), and "" is
// Spark's; an unknown engine is an error.
func TestEveryEngineHasHarnessFacts(t *testing.T) {
	for _, e := range Engines() {
		h, err := HarnessOf(e.Name)
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if h.Name != e.Name || h.HorizonName == "" || h.PeakState == "" || h.PeakStateWhy == "" {
			t.Errorf("%s: incomplete harness facts %+v", e.Name, h)
		}
	}
	if h, err := HarnessOf(""); err != nil || h.Name != Spark || !h.SizesCluster || !h.Exports || !h.StateBytes || h.HorizonName != "delay" {
		t.Errorf(`HarnessOf("") = %+v, %v; want Spark's`, h, err)
	}
	if _, err := HarnessOf("storm"); err == nil {
		t.Error("an unknown engine has harness facts")
	}
	for _, c := range []struct {
		engine      string
		horizon     string
		bytes, size bool
	}{{"flink", "state TTL", true, false}, {"kafka-streams", "window", false, false}, {"beam", "duration", false, false}} {
		h, _ := HarnessOf(c.engine)
		if h.HorizonName != c.horizon || h.StateBytes != c.bytes || h.SizesCluster != c.size || h.Exports {
			t.Errorf("%s: horizon %q, state bytes %v, sizes a cluster %v; want %q, %v, %v", c.engine, h.HorizonName, h.StateBytes, h.SizesCluster, c.horizon, c.bytes, c.size)
		}
	}
}

// TestEveryCounterIsDescribed runs a query of each engine's kinds through
// its operator and checks that every counter it reports has a header and
// an explanation in CounterInfoFor (what summary.json's
// engineCounterInfo carries to the reports), the physical state rows
// first.
func TestEveryCounterIsDescribed(t *testing.T) {
	fixed := time.Minute
	for _, c := range []struct {
		engine string
		spec   QuerySpec
	}{
		{"flink", QuerySpec{Query: "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY proc_time ASC) AS rn FROM events) WHERE rn = 1", Options: map[string]string{"table.exec.state.ttl": "1 min"}}},
		{"flink", QuerySpec{Query: "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY event_time ASC) AS rn FROM events) WHERE rn = 1", Options: map[string]string{"table.exec.state.ttl": "1 min", "version": "2.1", "watermark": "5 s"}}},
		{"kafka-streams", QuerySpec{Window: dur(2 * time.Minute)}},
		{"kafka-streams", QuerySpec{Window: dur(2 * time.Minute), Time: "wall-clock", Punctuate: dur(time.Minute)}},
		{"beam", QuerySpec{Duration: dur(time.Minute)}},
		{"beam", QuerySpec{Duration: dur(time.Minute), TimeDomain: "event", FixedWindow: &fixed}},
	} {
		spec := ScenarioDefaults(c.engine)
		merge(&spec, c.spec)
		sq, err := ScenarioQueryFor(c.engine, spec)
		if err != nil {
			t.Errorf("%s %+v: %v", c.engine, c.spec, err)
			continue
		}
		op, err := sq.NewOperator()
		if err != nil {
			t.Fatal(err)
		}
		op.Process([]byte("a"), nil, 0, 0)
		op.State(1000)
		info := CounterInfoFor(c.engine)
		if len(info) < 2 || info[0].Name != "peakPhysicalStateRows" || info[1].Name != "finalPhysicalStateRows" {
			t.Errorf("%s: counter info %v does not start with the physical state rows", c.engine, info)
		}
		for _, ctr := range op.Counters() {
			i := slices.IndexFunc(info, func(ci metrics.CounterInfo) bool { return ci.Name == ctr.Name })
			if i < 0 || info[i].Header == "" || info[i].Explanation == "" {
				t.Errorf("%s: counter %s has no header and explanation in CounterInfoFor", c.engine, ctr.Name)
			}
		}
	}
	if CounterInfoFor(Spark) != nil {
		t.Error("Spark's queries carry no engine counters, but CounterInfoFor describes some")
	}
}

// merge sets in dst the keys src sets.
func merge(dst *QuerySpec, src QuerySpec) {
	if src.Query != "" {
		dst.Query = src.Query
	}
	if src.Options != nil {
		dst.Options = src.Options
	}
	for _, p := range []struct{ d, s **time.Duration }{{&dst.Window, &src.Window}, {&dst.Punctuate, &src.Punctuate}, {&dst.Duration, &src.Duration}, {&dst.FixedWindow, &src.FixedWindow}} {
		if *p.s != nil {
			*p.d = *p.s
		}
	}
	for _, p := range []struct{ d, s *string }{{&dst.Time, &src.Time}, {&dst.TimeDomain, &src.TimeDomain}, {&dst.Mode, &src.Mode}} {
		if *p.s != "" {
			*p.d = *p.s
		}
	}
}
