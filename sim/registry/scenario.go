package registry

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines"
	ebeam "github.com/dedupsim/dedupsim/engines/beam"
	"github.com/dedupsim/dedupsim/engines/fileio"
	eflink "github.com/dedupsim/dedupsim/engines/flink"
	"github.com/dedupsim/dedupsim/engines/interval"
	ekstreams "github.com/dedupsim/dedupsim/engines/kstreams"
	"github.com/dedupsim/dedupsim/sim/beam"
	"github.com/dedupsim/dedupsim/sim/flink"
	"github.com/dedupsim/dedupsim/sim/kstreams"
)

// ScenarioOperator is an engine's dedup operator as a scenario's job runs
// it: the generated rows one at a time, in arrival order, each at its
// processing time.
type ScenarioOperator interface {
	// Process feeds one row at processing time procMs (its arrival) with
	// event time eventMs: key encodes its key columns, value the whole
	// row. It returns the row's outcome and the number of rows the
	// operator emitted for it.
	Process(key, value []byte, procMs, eventMs int64) (engines.Outcome, int)
	// State returns the operator's state entries at processing time
	// procMs: logical (not expired) and physical (still held).
	State(procMs int64) (logical, physical int64)
	// Function names the engine's runtime function.
	Function() string
	// Counters returns the engine's own cumulative counters, as of the
	// last State call, always in the same order; nil when it has none.
	Counters() []Counter
}

// Counter is one of an engine's own counters (Kafka Streams'
// dropped-records-total, Beam's fired timers).
type Counter struct {
	Name  string
	Value int64
}

// ScenarioQuery is one of an engine's queries, resolved for a scenario.
type ScenarioQuery struct {
	// Keys are the generated columns that key the dedup.
	Keys []string
	// Text is the query as the results show it: the query as written, or
	// the query object `simulate explain` takes.
	Text string
	// Store names the state the engine's model keeps, for the summary.
	Store string
	// Warnings are the pitfalls the engine's explain reports, without
	// their "warning: " prefix.
	Warnings []string
	// NewOperator returns a fresh operator.
	NewOperator func() (ScenarioOperator, error)
	// Horizon is how long the query remembers a key, by its engine's
	// own name for it (Flink's TTL, Kafka Streams' window W, Beam's
	// duration d), for the reports.
	Horizon Horizon
	// NoKeySplit, when set, says why a run split by key (run --shard)
	// cannot split the query; "" when it can (as far as its engine goes).
	NoKeySplit string
	// Mechanism says in a clause how the query forgets a key, by its
	// engine's rule ("remembers a key for its TTL of processing time
	// ..."), for the reports' comparison of engines.
	Mechanism string
}

// Horizon is a query's horizon by its own name: Name is the engine's word
// for it ("TTL", "W", "d"), Value how long (nil: the query never forgets a
// key, as Flink without a TTL or Kafka Streams' keep-last).
type Horizon struct {
	Name  string
	Value *time.Duration
}

// QuerySpec is a scenario query's engine keys, as the scenario gives
// them: an unset key is "" or nil.
type QuerySpec struct {
	// Query and Options are a Flink query's SQL and options.
	Query   string
	Options map[string]string
	// Window and Time are a Kafka Streams query's window W and time base;
	// Partitions its partition count (nil: one).
	Window     *time.Duration
	Time       string
	Partitions *int64
	// Punctuate is a Kafka Streams wall-clock query's punctuation
	// interval P (nil: unset).
	Punctuate *time.Duration
	// Mode and Form are a Kafka Streams query's dedup ("keep-first", the
	// default, or "keep-last") and keep-last's form ("toTable", the
	// default, or "reduce").
	Mode, Form string
	// TimeDomain and Duration are a Beam query's; FixedWindow its fixed
	// windows' size (nil: the global window) and AllowedLateness their
	// allowed lateness (nil: 0).
	TimeDomain      string
	Duration        *time.Duration
	FixedWindow     *time.Duration
	AllowedLateness *time.Duration
}

// KeyError is a problem with one key of a scenario query.
type KeyError struct {
	// Key is the query's key ("window", "time", ...).
	Key string
	Err error
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// scenarioEngine is the scenario part of an engine.
type scenarioEngine struct {
	name string
	// title names the engine in messages.
	title string
	// keys are the query keys the engine takes, besides name and engine.
	keys []string
	// state says what keeps the engine's state in its model; store
	// names it in the summary.
	state string
	store string
	// defaults are the values of the keys a query leaves out.
	defaults QuerySpec
	resolve  func(QuerySpec) (ScenarioQuery, error)
	// horizon is the key a sweep sets (HorizonKey); withHorizon returns
	// the spec with it set to a swept value.
	horizon     string
	withHorizon func(QuerySpec, time.Duration) (QuerySpec, error)
	// noKeySplit says why no query of the engine can be split by key
	// (run --shard), "" when its queries can (as far as their keys go):
	// its operator then sees every part's rows on its clocks.
	noKeySplit string
}

func scenarioEngines() []scenarioEngine {
	return []scenarioEngine{
		{name: flink.Engine, title: "Flink", keys: []string{"query", "options"}, state: "Flink's heap backend", store: "heap", resolve: flinkQuery,
			horizon: "options." + flink.OptStateTTL, withHorizon: flinkHorizon,
			noKeySplit: "the Flink heap state backend cleans expired entries incrementally, a few of every key's entries at each access, and sizes its table by every key's entries, so its physical state and bytes are not the sum of the parts' (and a rowtime keep-first of 2.1+ or a mini-batch waits for a watermark or a bundle made of every key's rows)"},
		{name: kstreams.Engine, title: "Kafka Streams", keys: []string{"window", "time", "partitions", "mode", "form", "punctuate"}, state: "a persistent (RocksDB) window store", store: "rocksdb-window-store",
			defaults: QuerySpec{Time: "stream"}, resolve: kstreamsQuery,
			horizon: "window", withHorizon: func(spec QuerySpec, d time.Duration) (QuerySpec, error) {
				if err := kstreamsNoHorizon(spec); err != nil {
					return spec, err
				}
				spec.Window = &d
				return spec, nil
			}},
		{name: beam.Engine, title: "Beam", keys: []string{"timeDomain", "duration", "window", "allowedLateness"}, state: "the DirectRunner's in-memory state", store: "direct-runner",
			defaults: QuerySpec{TimeDomain: "processing", Duration: &beamDefaultDuration}, resolve: beamQuery,
			horizon: "duration", withHorizon: func(spec QuerySpec, d time.Duration) (QuerySpec, error) { spec.Duration = &d; return spec, nil }},
	}
}

// beamDefaultDuration is Deduplicate's default duration; ScenarioDefaults
// hands out copies.
var beamDefaultDuration = time.Duration(ebeam.DefaultDuration) * time.Millisecond

func scenarioEngineFor(engine string) (scenarioEngine, bool) {
	i := slices.IndexFunc(scenarioEngines(), func(e scenarioEngine) bool { return e.name == engine })
	if i < 0 {
		return scenarioEngine{}, false
	}
	return scenarioEngines()[i], true
}

// ScenarioEngines returns the engines a scenario's queries may name
// besides Spark.
func ScenarioEngines() []string {
	var out []string
	for _, e := range scenarioEngines() {
		out = append(out, e.name)
	}
	return out
}

// ScenarioInfo is what the scenario loader needs to know of an engine
// besides Spark.
type ScenarioInfo struct {
	// Title names the engine in messages ("Kafka Streams").
	Title string
	// Keys are the query keys the engine's queries take, besides name
	// and engine.
	Keys []string
	// State says what keeps the engine's state in its model.
	State string
}

// ScenarioInfoFor returns the scenario part of engine (not Spark); ok is
// false for an engine scenarios cannot run.
func ScenarioInfoFor(engine string) (info ScenarioInfo, ok bool) {
	e, ok := scenarioEngineFor(engine)
	return ScenarioInfo{Title: e.title, Keys: e.keys, State: e.state}, ok
}

// ScenarioDefaults returns the values engine's queries take for the keys
// a scenario leaves out: Kafka Streams' time (stream), Beam's timeDomain
// (processing) and duration (10 minutes, Deduplicate's default); the
// zero QuerySpec for another engine.
func ScenarioDefaults(engine string) QuerySpec {
	e, _ := scenarioEngineFor(engine)
	def := e.defaults
	// Copies: the caller may change what they point to.
	for _, p := range []**time.Duration{&def.Window, &def.Duration} {
		if *p != nil {
			d := **p
			*p = &d
		}
	}
	return def
}

// ScenarioQueryFor resolves the query of a scenario whose engine key is
// engine (not Spark, whose queries sim/spark/chain plans) from its keys.
// A problem with one key is a *KeyError (several are joined); a problem
// with a Flink query's SQL or options is a plain error. An engine the
// harness cannot run is an error saying so.
func ScenarioQueryFor(engine string, spec QuerySpec) (ScenarioQuery, error) {
	if engine == Spark {
		return ScenarioQuery{}, fmt.Errorf("a Spark query is planned by sim/spark/chain, not resolved here")
	}
	e, ok := scenarioEngineFor(engine)
	if !ok {
		if _, err := Lookup(engine); err != nil {
			return ScenarioQuery{}, err
		}
		return ScenarioQuery{}, fmt.Errorf("engine %s is not yet supported in scenarios: want spark, %s", engine, strings.Join(ScenarioEngines(), ", "))
	}
	sq, err := e.resolve(spec)
	if err != nil {
		return ScenarioQuery{}, err
	}
	sq.Store = cmp.Or(sq.Store, e.store)
	sq.NoKeySplit = cmp.Or(sq.NoKeySplit, e.noKeySplit)
	return sq, nil
}

// NoHorizon returns why the query of engine whose keys are spec has no
// horizon a sweep or plan could set, or nil when it has one: a Kafka
// Streams keep-last query keeps every key forever and forwards every
// copy, so no window applies and no value meets a missed-duplicate
// target (as a Flink keep-last query's +U at any TTL).
func NoHorizon(engine string, spec QuerySpec) error {
	if engine == kstreams.Engine {
		return kstreamsNoHorizon(spec)
	}
	return nil
}

func kstreamsNoHorizon(spec QuerySpec) error {
	if spec.Mode != "keep-last" {
		return nil
	}
	return errors.New("a keep-last (toTable, reduce) query has no window to sweep or plan: its table keeps every key forever and forwards every copy, so missed duplicates are every copy after the first at any window (unreachable, as Flink keep-last at any TTL)")
}

// HorizonKey returns the key of engine's queries that a sweep sets to
// each swept value (SweptQueryFor): Flink's options.table.exec.state.ttl,
// Kafka Streams' window, Beam's duration; "" for Spark (the delay of
// every withWatermark, set by the runner) and an unknown engine.
func HorizonKey(engine string) string {
	e, _ := scenarioEngineFor(engine)
	return e.horizon
}

// SweptQueryFor resolves the query of engine (not Spark) whose keys are
// spec with its horizon (HorizonKey) set to d, a swept value taken as it
// is: the TTL, the window W or the duration d. A value the engine refuses
// is a *KeyError on the horizon key, as ScenarioQueryFor reports it (a
// Kafka Streams window or a Beam duration below 1 ms); so is a Flink TTL
// of 0, which Flink reads as no TTL at all (state kept forever), not as
// the shortest horizon.
func SweptQueryFor(engine string, spec QuerySpec, d time.Duration) (ScenarioQuery, error) {
	e, ok := scenarioEngineFor(engine)
	if !ok {
		return ScenarioQueryFor(engine, spec)
	}
	spec, err := e.withHorizon(spec, d)
	if err != nil {
		return ScenarioQuery{}, &KeyError{Key: e.horizon, Err: err}
	}
	return ScenarioQueryFor(engine, spec)
}

// flinkHorizon sets table.exec.state.ttl to d, in a copy of the options.
func flinkHorizon(spec QuerySpec, d time.Duration) (QuerySpec, error) {
	if d <= 0 {
		return spec, fmt.Errorf("must be above 0 in a sweep (a TTL of 0 turns state expiry off: every key kept forever), got %s", interval.Format(d))
	}
	if d%time.Millisecond != 0 {
		return spec, fmt.Errorf("must be a whole number of milliseconds, got %s", d)
	}
	opts := make(map[string]string, len(spec.Options)+1)
	for k, v := range spec.Options {
		opts[k] = v
	}
	opts[flink.OptStateTTL] = flink.FormatDuration(d.Milliseconds())
	spec.Options = opts
	return spec, nil
}

func flinkQuery(spec QuerySpec) (ScenarioQuery, error) {
	sq, err := flink.ParseScenarioQuery(spec.Query, spec.Options)
	if err != nil {
		return ScenarioQuery{}, err
	}
	h := Horizon{Name: "TTL"}
	if sq.Config.TTL > 0 {
		d := time.Duration(sq.Config.TTL) * time.Millisecond
		h.Value = &d
	}
	warn := []string{}
	if sq.Config.Function() == eflink.RowTimeKeepFirstInsertOnly {
		// What explain says of the function (its "emits" line), as the
		// warning the report lists: late rows are lost, not deduplicated.
		warn = append(warn, fmt.Sprintf("%s drops every row whose rowtime is below the watermark (numLateRecordsDropped): "+
			"a first copy arriving more than the watermark delay (%d ms) behind the newest rowtime is lost, not emitted", eflink.RowTimeKeepFirstInsertOnly.ClassName(), sq.Watermark.Delay))
	}
	store := "" // the engine's default: heap
	if sq.Config.RocksDB {
		store = "rocksdb"
	}
	return ScenarioQuery{Keys: sq.Keys, Text: spec.Query, Store: store, Horizon: h, Warnings: warn, Mechanism: flinkMechanism(sq), NewOperator: func() (ScenarioOperator, error) {
		op, err := sq.NewOperator()
		if err != nil {
			return nil, err
		}
		if op.Defers() {
			return &flinkDeferringOperator{flinkOperator: flinkOperator{op: op}}, nil
		}
		return &flinkOperator{op: op}, nil
	}}, nil
}

// flinkOperator runs a Flink query: processing time is the row's arrival
// (the TTL clock), the rowtime its event time. Its counters are the
// changelog rows emitted by kind (sim/flink's Changelog), and the 2.1+
// rowtime keep-first's numLateRecordsDropped.
type flinkOperator struct {
	op       *flink.ScenarioOperator
	counters [4]Counter
}

func (f *flinkOperator) Process(key, value []byte, procMs, eventMs int64) (engines.Outcome, int) {
	return f.op.Process(key, value, procMs, eventMs)
}
func (f *flinkOperator) State(procMs int64) (logical, physical int64) { return f.op.State(procMs) }
func (f *flinkOperator) Function() string                             { return f.op.Function() }
func (f *flinkOperator) Counters() []Counter {
	c := f.op.Changelog()
	f.counters = [4]Counter{{"insertsEmitted", c.Inserts}, {"updatesEmitted", c.Updates}, {"retractionsEmitted", c.Retractions}}
	if !f.op.CountsLate() {
		return f.counters[:3]
	}
	f.counters[3] = Counter{"numLateRecordsDropped", f.op.LateDropped()}
	return f.counters[:]
}

// Verdict is the outcome of a row that came after the row (a row waiting
// for the watermark): Row numbers the rows from 1 in the order fed.
type Verdict struct {
	Row     int
	Outcome engines.Outcome
}

// flinkDeferringOperator runs the 2.1+ rowtime keep-first, whose rows
// wait for the watermark, or a proctime mini-batch function, whose rows
// wait for their bundle's flush: the runner opens its timer, takes the
// verdicts of waiting rows as they come and ends its input.
type flinkDeferringOperator struct {
	flinkOperator
	buf []flink.Verdict
}

// Open starts the watermark assigner's timer at procMs.
func (f *flinkDeferringOperator) Open(procMs int64) { f.op.Open(procMs) }

// Deferred reports whether the last row fed waits for its verdict.
func (f *flinkDeferringOperator) Deferred() bool { return f.op.Deferred() }

// LateAhead reports whether the last row fed was dropped late behind a
// watermark ahead of its arrival minus the delay (a bad clock's doing).
func (f *flinkDeferringOperator) LateAhead() bool { return f.op.LateAhead() }

// Verdicts appends the verdicts reached since the last call to dst.
func (f *flinkDeferringOperator) Verdicts(dst []Verdict) []Verdict {
	f.buf = f.op.Verdicts(f.buf[:0])
	for _, v := range f.buf {
		dst = append(dst, Verdict(v))
	}
	return dst
}

// End ends the input at procMs: every waiting row gets its verdict.
func (f *flinkDeferringOperator) End(procMs int64) { f.op.End(procMs) }

// StateBytes is the Flink heap backend's modelled bytes (sim/flink), which
// the runner reads through its stateBytesOperator.
func (f *flinkOperator) StateBytes() (total, perEntry int64) { return f.op.StateBytes() }

// millis returns d in whole milliseconds; a nil d is a missing key, what
// says how to set it.
func millis(key string, d *time.Duration, what string) (int64, error) {
	if d == nil {
		return 0, &KeyError{Key: key, Err: fmt.Errorf("must be set to %s", what)}
	}
	if *d%time.Millisecond != 0 {
		return 0, &KeyError{Key: key, Err: fmt.Errorf("must be a whole number of milliseconds, got %s", *d)}
	}
	return d.Milliseconds(), nil
}

// eventID is the key of the Kafka Streams and Beam queries: the record
// key, the element's key.
var eventID = []string{"event_id"}

func kstreamsQuery(spec QuerySpec) (ScenarioQuery, error) {
	switch spec.Mode {
	case "", "keep-first":
		if spec.Form != "" {
			return ScenarioQuery{}, &KeyError{Key: "form", Err: fmt.Errorf("must be left out of a keep-first query (only keep-last takes a form: toTable or reduce), got %s", fileio.Show(spec.Form))}
		}
	case "keep-last":
		return kstreamsKeepLast(spec)
	default:
		return ScenarioQuery{}, &KeyError{Key: "mode", Err: fmt.Errorf("must be keep-first (the window-store processor, the default) or keep-last (toTable or reduce), got %s", fileio.Show(spec.Mode))}
	}
	if spec.FixedWindow != nil {
		return ScenarioQuery{}, &KeyError{Key: "window", Err: fmt.Errorf("must be a duration, the window store's retention and window size W such as 2 minutes, got {fixed: %s} (a beam query's fixed windows)", interval.Format(*spec.FixedWindow))}
	}
	var errs []error
	w, err := millis("window", spec.Window, "the window store's retention and window size W, such as 2 minutes")
	if err == nil {
		if err = kstreams.CheckWindow(w); err != nil {
			err = &KeyError{Key: "window", Err: fmt.Errorf("%v, got %s", err, interval.Format(*spec.Window))}
		}
	}
	errs = append(errs, err)
	base, err := kstreams.ParseTime(cmp.Or(spec.Time, ScenarioDefaults(kstreams.Engine).Time))
	if err != nil {
		errs = append(errs, &KeyError{Key: "time", Err: fmt.Errorf("must be stream (the task's stream time), record (the record's timestamp) or wall-clock (a key-value store purged by a wall-clock punctuation), got %s", fileio.Show(spec.Time))})
	}
	if err == nil && base == ekstreams.WallClock {
		return kstreamsWallClock(spec, w, errs)
	}
	if spec.Punctuate != nil {
		errs = append(errs, &KeyError{Key: "punctuate", Err: fmt.Errorf("must be left out unless time is wall-clock (only the wall-clock pattern punctuates), got %s", interval.Format(*spec.Punctuate))})
	}
	partitions := int64(1)
	if spec.Partitions != nil {
		partitions = *spec.Partitions
		if err := kstreams.CheckPartitions(partitions); err != nil {
			errs = append(errs, &KeyError{Key: "partitions", Err: fmt.Errorf("%v, got %d", err, partitions)})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ScenarioQuery{}, err
	}
	t := kstreams.ScenarioQuery(w, base, int(partitions))
	wd := time.Duration(w) * time.Millisecond
	mech := "remembers a key for W of stream time (the largest timestamp its task has seen), in segments dropped whole once older; a record of an expired segment is dropped, its key never remembered"
	if base == ekstreams.RecordTime {
		mech = "remembers a key for W of the record's own timestamp: a copy stamped W later than the first misses it, one stamped earlier looks up a window that may be gone"
	}
	return ScenarioQuery{Keys: eventID, Text: t.QueryText(), Warnings: warnings(t.Explain()), Horizon: Horizon{Name: "W", Value: &wd}, Mechanism: mech, NewOperator: func() (ScenarioOperator, error) {
		op, err := t.NewScenarioOperator()
		if err != nil {
			return nil, err
		}
		return &kstreamsOperator{op: op}, nil
	}}, nil
}

// kstreamsWallClock resolves a wall-clock query (window w ms, resolved
// by the caller with its error in errs): one task, a key-value store
// purged every punctuate of wall clock, the wall clock being the rows'
// arrival.
func kstreamsWallClock(spec QuerySpec, w int64, errs []error) (ScenarioQuery, error) {
	var p int64
	if spec.Punctuate == nil {
		errs = append(errs, &KeyError{Key: "punctuate", Err: errors.New("missing: a wall-clock query's punctuation interval P, such as 30s (the punctuator that deletes the keys W old)")})
	} else {
		var err error
		p, err = millis("punctuate", spec.Punctuate, "")
		if err == nil {
			if err = kstreams.CheckPunctuate(p); err != nil {
				err = &KeyError{Key: "punctuate", Err: err}
			}
		}
		errs = append(errs, err)
	}
	if spec.Partitions != nil && *spec.Partitions != 1 {
		errs = append(errs, &KeyError{Key: "partitions", Err: fmt.Errorf("must be left out of a wall-clock query (its tasks share the wall clock and their punctuations: partitions change nothing), got %d", *spec.Partitions)})
	}
	if err := errors.Join(errs...); err != nil {
		return ScenarioQuery{}, err
	}
	t := kstreams.ScenarioWallClock(w, p)
	wd := time.Duration(w) * time.Millisecond
	mech := fmt.Sprintf("remembers a key from W to W + %s of wall-clock time (the rows' arrival) after its first copy: a punctuation every %s deletes the keys W old, whatever the stream's time", interval.Format(time.Duration(p)*time.Millisecond), interval.Format(time.Duration(p)*time.Millisecond))
	return ScenarioQuery{Keys: eventID, Text: t.QueryText(), Store: "rocksdb-kv-store", Warnings: warnings(t.Explain()), Horizon: Horizon{Name: "W", Value: &wd}, Mechanism: mech,
		NoKeySplit: "its wall-clock punctuation fires on a schedule of the whole task, in every part alike, so the parts' punctuations counters would not sum to the run's", NewOperator: func() (ScenarioOperator, error) {
			op, err := t.NewScenarioOperator()
			if err != nil {
				return nil, err
			}
			return &kstreamsOperator{op: op}, nil
		}}, nil
}

// kstreamsKeepLast resolves a keep-last query: toTable (the default) or
// reduce, one task, no window. Its time may only be the default (stream):
// the table's stream time decides nothing.
func kstreamsKeepLast(spec QuerySpec) (ScenarioQuery, error) {
	var errs []error
	const why = "keep-last (toTable, reduce) keeps every key forever"
	if spec.Window != nil || spec.FixedWindow != nil {
		got := "{fixed: ...}"
		if spec.Window != nil {
			got = interval.Format(*spec.Window)
		}
		errs = append(errs, &KeyError{Key: "window", Err: fmt.Errorf("must be left out of a keep-last query (%s: no window), got %s", why, got)})
	}
	if spec.Time != "" && spec.Time != "stream" {
		errs = append(errs, &KeyError{Key: "time", Err: fmt.Errorf("must be left out of a keep-last query (%s: no lookup time), got %s", why, fileio.Show(spec.Time))})
	}
	if spec.Punctuate != nil {
		errs = append(errs, &KeyError{Key: "punctuate", Err: fmt.Errorf("must be left out of a keep-last query (%s: nothing to purge), got %s", why, interval.Format(*spec.Punctuate))})
	}
	if spec.Partitions != nil {
		errs = append(errs, &KeyError{Key: "partitions", Err: fmt.Errorf("must be left out of a keep-last query (only keep-first, the window-store pattern, takes partitions), got %d", *spec.Partitions)})
	}
	reduce := false
	switch spec.Form {
	case "", "toTable":
	case "reduce":
		reduce = true
	default:
		errs = append(errs, &KeyError{Key: "form", Err: fmt.Errorf("must be toTable (stream.toTable, the default) or reduce (groupByKey().reduce), got %s", fileio.Show(spec.Form))})
	}
	if err := errors.Join(errs...); err != nil {
		return ScenarioQuery{}, err
	}
	t := kstreams.ScenarioKeepLast(reduce)
	return ScenarioQuery{Keys: eventID, Text: t.QueryText(), Store: "rocksdb-kv-store", Warnings: warnings(t.Explain()), Horizon: Horizon{Name: "W"},
		Mechanism: "keeps the last row of every key in a table forever and forwards every copy as an update", NewOperator: func() (ScenarioOperator, error) {
			op, err := t.NewScenarioOperator()
			if err != nil {
				return nil, err
			}
			return &kstreamsOperator{op: op}, nil
		}}, nil
}

// kstreamsOperator runs a Kafka Streams query on its tasks (one per
// partition); the record's timestamp is the row's event time.
type kstreamsOperator struct {
	op       *kstreams.ScenarioOperator
	counters [1]Counter
}

func (k *kstreamsOperator) Process(key, _ []byte, procMs, eventMs int64) (engines.Outcome, int) {
	if o := k.op.ProcessAt(key, procMs, eventMs); o != engines.Emitted {
		return o, 0
	}
	return engines.Emitted, 1
}
func (k *kstreamsOperator) State(procMs int64) (logical, physical int64) {
	return k.op.StateAt(procMs)
}

// Observe moves the record's task's clocks without processing it (a run
// split by key: another part's record).
func (k *kstreamsOperator) Observe(key, _ []byte, _, eventMs int64) { k.op.Observe(key, eventMs) }
func (k *kstreamsOperator) Function() string                        { return k.op.Function() }
func (k *kstreamsOperator) Counters() []Counter {
	if k.op.KeepLast() {
		return nil // a table drops no record: no counter of its own
	}
	if k.op.WallClock() {
		// No window store, so no dropped records: the punctuations fired.
		k.counters = [1]Counter{{"punctuations", k.op.Punctuations()}}
		return k.counters[:]
	}
	k.counters = [1]Counter{{"droppedRecordsTotal", k.op.DroppedRecords()}}
	return k.counters[:]
}

func beamQuery(spec QuerySpec) (ScenarioQuery, error) {
	var errs []error
	def := ScenarioDefaults(beam.Engine)
	spec.Duration = cmp.Or(spec.Duration, def.Duration)
	d, err := millis("duration", spec.Duration, "")
	if err == nil {
		if err = beam.CheckDuration(d); err != nil {
			err = &KeyError{Key: "duration", Err: fmt.Errorf("%v, got %s", err, interval.Format(*spec.Duration))}
		}
	}
	errs = append(errs, err)
	domain, err := beam.ParseTimeDomain(cmp.Or(spec.TimeDomain, def.TimeDomain))
	if err != nil {
		errs = append(errs, &KeyError{Key: "timeDomain", Err: fmt.Errorf("must be processing (Beam's default) or event, got %s", fileio.Show(spec.TimeDomain))})
	}
	var window, lateness int64
	badWindow := spec.Window != nil
	if spec.Window != nil {
		errs = append(errs, &KeyError{Key: "window", Err: fmt.Errorf("must be {fixed: DURATION} for a beam query (fixed windows of that size; left out, the global window), got %s", interval.Format(*spec.Window))})
	}
	if spec.FixedWindow != nil {
		w, err := millis("window", spec.FixedWindow, "")
		if err == nil && w < 1 {
			err = &KeyError{Key: "window", Err: fmt.Errorf("fixed: the window size must be at least 1 ms, got %s", interval.Format(*spec.FixedWindow))}
		}
		errs = append(errs, err)
		window, badWindow = w, err != nil
	}
	if spec.AllowedLateness != nil && !badWindow {
		l, err := millis("allowedLateness", spec.AllowedLateness, "")
		if err == nil {
			if err = beam.CheckLateness(l, window); err != nil {
				err = &KeyError{Key: "allowedLateness", Err: fmt.Errorf("%v, got %s", err, interval.Format(*spec.AllowedLateness))}
			}
		}
		errs = append(errs, err)
		lateness = l
	}
	if err := errors.Join(errs...); err != nil {
		return ScenarioQuery{}, err
	}
	t := beam.ScenarioQuery(domain, d, window, lateness)
	dd := time.Duration(d) * time.Millisecond
	mech := "a processing-time timer clears a key d after its first copy arrived"
	if domain == ebeam.EventTime {
		mech = "an event-time timer clears a key once the input watermark passes its first copy's timestamp + d"
	}
	if window > 0 {
		mech += ", per fixed window (a copy in the next window is a new key)"
	}
	return ScenarioQuery{Keys: eventID, Text: t.QueryText(), Warnings: warnings(t.Explain()), Horizon: Horizon{Name: "d", Value: &dd}, Mechanism: mech, NewOperator: func() (ScenarioOperator, error) {
		op, err := t.NewScenarioOperator()
		if err != nil {
			return nil, err
		}
		if op.Fixed() {
			return &beamFixedOperator{beamOperator: beamOperator{op: op}}, nil
		}
		return &beamOperator{op: op}, nil
	}}, nil
}

// beamFixedOperator runs a Beam query in fixed windows, which drops the
// elements of a window already gone as late. It takes the runner's
// deferring path for one thing only, the cause of each late drop
// (LateAhead: behind a watermark ahead of the arrival, a bad clock's
// doing): it decides every element when it is fed, so nothing waits and
// no verdict comes later. Its counters add DroppedDueToLateness.
type beamFixedOperator struct {
	beamOperator
	fixedCounters [2]Counter
}

func (b *beamFixedOperator) Open(int64)                       {}
func (b *beamFixedOperator) Deferred() bool                   { return false }
func (b *beamFixedOperator) LateAhead() bool                  { return b.op.LateAhead() }
func (b *beamFixedOperator) Verdicts(dst []Verdict) []Verdict { return dst }
func (b *beamFixedOperator) End(int64)                        {}
func (b *beamFixedOperator) Counters() []Counter {
	b.fixedCounters = [2]Counter{{"timersFired", b.op.TimersFired()}, {"droppedDueToLateness", b.op.DroppedLate()}}
	return b.fixedCounters[:]
}

// beamOperator runs a Beam query: processing time is the row's arrival,
// the element's timestamp its event time.
type beamOperator struct {
	op       *beam.ScenarioOperator
	counters [1]Counter
}

func (b *beamOperator) Process(key, _ []byte, procMs, eventMs int64) (engines.Outcome, int) {
	if o := b.op.Process(key, procMs, eventMs); o != engines.Emitted {
		return o, 0
	}
	return engines.Emitted, 1
}
func (b *beamOperator) State(procMs int64) (logical, physical int64) { return b.op.State(procMs) }

// Observe moves the clocks without processing the element (a run split
// by key: another part's element).
func (b *beamOperator) Observe(_, _ []byte, procMs, eventMs int64) { b.op.Observe(procMs, eventMs) }
func (b *beamOperator) Function() string                           { return b.op.Function() }
func (b *beamOperator) Counters() []Counter {
	b.counters = [1]Counter{{"timersFired", b.op.TimersFired()}}
	return b.counters[:]
}

// warnings returns the lines of an explanation that start "warning: ",
// without it.
func warnings(lines []string) []string {
	out := []string{}
	for _, l := range lines {
		if w, ok := strings.CutPrefix(l, "warning: "); ok {
			out = append(out, w)
		}
	}
	return out
}

// flinkMechanism says how a Flink query forgets a key, by its runtime
// function's rule (docs/flink.md, Rules).
func flinkMechanism(sq flink.ScenarioQuery) string {
	fn := sq.Config.Function()
	var keep string
	switch fn {
	case eflink.ProcTimeKeepFirst, eflink.ProcTimeMiniBatchKeepFirst:
		keep = "keeps the first row of a key (processing time order; no event time is read)"
	case eflink.ProcTimeKeepLast, eflink.ProcTimeMiniBatchKeepLast:
		keep = "keeps the last row of a key and emits every later copy as an update"
	case eflink.RowTimeKeepFirstInsertOnly:
		keep = "emits a key's earliest row once the watermark passes it, dropping rows behind the watermark"
	default:
		keep = "keeps the row of a key by its rowtime and emits a better one as an update"
	}
	if sq.Config.TTL == 0 {
		return keep + ", and never forgets a key (no TTL)"
	}
	return keep + ", and forgets it a TTL of processing time after its state was last written"
}
