package scenario

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/registry"
	"github.com/dedupsim/dedupsim/sim/stores"
)

// Validate checks every value of s and returns every problem, one Error
// each, joined with errors.Join (nil when s is valid). It checks queries by
// parsing and planning them with sim/spark/chain against Schema.
func (s *Scenario) Validate() error {
	p := &problems{file: s.File}
	s.collect(defaultOptions(), p)
	return p.err()
}

// collect runs every check, adding to p; problems at paths p marks broken
// are left out (the decoder has reported those already).
func (s *Scenario) collect(opt options, p *problems) {
	switch {
	case s.Name == "":
		p.add("name", "must be set to a name for the results folder, got nothing")
	case !fileSafe(s.Name):
		p.add("name", "must be %s, got %s", fileSafeWant, fileio.Show(s.Name))
	}
	g := s.Generator()
	for _, pr := range g.Check() {
		p.add(pr.Path, "%s", pr.Msg)
	}
	s.checkQueries(p, opt)
	s.checkEventColumns(p)
	if !slices.Contains(stores.Names(), s.Store) {
		p.add("store", "must be one of %s, got %s", strings.Join(stores.Names(), ", "), fileio.Show(s.Store))
	}
	if s.Sink.Kind != SinkAppend && s.Sink.Kind != SinkIdempotent {
		p.add("sink.kind", "must be one of append, idempotent, got %s", fileio.Show(s.Sink.Kind))
	}
	if fp := s.Sink.FailureProbability; !(fp >= 0 && fp < 1) {
		p.add("sink.failureProbability", "must be at least 0 and below 1 (a failed batch is retried until it succeeds), got %g", fp)
	}
	s.checkFaults(p)
	s.checkLimits(p)
	s.checkSpark(p)
}

// CheckName returns an error saying what a scenario's name must be, or nil
// when name is one (it names files: a command given a name to write a
// scenario under checks it before writing).
func CheckName(name string) error {
	if fileSafe(name) {
		return nil
	}
	return fmt.Errorf("want %s, got %s", fileSafeWant, fileio.Show(name))
}

// fileSafe reports whether name can be a file or folder name on every
// system: letters, digits, '.', '_' and '-', starting with a letter or a
// digit, at most 100 bytes.
func fileSafe(name string) bool {
	if name == "" || len(name) > 100 {
		return false
	}
	for i, r := range name {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._-", r)) {
			return false
		}
	}
	return true
}

const fileSafeWant = "a name of letters, digits, '.', '_' and '-' that starts with a letter or a digit (it names files)"

func (s *Scenario) checkQueries(p *problems, opt options) {
	if len(s.Queries) == 0 {
		p.add("queries", "must list at least one query {name, query}, got none")
		return
	}
	first := map[string]int{}
	engineQuery := -1 // the first query of an engine other than Spark
	for i, q := range s.Queries {
		path := index("queries", i)
		switch lower := strings.ToLower(q.Name); {
		case q.Name == "":
			p.add(key(path, "name"), "must be set to %s, got nothing", fileSafeWant)
		case !fileSafe(q.Name):
			p.add(key(path, "name"), "must be %s, got %s", fileSafeWant, fileio.Show(q.Name))
		case first[lower] > 0:
			p.add(key(path, "name"), "must be unique, ignoring case (it names files), got %s as queries[%d].name already is", fileio.Show(q.Name), first[lower]-1)
		default:
			first[lower] = i + 1
		}
		if q.Store != "" && !slices.Contains(stores.Names(), q.Store) {
			p.add(key(path, "store"), "must be one of %s (or left out for the scenario's store), got %s", strings.Join(stores.Names(), ", "), fileio.Show(q.Store))
		}
		switch {
		case q.IsSpark():
			for _, k := range q.engineKeys() {
				if k != "query" {
					p.add(key(path, k), "must be left out for a Spark query (only a %s query takes %s)%s", takerOf(k), k, showOptions(k, q))
				}
			}
			if strings.TrimSpace(q.Query) == "" {
				p.add(key(path, "query"), "must be set to a query such as dropDuplicates([\"event_id\"]), got nothing")
				continue
			}
			if err := opt.checkQuery(q.Query); err != nil {
				p.add(key(path, "query"), "must be a query Spark can run: %s", strings.Join(strings.Fields(err.Error()), " "))
			}
		case slices.Contains(registry.ScenarioEngines(), q.Engine):
			s.checkEngineQuery(p, path, q)
			if engineQuery < 0 {
				engineQuery = i
			}
		default:
			p.add(key(path, "engine"), "must be %s, got %s", orList(append([]string{EngineSpark}, registry.ScenarioEngines()...)), fileio.Show(q.Engine))
		}
	}
	if engineQuery >= 0 {
		s.checkEngineScenario(p, engineQuery)
	}
}

// checkEngineQuery checks the query at path, of an engine other than
// Spark: the keys its engine takes, then the query as the engine
// resolves it (registry.ScenarioQueryFor).
func (s *Scenario) checkEngineQuery(p *problems, path string, q Query) {
	info, _ := registry.ScenarioInfoFor(q.Engine)
	keys := info.Keys
	if q.Store != "" {
		p.add(key(path, "store"), "must be left out for a %s query (its state is %s, in the model), got %s", q.Engine, info.State, fileio.Show(q.Store))
	}
	bad := false
	for _, k := range q.engineKeys() {
		if !slices.Contains(keys, k) {
			p.add(key(path, k), "must be left out for a %s query (it takes %s)", q.Engine, andList(keys))
			bad = true
		}
	}
	if slices.Contains(keys, "query") && strings.TrimSpace(q.Query) == "" {
		p.add(key(path, "query"), "must be set to a query such as dropDuplicates([\"event_id\"]), got nothing")
		return
	}
	if bad {
		return
	}
	sq, err := registry.ScenarioQueryFor(q.Engine, q.Spec())
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, err := range errs {
		var ke *registry.KeyError
		switch {
		case err == nil:
		case errors.As(err, &ke):
			p.add(key(path, ke.Key), "%s", strings.Join(strings.Fields(ke.Err.Error()), " "))
		default:
			p.add(key(path, "query"), "must be a %s dedup a scenario can run: %s", info.Title, strings.Join(strings.Fields(err.Error()), " "))
		}
	}
	for _, k := range sq.Keys {
		if !slices.ContainsFunc(generators.Columns(), func(c generators.Column) bool { return c.Name == k }) {
			p.add(key(path, "query"), "must partition by generated columns (%s), got PARTITION BY %s", strings.Join(generatedNames(), ", "), k)
		}
	}
}

// takerOf returns the engine whose queries take the key k.
func takerOf(k string) string {
	for _, e := range registry.ScenarioEngines() {
		if info, _ := registry.ScenarioInfoFor(e); slices.Contains(info.Keys, k) {
			return e
		}
	}
	return "non-Spark"
}

// showOptions returns ", got KEY, KEY" for the options key of q, the
// option keys it sets; "" for another key.
func showOptions(k string, q Query) string {
	if k != "options" {
		return ""
	}
	return ", got " + strings.Join(slices.Sorted(maps.Keys(q.Options)), ", ")
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	return strings.Replace(orList(names), " or ", " and ", 1)
}

func (s *Scenario) checkFaults(p *problems) {
	for i, f := range s.Faults {
		path := index("faults", i)
		switch {
		case f.Kind == BadClock:
			// Its row is the generators': their check reports at and skew
			// (see Generator).
		case f.At <= 0:
			p.add(key(path, "at"), "must be above 0, got %s", f.At)
		case s.Duration > 0 && f.At > s.Duration:
			p.add(key(path, "at"), "must be within the duration (%s), got %s", s.Duration, f.At)
		}
		switch {
		case f.Kind != Restart && f.Kind != LoseCheckpoint && f.Kind != BadClock:
			p.add(key(path, "kind"), "must be one of restart, lose-checkpoint, bad-clock, got %s", fileio.Show(string(f.Kind)))
		case f.Kind != BadClock && f.Skew != 0:
			p.add(key(path, "skew"), "must be left out: only a bad-clock fault takes a skew, got %s for a %s fault", f.Skew, f.Kind)
		}
	}
	if s.Sweep == nil {
		return
	}
	if len(s.Sweep.Delay) == 0 {
		p.add("sweep.delay", "must list at least one delay such as [1m, 5m, 20m], got none")
	}
	for qi, q := range s.Queries {
		if err := q.NoHorizon(); err != nil {
			p.add("sweep", "cannot sweep %s (a %s query): %s", index("queries", qi), q.Engine, err)
		}
	}
	for i, d := range s.Sweep.Delay {
		path := index("sweep.delay", i)
		switch {
		case d < 0:
			p.add(path, "must be at least 0, got %s", d)
		case d%interval.Duration(time.Millisecond) != 0:
			// Sub-millisecond delays all ran as "0s" jobs.
			p.add(path, "must be a whole number of milliseconds (Spark's watermark delays are), got %s", d)
		case slices.Index(s.Sweep.Delay, d) < i:
			p.add(path, "must be listed once, got %s again", d)
		default:
			s.checkSweptValue(p, path, d)
		}
	}
}

// checkSweptValue reports, at path, each query of another engine than
// Spark that refuses d as its horizon (registry.SweptQueryFor): a Kafka
// Streams window or a Beam duration below 1 ms, a Flink TTL of 0. A
// query that is refused without the sweep is reported at its own keys
// only.
func (s *Scenario) checkSweptValue(p *problems, path string, d interval.Duration) {
	for qi, q := range s.Queries {
		if q.IsSpark() || !slices.Contains(registry.ScenarioEngines(), q.Engine) {
			continue
		}
		if _, err := registry.ScenarioQueryFor(q.Engine, q.Spec()); err != nil || q.NoHorizon() != nil {
			continue
		}
		_, err := registry.SweptQueryFor(q.Engine, q.Spec(), d.Std())
		if err == nil {
			continue
		}
		var ke *registry.KeyError
		if errors.As(err, &ke) {
			p.add(path, "sets %s of %s (a %s query), which %s", ke.Key, index("queries", qi), q.Engine, strings.Join(strings.Fields(ke.Err.Error()), " "))
		} else {
			p.add(path, "sets %s of %s (a %s query), which refuses %s: %s", registry.HorizonKey(q.Engine), index("queries", qi), q.Engine, d, strings.Join(strings.Fields(err.Error()), " "))
		}
	}
}

// The limits on what a scenario may ask for. Each keeps a run that would
// panic, exhaust memory or never finish from starting; a scenario past one
// is rejected with a line naming the limit.
const (
	// MinTrigger is the shortest trigger interval. Spark's trigger
	// intervals are whole milliseconds (Trigger.ProcessingTime(ms)), so
	// the trigger must also be a whole number of them.
	MinTrigger = interval.Duration(time.Millisecond)
	// MinHeartbeat is the shortest heartbeat interval, the trigger's
	// resolution. A heartbeat shorter than the trigger is allowed (several
	// heartbeat rows per batch; the watermark takes the batch's maximum
	// event time, so only the last one moves it), within MaxRowsPerBatch.
	MinHeartbeat = interval.Duration(time.Millisecond)
	// MaxRowsPerBatch bounds the rows one micro-batch may hold, as
	// estimated by RowsPerBatch: half a million events per second at a
	// 10 s trigger, far above what one Spark query takes per batch. The
	// batch's rows are in memory at once, with the engines' and the
	// accountant's per-row work: a batch at the limit takes a few GB of
	// resident memory for the job that runs it
	// (sim/runner/testdata/rss-batch-limit.yaml), and jobs run in
	// parallel, each with its own batch.
	MaxRowsPerBatch = 5_000_000
	// MaxJobs bounds the jobs of a run: one per query, times the sweep's
	// delays for every query with a watermark. Each job keeps its own
	// state and results, and reports draw one line per job.
	MaxJobs = 1000
)

// The range of start. Every instant of a run (event times moved up to 100
// years by a draw, or by a jitter of up to 292 years; arrivals; bad-clock
// skews) must print with a four-digit year, as RFC 3339 and Spark's
// progress print them and as timeseries.csv is read back; a start
// within these bounds leaves centuries of margin on both sides.
var (
	minStart = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxStart = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// RowsPerBatch estimates the rows of the fullest micro-batch of s and
// names the key that dominates the estimate (see
// generators.Workload.PeakRows).
func (s *Scenario) RowsPerBatch() (rows float64, path string) {
	return s.Workload.PeakRows(s.Trigger)
}

// checkLimits reports what cannot run: a start outside [minStart,
// maxStart), a trigger below MinTrigger or not in whole milliseconds, a
// heartbeat below MinHeartbeat, a rate beside a profile, a profile segment
// shorter than the trigger, more than MaxRowsPerBatch rows per batch and
// more than MaxJobs jobs. These are the executor's limits: the generators
// run on any workload their own check accepts.
func (s *Scenario) checkLimits(p *problems) {
	triggerOK := false
	switch {
	case s.Trigger <= 0:
		p.add("trigger", "must be above 0, got %s", s.Trigger)
	case s.Trigger < MinTrigger:
		p.add("trigger", "must be at least %s (Spark's trigger intervals are whole milliseconds), got %s", MinTrigger, s.Trigger)
	case s.Trigger%MinTrigger != 0:
		p.add("trigger", "must be a whole number of milliseconds (Spark's trigger intervals are), got %s", s.Trigger)
	default:
		triggerOK = true
	}
	if s.Start.Before(minStart) || !s.Start.Before(maxStart) {
		p.add("start", "must be from %s to before %s (every time of the run must print with a four-digit year), got %s",
			minStart.Format("2006-01-02"), maxStart.Format("2006-01-02"), s.Start.Format(time.RFC3339Nano))
	}
	w := &s.Workload
	if w.Heartbeat > 0 && w.Heartbeat < MinHeartbeat {
		// Below a microsecond, the generators' check has reported it.
		if w.Heartbeat >= interval.Duration(time.Microsecond) {
			p.add("workload.heartbeat", "must be 0 (off) or at least %s, got %s", MinHeartbeat, w.Heartbeat)
		}
		triggerOK = false // no estimate of rows per batch either
	}
	if w.Rate != nil && len(w.Profile) > 0 {
		p.add("workload.rate", "must not be set together with workload.profile (the profile gives the rate): remove one of them, got %s", *w.Rate)
	}
	if n := s.Jobs(); n > MaxJobs {
		path := "queries"
		if s.Sweep != nil && len(s.Sweep.Delay) > 0 && len(s.Queries) <= MaxJobs {
			path = "sweep.delay"
		}
		p.add(path, "must make at most %d jobs per run, the limit (a Spark query with a withWatermark and every query of another engine run once per sweep value, any other once), got %d jobs: split the scenario", MaxJobs, n)
	}
	if !triggerOK {
		return
	}
	for i, seg := range w.Profile {
		if seg.For > 0 && seg.For < s.Trigger {
			p.add(key(index("workload.profile", i), "for"), "must be at least the trigger (%s): a segment shorter than one batch cannot show, got %s", s.Trigger, seg.For)
		}
	}
	// The estimate needs valid rates and retries (their checks report
	// those).
	valid := func(r generators.Rate) bool { return r >= 0 && r <= generators.MaxRate }
	ok := (w.Rate == nil || valid(*w.Rate)) && w.Retries.Probability >= 0 && w.Retries.Probability <= 1
	for _, seg := range w.Profile {
		ok = ok && valid(seg.Rate)
	}
	if rows, path := s.RowsPerBatch(); ok && rows > MaxRowsPerBatch {
		est := strconv.FormatFloat(math.Ceil(rows), 'f', 0, 64)
		if rows >= 1e15 {
			est = strconv.FormatFloat(rows, 'g', 3, 64)
		}
		p.add(path, "must make at most %d rows per batch, the limit (estimated as peak rate x trigger x (1 + retries.probability x mean extra copies) + heartbeats per trigger), got about %s rows per batch at trigger %s: lower the rate or the trigger",
			MaxRowsPerBatch, est, s.Trigger)
	}
}

// Warnings returns what in s runs but probably not as meant, one line
// each in the form "KEY.PATH: message", in the order of the keys in the
// schema; nil when there is nothing to say. s is assumed valid. The
// warnings are:
//
//   - workload.profile lasts longer than duration: the profile is cut
//     where the duration ends, and its later segments never run;
//   - trigger is not shorter than duration (duration is shorter than one
//     trigger): every original arrives by the first trigger, so all the
//     traffic lands in a single batch.
//
// They do not name the file, so that summary.json (which lists them
// under "warnings") does not depend on where the scenario was read from;
// WarningLines adds it for the command line.
func (s *Scenario) Warnings() []string {
	out := s.eventWarnings()
	if s.Trigger > 0 && s.Duration > 0 && s.Trigger >= s.Duration {
		out = append(out, fmt.Sprintf("trigger: %s is not shorter than duration (%s): every original arrives by the first trigger, so the whole run's traffic lands in one batch",
			s.Trigger, s.Duration))
	}
	var total, cutStart interval.Duration
	cut := -1
	for i, seg := range s.Workload.Profile {
		if cut < 0 && total+seg.For > s.Duration {
			cut, cutStart = i, total
		}
		total += seg.For
	}
	if cut >= 0 && s.Duration > 0 {
		msg := fmt.Sprintf("workload.profile: lasts %s in all, longer than duration (%s): ", total, s.Duration)
		seg := index("workload.profile", cut)
		switch {
		case cutStart == s.Duration:
			msg += fmt.Sprintf("the run ends where %s begins, so it and the segments after it never run", seg)
		case cut < len(s.Workload.Profile)-1:
			msg += fmt.Sprintf("the run stops %s into it, inside %s, and never reaches the segments after it", s.Duration, seg)
		default:
			msg += fmt.Sprintf("the run stops %s into it, inside %s", s.Duration, seg)
		}
		out = append(out, msg)
	}
	return out
}

// WarningLines returns the warnings as the command line prints them on
// stderr, one line each: "warning: FILE: KEY.PATH: message", escaped like
// an Error.
func (s *Scenario) WarningLines() []string {
	var out []string
	for _, w := range s.Warnings() {
		out = append(out, fileio.Clean("warning: "+s.File+": "+w))
	}
	return out
}

// checkEngineScenario reports, once, the parts of the scenario that a
// query of an engine other than Spark (queries[qi], the first) cannot run
// with yet: restart faults, sink failures and the spark: block
// (docs/scenario.md, docs/flink.md, "In a scenario").
func (s *Scenario) checkEngineScenario(p *problems, qi int) {
	engine := s.Queries[qi].Engine
	for i, f := range s.Faults {
		if f.IsRestart() {
			p.add(index("faults", i)+".kind", "must not be %s with a %s query (queries[%d]): not yet supported", f.Kind, engine, qi)
			break
		}
	}
	if s.Sink.FailureProbability > 0 {
		p.add("sink.failureProbability", "must be 0 with a %s query (queries[%d]): sink failures are not yet supported for it, got %g", engine, qi, s.Sink.FailureProbability)
	}
	if s.Spark != nil {
		p.add("spark", "must be left out with a %s query (queries[%d]): it models Spark's cluster", engine, qi)
	}
}

// generatedNames returns the names of the generated columns.
func generatedNames() []string {
	var out []string
	for _, c := range generators.Columns() {
		out = append(out, c.Name)
	}
	return out
}
