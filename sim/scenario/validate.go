package scenario

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Validate checks every value of s and returns every problem, one Error
// each, joined with errors.Join (nil when s is valid). It checks queries by
// parsing and planning them with sim/chain against Schema.
func (s *Scenario) Validate() error {
	return s.collect(defaultOptions(), nil).err()
}

// ValidateWorkload checks only what generating the rows depends on: start,
// duration and workload. The generators call it, so that they never run on
// values that would make them loop or panic, without depending on the
// query planner.
func (s *Scenario) ValidateWorkload() error {
	p := &problems{file: s.File}
	s.checkTimes(p)
	s.checkWorkload(p)
	return p.err()
}

// collect runs every check. Problems at paths that parsed marks broken are
// left out: the parser has reported those already.
func (s *Scenario) collect(opt options, parsed *problems) *problems {
	p := &problems{file: s.File}
	s.checkName(p)
	s.checkTimes(p)
	s.checkWorkload(p)
	s.checkQueries(p, opt)
	s.checkOutput(p)
	s.checkFaults(p)
	s.checkLimits(p)
	if parsed == nil {
		return p
	}
	kept := p.errs[:0]
	for _, err := range p.errs {
		if e, ok := err.(*Error); !ok || !parsed.isBroken(e.Path) {
			kept = append(kept, err)
		}
	}
	p.errs = kept
	return p
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

func (s *Scenario) checkName(p *problems) {
	switch {
	case s.Name == "":
		p.add("name", "must be set to a name for the results folder, got nothing")
	case !fileSafe(s.Name):
		p.add("name", "must be %s, got %s", fileSafeWant, show(s.Name))
	}
}

func (s *Scenario) checkTimes(p *problems) {
	if s.Start.Nanosecond()%1000 != 0 {
		p.add("start", "must be a whole number of microseconds (rows carry microseconds), got %s", s.Start.Format(time.RFC3339Nano))
	}
	if s.Duration <= 0 {
		p.add("duration", "must be above 0, got %s", s.Duration)
	}
}

func (s *Scenario) checkWorkload(p *problems) {
	w := &s.Workload
	// A profile replaces the rate (SCENARIO.md's own example sets both);
	// a rate that a profile replaces must still be a valid rate.
	if w.Rate == nil && len(w.Profile) == 0 {
		p.add("workload.rate", "must be set to a rate such as 2000/s, or replaced by workload.profile, got nothing")
	}
	if w.Rate != nil {
		checkRate(p, "workload.rate", *w.Rate)
	}
	for i, seg := range w.Profile {
		path := index("workload.profile", i)
		if seg.For <= 0 {
			p.add(key(path, "for"), "must be above 0, got %s", seg.For)
		}
		checkRate(p, key(path, "rate"), seg.Rate)
	}
	if w.IDs != UUIDs && w.IDs != Ints {
		p.add("workload.ids", "must be one of uuid, int, got %s", show(string(w.IDs)))
	}
	if w.Customers < 1 {
		p.add("workload.customers", "must be at least 1, got %d", w.Customers)
	}
	checkDist(p, "workload.arrivalDelay", w.ArrivalDelay, false)
	s.checkRetries(p)
	ft := &w.FutureTimestamps
	checkProbability(p, "workload.futureTimestamps.probability", ft.Probability)
	if ft.Skew.Kind == "" && ft.Probability > 0 {
		p.add("workload.futureTimestamps.skew", "must be set when probability is above 0, got nothing")
	}
	checkDist(p, "workload.futureTimestamps.skew", ft.Skew, false)
	switch {
	case w.Heartbeat < 0:
		p.add("workload.heartbeat", "must be at least 0 (0 is off), got %s", w.Heartbeat)
	case w.Heartbeat > 0 && w.Heartbeat < Duration(time.Microsecond):
		p.add("workload.heartbeat", "must be 0 (off) or at least 1µs, got %s", w.Heartbeat)
	}
}

// maxRate bounds a rate: far above any real stream, and low enough that
// every gap between arrivals still moves simulated time forward in float64.
const maxRate = 1e9

func checkRate(p *problems, path string, r Rate) {
	switch {
	case r < 0 || math.IsNaN(float64(r)):
		p.add(path, "must be at least 0 (0 is a stall), got %s", r)
	case r > maxRate:
		p.add(path, "must be at most %s, got %s", Rate(maxRate), r)
	}
}

func checkProbability(p *problems, path string, v float64) {
	if !(v >= 0 && v <= 1) {
		p.add(path, "must be between 0 and 1, got %g", v)
	}
}

func (s *Scenario) checkRetries(p *problems) {
	const path = "workload.retries"
	r := &s.Workload.Retries
	checkProbability(p, key(path, "probability"), r.Probability)
	if r.Copies.Kind == "" {
		p.add(key(path, "copies"), "must be set to a count distribution such as {dist: geometric, mean: 1.5}, got nothing")
	}
	checkDist(p, key(path, "copies"), r.Copies, true)
	if r.Delay.Kind == "" && r.Probability > 0 {
		p.add(key(path, "delay"), "must be set when probability is above 0 (the gap between copies' arrivals), got nothing")
	}
	checkDist(p, key(path, "delay"), r.Delay, false)
	// Jitter only matters with timestamp: jitter, but SCENARIO.md's own
	// example sets it beside timestamp: same, so it is allowed (and
	// ignored) with the other modes.
	switch {
	case r.Timestamp != SameTimestamp && r.Timestamp != Restamp && r.Timestamp != JitterTimestamp:
		p.add(key(path, "timestamp"), "must be one of same, restamp, jitter, got %s", show(string(r.Timestamp)))
	case r.Timestamp == JitterTimestamp && r.Jitter <= 0:
		p.add(key(path, "jitter"), "must be above 0 when timestamp is jitter, got %s", r.Jitter)
	case r.Jitter < 0:
		p.add(key(path, "jitter"), "must be at least 0, got %s", r.Jitter)
	}
	for i, m := range r.Metadata {
		mp := index(key(path, "metadata"), i)
		switch {
		case m != MetaAttempt && m != MetaIngestTime:
			p.add(mp, "must be one of attempt, ingest_time, got %s", show(m))
		case slices.Index(r.Metadata, m) < i:
			p.add(mp, "must be listed once, got %s again", m)
		}
	}
}

func (s *Scenario) checkQueries(p *problems, opt options) {
	if len(s.Queries) == 0 {
		p.add("queries", "must list at least one query {name, query}, got none")
		return
	}
	first := map[string]int{}
	for i, q := range s.Queries {
		path := index("queries", i)
		switch lower := strings.ToLower(q.Name); {
		case q.Name == "":
			p.add(key(path, "name"), "must be set to %s, got nothing", fileSafeWant)
		case !fileSafe(q.Name):
			p.add(key(path, "name"), "must be %s, got %s", fileSafeWant, show(q.Name))
		case first[lower] > 0:
			p.add(key(path, "name"), "must be unique, ignoring case (it names files), got %s as queries[%d].name already is", show(q.Name), first[lower]-1)
		default:
			first[lower] = i + 1
		}
		if strings.TrimSpace(q.Query) == "" {
			p.add(key(path, "query"), "must be set to a query such as dropDuplicates([\"event_id\"]), got nothing")
			continue
		}
		if err := opt.checkQuery(q.Query); err != nil {
			msg := strings.Join(strings.Fields(err.Error()), " ")
			p.add(key(path, "query"), "must be a query Spark can run: %s", msg)
		}
	}
}

func (s *Scenario) checkOutput(p *problems) {
	if s.Store != StoreMemory && s.Store != StorePebble {
		p.add("store", "must be one of memory, pebble, got %s", show(s.Store))
	}
	if s.Sink.Kind != SinkAppend && s.Sink.Kind != SinkIdempotent {
		p.add("sink.kind", "must be one of append, idempotent, got %s", show(s.Sink.Kind))
	}
	if fp := s.Sink.FailureProbability; !(fp >= 0 && fp < 1) {
		p.add("sink.failureProbability", "must be at least 0 and below 1 (a failed batch is retried until it succeeds), got %g", fp)
	}
}

func (s *Scenario) checkFaults(p *problems) {
	for i, f := range s.Faults {
		path := index("faults", i)
		switch {
		case f.At <= 0:
			p.add(key(path, "at"), "must be above 0, got %s", f.At)
		case s.Duration > 0 && f.At > s.Duration:
			p.add(key(path, "at"), "must be within the duration (%s), got %s", s.Duration, f.At)
		}
		if f.Kind != Restart && f.Kind != LoseCheckpoint {
			p.add(key(path, "kind"), "must be one of restart, lose-checkpoint, got %s", show(string(f.Kind)))
		}
	}
	if s.Sweep == nil {
		return
	}
	if len(s.Sweep.Delay) == 0 {
		p.add("sweep.delay", "must list at least one delay such as [1m, 5m, 20m], got none")
	}
	for i, d := range s.Sweep.Delay {
		path := index("sweep.delay", i)
		switch {
		case d < 0:
			p.add(path, "must be at least 0, got %s", d)
		case slices.Index(s.Sweep.Delay, d) < i:
			p.add(path, "must be listed once, got %s again", d)
		}
	}
}
