// Package scenario loads the scenario files of experiments/ (the format of
// docs/scenario.md): it decodes the YAML into typed structs (unknown keys
// are errors), fills in the defaults and validates the result, reporting
// every problem at once, one line each, naming the file, the key path and
// what was expected:
//
//	scenario experiments/x.yaml: workload.retries.delay.p99: must be above the median (30s), got 10s
//
// Key paths come from the yaml tags of the types (the workload's are the
// generators' own configuration, generators.Workload), so a new key is one
// new field. The resolved Scenario (defaults filled in) marshals to JSON
// deterministically, with durations rendered as "2h" or "30s" and rates as
// "2000/s", so that results files can embed it.
package scenario

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"fmt"
	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/registry"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
	"github.com/dedupsim/dedupsim/sim/spark/sparkmodel"
	"github.com/dedupsim/dedupsim/sim/stores"
	"strings"
)

// Scenario is one resolved scenario file: every key of docs/scenario.md,
// with the defaults filled in. Its JSON form uses the YAML key names. The
// yaml, want and need tags drive the loader (see generators.Workload).
type Scenario struct {
	// File is the path the scenario was loaded from; error messages name
	// it. It is not part of the JSON form, so that results do not depend
	// on where the file was read from.
	File string `json:"-" yaml:"-"`
	// Name names the results folder; it is safe as a file name.
	Name string `json:"name" yaml:"name" want:"a name" need:"a name for the results folder"`
	// Seed is the root of every random stream of the run.
	Seed uint64 `json:"seed" yaml:"seed" want:"a whole number from 0 to 18446744073709551615"`
	// Start is the origin of event time and processing time, in UTC.
	Start time.Time `json:"start" yaml:"start" want:"an RFC 3339 time such as 2026-01-01T00:00:00Z"`
	// Duration is the span of processing time during which originals
	// arrive; copies may still arrive after it.
	Duration interval.Duration `json:"duration" yaml:"duration" need:"the processing time of original arrivals, such as 2h"`
	// Trigger is the processing-time trigger interval.
	Trigger interval.Duration `json:"trigger" yaml:"trigger"`
	// NoDataMicroBatches enables Spark's no-data batches.
	NoDataMicroBatches bool `json:"noDataMicroBatches" yaml:"noDataMicroBatches" want:"true or false"`
	// Workload describes the generated traffic.
	Workload generators.Workload `json:"workload" yaml:"workload" need:"a mapping with at least rate or profile"`
	// Queries are the queries run on the same input, at least one.
	Queries []Query `json:"queries" yaml:"queries"`
	// Store is the state store backend: StoreMemory or StorePebble.
	Store string `json:"store" yaml:"store" want:"memory or pebble"`
	// Sink is the sink the queries write to.
	Sink Sink `json:"sink" yaml:"sink"`
	// Faults are the faults injected during the run, if any.
	Faults []Fault `json:"faults,omitempty" yaml:"faults"`
	// Sweep, when set, reruns every query that has a horizon with each
	// of its values (Query.IsSwept).
	Sweep *Sweep `json:"sweep,omitempty" yaml:"sweep"`
	// Spark, when set, runs the queries on a modelled Spark cluster:
	// partitioned state, batch durations, executor memory (spark.go).
	Spark *sparkmodel.Config `json:"spark,omitempty" yaml:"spark" want:"a mapping of partitions, provider, executors, coresPerExecutor, maxRowsPerBatch, cost, downtime, executorMemory"`
}

// End returns the end of the window of original arrivals, Start+Duration.
func (s *Scenario) End() time.Time { return s.Start.Add(s.Duration.Std()) }

// LastTrafficTrigger returns the first trigger at or after End, as an
// offset from Start: the batch there takes the last originals, and it
// closes the traffic window of the results (metrics.Windows). With a
// trigger of 0 it is the duration.
func (s *Scenario) LastTrafficTrigger() time.Duration {
	d, t := s.Duration.Std(), s.Trigger.Std()
	if t <= 0 {
		return d
	}
	return (d + t - 1) / t * t
}

// Generator returns the configuration of the scenario's row generator:
// its workload, and a row for each bad-clock fault (generators.BadClockRow,
// named by the fault's key path).
func (s *Scenario) Generator() generators.Config {
	c := generators.Config{Seed: s.Seed, Start: s.Start, Duration: s.Duration, Workload: s.Workload}
	for i, f := range s.Faults {
		if f.Kind == BadClock {
			c.BadClockRows = append(c.BadClockRows, generators.BadClockRow{
				At: f.At.Micros(), Skew: f.Skew.Micros(), Key: index("faults", i)})
		}
	}
	return c
}

// Query is one named query of a scenario.
type Query struct {
	// Name names the query's results; it is safe as a file name.
	Name string `json:"name" yaml:"name" want:"a name"`
	// Query is the PySpark-style chain, as sim/spark/chain parses it.
	Query string `json:"query,omitempty" yaml:"query" want:"a query such as dropDuplicates([\"event_id\"]) (a JSON query object or a query holding \": \" goes in single quotes: query: '{...}')"`
	// Store, when set, is the state store backend of this query's
	// operators (StoreMemory or StorePebble), in place of the scenario's
	// Store; "" runs the query on the scenario's. It is left out of the
	// JSON form when unset, so scenarios without it resolve as before.
	Store string `json:"store,omitempty" yaml:"store" want:"memory or pebble"`
	// Engine is the engine that runs the query: "" or EngineSpark for a
	// PySpark-style chain, "flink" for Flink SQL's ROW_NUMBER() = 1
	// dedup (docs/flink.md, "In a scenario"), "kafka-streams" for the
	// window-store dedup (docs/kafka-streams.md), "beam" for Deduplicate
	// (docs/beam.md): registry.ScenarioEngines. Left out of the JSON form when unset, so
	// Spark scenarios resolve as before.
	Engine string `json:"engine,omitempty" yaml:"engine" want:"spark, flink, kafka-streams or beam"`
	// Options are the engine's options: Flink's configuration keys
	// verbatim (table.exec.state.ttl, ...) and "version"; only a Flink
	// query takes them.
	Options map[string]string `json:"options,omitempty" yaml:"options" want:"a mapping of option keys to values"`
	// Window and Time are a kafka-streams query's: the window store's
	// retention and window size W (a duration), and the time its
	// processor looks up and stores at ("stream", the default, or
	// "record"). A beam query's window is {fixed: DURATION}: fixed
	// windows of that size.
	Window *QueryWindow `json:"window,omitempty" yaml:"window"`
	Time   string       `json:"time,omitempty" yaml:"time" want:"stream, record or wall-clock"`
	// Punctuate is a kafka-streams wall-clock query's punctuation
	// interval (time: wall-clock). Left out of the JSON form when unset.
	Punctuate *interval.Duration `json:"punctuate,omitempty" yaml:"punctuate"`
	// Partitions is a kafka-streams query's number of partitions of the
	// repartition topic keyed by event_id, one task (window store and
	// stream time) each; unset is one. Left out of the JSON form when
	// unset.
	Partitions *int64 `json:"partitions,omitempty" yaml:"partitions" want:"a whole number of partitions such as 4"`
	// Mode and Form are a kafka-streams query's dedup ("keep-first", the
	// window-store processor and the default, or "keep-last") and
	// keep-last's form ("toTable", the default, or "reduce"). Left out
	// of the JSON form when unset.
	Mode string `json:"mode,omitempty" yaml:"mode" want:"keep-first or keep-last"`
	Form string `json:"form,omitempty" yaml:"form" want:"toTable or reduce"`
	// TimeDomain and Duration are a beam query's: Deduplicate's time
	// domain ("processing", the default, or "event") and duration d
	// (default 10 minutes).
	TimeDomain string             `json:"timeDomain,omitempty" yaml:"timeDomain" want:"processing or event"`
	Duration   *interval.Duration `json:"duration,omitempty" yaml:"duration"`
	// AllowedLateness is a beam query's in fixed windows: the windows'
	// allowed lateness (default 0). Left out of the JSON form when unset.
	AllowedLateness *interval.Duration `json:"allowedLateness,omitempty" yaml:"allowedLateness"`
}

// QueryWindow is a query's window key: a duration (a kafka-streams
// query's W, in Size) or {fixed: DURATION} (a beam query's fixed
// windows, in Fixed).
type QueryWindow struct {
	Size  interval.Duration
	Fixed *interval.Duration
}

// MarshalJSON renders w as the scenario file writes it: "2m", or
// {"fixed":"1m"}.
func (w QueryWindow) MarshalJSON() ([]byte, error) {
	if w.Fixed != nil {
		return json.Marshal(struct {
			Fixed interval.Duration `json:"fixed"`
		}{*w.Fixed})
	}
	return json.Marshal(w.Size)
}

// engineKeys returns the keys of q, besides name, engine and store, that
// are set: those an engine's query takes (registry.ScenarioKeys).
func (q Query) engineKeys() []string {
	var out []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"query", strings.TrimSpace(q.Query) != ""}, {"options", len(q.Options) > 0},
		{"mode", q.Mode != ""}, {"window", q.Window != nil}, {"time", q.Time != ""}, {"partitions", q.Partitions != nil}, {"form", q.Form != ""}, {"punctuate", q.Punctuate != nil},
		{"timeDomain", q.TimeDomain != ""}, {"duration", q.Duration != nil}, {"allowedLateness", q.AllowedLateness != nil},
	} {
		if k.set {
			out = append(out, k.name)
		}
	}
	return out
}

// fillEngineDefaults writes the defaults of the engines' query keys
// (registry.ScenarioDefaults: Kafka Streams' time, Beam's timeDomain and
// duration) into the resolved scenario's unset ones.
func (s *Scenario) fillEngineDefaults() {
	for i := range s.Queries {
		q := &s.Queries[i]
		def := registry.ScenarioDefaults(q.Engine)
		if q.Mode == "keep-last" {
			// Kafka Streams' keep-last has no lookup time.
			def.Time = ""
		}
		q.Time, q.TimeDomain = cmp.Or(q.Time, def.Time), cmp.Or(q.TimeDomain, def.TimeDomain)
		if q.Window == nil && def.Window != nil {
			q.Window = &QueryWindow{Size: interval.Duration(*def.Window)}
		}
		if q.Duration == nil && def.Duration != nil {
			d := interval.Duration(*def.Duration)
			q.Duration = &d
		}
	}
}

// Spec returns the engine keys of q, a query of another engine than
// Spark, for registry.ScenarioQueryFor.
func (q Query) Spec() registry.QuerySpec {
	spec := registry.QuerySpec{Query: q.Query, Options: q.Options, Time: q.Time, TimeDomain: q.TimeDomain, Partitions: q.Partitions, Mode: q.Mode, Form: q.Form}
	if q.Window != nil && q.Window.Fixed != nil {
		w := q.Window.Fixed.Std()
		spec.FixedWindow = &w
	} else if q.Window != nil {
		w := q.Window.Size.Std()
		spec.Window = &w
	}
	if q.Punctuate != nil {
		p := q.Punctuate.Std()
		spec.Punctuate = &p
	}
	if q.AllowedLateness != nil {
		l := q.AllowedLateness.Std()
		spec.AllowedLateness = &l
	}
	if q.Duration != nil {
		d := q.Duration.Std()
		spec.Duration = &d
	}
	return spec
}

// EngineSpark is the engine of a PySpark-style chain (the default); the
// other engines a scenario's queries may name are sim/registry's
// (registry.ScenarioEngines).
const EngineSpark = "spark"

// NoHorizon returns why q, a query of another engine than Spark, has no
// horizon a sweep or plan could set (registry.NoHorizon: a Kafka Streams
// keep-last query), or nil.
func (q Query) NoHorizon() error {
	if q.IsSpark() {
		return nil
	}
	return registry.NoHorizon(q.Engine, q.Spec())
}

// IsSpark reports whether Spark runs the query (its engine is unset or
// spark).
func (q Query) IsSpark() bool { return q.Engine == "" || q.Engine == EngineSpark }

// IsSwept reports whether a sweep reruns the query once per swept value,
// with the value as its horizon: a Spark query that has a withWatermark
// (its delay), and every query of another engine (its
// registry.HorizonKey: Flink's TTL, Kafka Streams' window, Beam's
// duration). A Spark query without a withWatermark runs once, since no
// delay changes it.
func (q Query) IsSwept() bool { return !q.IsSpark() || hasWatermark(q.Query) }

// QueryStore returns the state store backend query i runs on when no
// command line flag overrides it: the query's own store, else the
// scenario's.
func (s *Scenario) QueryStore(i int) string {
	return cmp.Or(s.Queries[i].Store, s.Store)
}

// The state store backends (sim/stores knows them).
const (
	// StoreMemory keeps state in memory.
	StoreMemory = stores.Memory
	// StorePebble keeps state in a Pebble database.
	StorePebble = stores.Pebble
)

// The sink kinds.
const (
	// SinkAppend appends every row of every batch attempt, so a retried
	// batch writes its rows again.
	SinkAppend = "append"
	// SinkIdempotent writes a retried batch's rows only once.
	SinkIdempotent = "idempotent"
)

// Sink is the sink the queries write to.
type Sink struct {
	// Kind is SinkAppend or SinkIdempotent.
	Kind string `json:"kind" yaml:"kind" want:"append or idempotent"`
	// FailureProbability is the chance that a batch's write fails and the
	// batch is retried.
	FailureProbability float64 `json:"failureProbability" yaml:"failureProbability" want:"a probability from 0 to below 1"`
}

// FaultKind names a fault.
type FaultKind string

// The faults a scenario may inject.
const (
	// Restart stops the query and restarts it from its own checkpoint.
	Restart FaultKind = "restart"
	// LoseCheckpoint restarts the query with a new, empty checkpoint.
	LoseCheckpoint FaultKind = "lose-checkpoint"
	// BadClock injects one row into the stream, arriving at At, whose
	// event time is Skew ahead of its arrival: a new logical event with a
	// valid key, seen by every query (generators.BadClockRow).
	BadClock FaultKind = "bad-clock"
)

// Fault is one fault, at a processing-time offset from Start.
type Fault struct {
	// At is the processing-time offset from Start, within Duration.
	At interval.Duration `json:"at" yaml:"at" need:"a processing-time offset such as 1h"`
	// Kind is the fault.
	Kind FaultKind `json:"kind" yaml:"kind" want:"restart, lose-checkpoint or bad-clock" need:"restart, lose-checkpoint or bad-clock"`
	// Skew is how far ahead of its arrival a bad-clock fault's row is
	// stamped; only a bad-clock fault takes one, and it must be above 0.
	Skew interval.Duration `json:"skew,omitempty" yaml:"skew"`
}

// IsRestart reports whether the fault restarts the query (restart or
// lose-checkpoint), as opposed to a bad-clock fault, which is part of the
// stream.
func (f Fault) IsRestart() bool { return f.Kind == Restart || f.Kind == LoseCheckpoint }

// Sweep reruns every query that has a horizon (Query.IsSwept) with each
// of a list of values, taken as they are as each engine's horizon: Spark's
// watermark delay, Flink's table.exec.state.ttl, Kafka Streams' window W,
// Beam's duration d.
type Sweep struct {
	// Delay lists the values of the horizon to run every swept query with
	// (the key keeps its name from the Spark-only sweeps).
	Delay []interval.Duration `json:"delay" yaml:"delay" want:"a list of delays such as [1m, 5m, 20m]" need:"a list of delays such as [1m, 5m, 20m]"`
}

// ParseDelays parses a comma-separated list of watermark delays, such as
// "1m,5m,20m" (a sweep given on the command line). A bad one is an error
// that echoes it: "soon: want a list of non-negative durations such as
// 1m,5m,20m".
func ParseDelays(list string) (*Sweep, error) {
	sw := &Sweep{}
	for _, d := range strings.Split(list, ",") {
		v, err := interval.Parse(d)
		if errors.Is(err, interval.ErrTooLong) {
			return nil, fmt.Errorf("%s: want durations of at most %s", fileio.Quote(d), interval.MaxText)
		}
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s: want a list of non-negative durations such as 1m,5m,20m", fileio.Quote(d))
		}
		sw.Delay = append(sw.Delay, interval.Duration(v))
	}
	return sw, nil
}

// Defaults returns a scenario holding every default of docs/scenario.md.
// The required keys (name, duration, workload rate or profile, queries)
// are left empty.
func Defaults() Scenario {
	return Scenario{
		Seed:               1,
		Start:              time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Trigger:            interval.Duration(10 * time.Second),
		NoDataMicroBatches: true,
		Workload:           generators.DefaultWorkload(),
		Store:              StoreMemory,
		Sink:               Sink{Kind: SinkAppend},
	}
}

// Schema returns the generated columns (generators.Columns), in column
// order, as the chain planner sees them. Queries are planned against it.
func Schema() chain.Schema { return chain.GeneratedSchema() }

// Jobs returns the number of jobs a run of s makes: one per query, and
// with a sweep one per swept value for every query a sweep reruns
// (Query.IsSwept). A Spark query that does not parse counts once.
func (s *Scenario) Jobs() int {
	n := 0
	for _, q := range s.Queries {
		if s.Sweep != nil && len(s.Sweep.Delay) > 0 && q.IsSwept() {
			n += len(s.Sweep.Delay)
		} else {
			n++
		}
	}
	return n
}

// hasWatermark reports whether query parses and has a withWatermark.
func hasWatermark(query string) bool {
	c, err := chain.Parse(query)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(c.Ops, func(op chain.Op) bool { return op.Kind == chain.WithWatermark })
}
