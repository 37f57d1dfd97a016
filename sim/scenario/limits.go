package scenario

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dedupsim/dedupsim/sim/chain"
)

// The limits on what a scenario may ask for. Each keeps a run that would
// panic, exhaust memory or never finish from starting; a scenario past one
// is rejected with a line naming the limit.
const (
	// MinTrigger is the shortest trigger interval. Spark's trigger
	// intervals are whole milliseconds (Trigger.ProcessingTime(ms)), so
	// the trigger must also be a whole number of them.
	MinTrigger = Duration(time.Millisecond)
	// MinHeartbeat is the shortest heartbeat interval, the trigger's
	// resolution. A heartbeat shorter than the trigger is allowed (several
	// heartbeat rows per batch; the watermark takes the batch's maximum
	// event time, so only the last one moves it), within MaxRowsPerBatch.
	MinHeartbeat = Duration(time.Millisecond)
	// MaxRowsPerBatch bounds the rows one micro-batch may hold, as
	// estimated by RowsPerBatch: half a million events per second at a
	// 10 s trigger, far above what one Spark query takes per batch. The
	// batch's rows are in memory at once, with the engines' and the
	// accountant's per-row work: a batch at the limit peaks at about 2 GB
	// of resident memory for the job that runs it (measured: one batch of
	// 5 million rows, 2.0 GB; of 10 million, 4.5 GB; jobs run in
	// parallel, each with its own batch).
	MaxRowsPerBatch = 5_000_000
	// MaxJobs bounds the jobs of a run: one per query, times the sweep's
	// delays for every query with a watermark. Each job keeps its own
	// state and results, and reports draw one line per job.
	MaxJobs = 1000
	// maxExtraCopies mirrors the generators' cap on the extra copies of
	// one event (generators.maxExtraCopies), for the estimate of
	// RowsPerBatch.
	maxExtraCopies = 1 << 20
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

// RowsPerBatch estimates the rows of the fullest micro-batch of s: the
// peak rate of originals (the rate, or the highest rate of the profile)
// times the trigger, times 1 + retries.probability x the mean number of
// extra copies (every copy counted as if it arrived with its original, an
// upper estimate of the retries' share), plus the heartbeat rows of one
// trigger (ceil(trigger / heartbeat)). It is an estimate of the average
// over the fullest segment, not a bound on one batch: arrivals are
// random. path is the key the estimate is dominated by: the rate, the
// profile segment of the peak rate, or the heartbeat.
func (s *Scenario) RowsPerBatch() (rows float64, path string) {
	w := &s.Workload
	peak, path := 0.0, "workload.rate"
	if len(w.Profile) > 0 {
		for i, seg := range w.Profile {
			if i == 0 || float64(seg.Rate) > peak {
				peak, path = float64(seg.Rate), key(index("workload.profile", i), "rate")
			}
		}
	} else if w.Rate != nil {
		peak = float64(*w.Rate)
	}
	trigger := s.Trigger.Std().Seconds()
	rows = peak * trigger
	if p := w.Retries.Probability; p > 0 {
		rows *= 1 + p*meanCopies(w.Retries.Copies)
	}
	if hb := w.Heartbeat; hb > 0 && s.Trigger > 0 {
		beats := math.Ceil(float64(s.Trigger) / float64(hb))
		if beats > rows {
			path = "workload.heartbeat"
		}
		rows += beats
	}
	return rows, path
}

// meanCopies returns the mean number of extra copies a count distribution
// draws, as the generators draw them: at least 1 and at most
// maxExtraCopies; the cap when the mean is infinite or unknown.
func meanCopies(d Dist) float64 {
	var m float64
	switch d.Kind {
	case Constant:
		m = math.Round(d.Value)
	case Uniform:
		m = (math.Round(d.Min) + math.Round(d.Max)) / 2
	case Exponential, Geometric:
		m = d.Mean
	case LogNormal:
		mu, sigma := d.LogNormalParams()
		m = math.Exp(mu + sigma*sigma/2)
	case Pareto:
		m = math.Inf(1)
		if d.Alpha > 1 {
			m = d.Alpha * d.Min / (d.Alpha - 1)
		}
	case Empirical:
		for _, v := range d.Samples {
			m += v
		}
		if len(d.Samples) > 0 {
			m /= float64(len(d.Samples))
		}
	}
	if math.IsNaN(m) || m > maxExtraCopies {
		return maxExtraCopies
	}
	return max(m, 1)
}

// Jobs returns the number of jobs a run of s makes: one per query, and
// with a sweep one per delay for every query with a withWatermark (a
// query without one runs once, since no delay changes it). A query that
// does not parse counts once.
func (s *Scenario) Jobs() int {
	n := 0
	for _, q := range s.Queries {
		if s.Sweep != nil && len(s.Sweep.Delay) > 0 && hasWatermark(q.Query) {
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

// checkLimits reports what cannot run: a start outside [minStart,
// maxStart), a trigger below MinTrigger or not
// in whole milliseconds, a heartbeat below MinHeartbeat, a profile
// segment shorter than the trigger, more than MaxRowsPerBatch rows per
// batch and more than MaxJobs jobs. It runs in Validate, not in
// ValidateWorkload: the generators run on any workload, these limits are
// the executor's.
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
		// Below a microsecond, checkWorkload has reported it already.
		if w.Heartbeat >= Duration(time.Microsecond) {
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
		p.add(path, "must make at most %d jobs per run, the limit (a query with a withWatermark runs once per sweep delay, any other once), got %d jobs: split the scenario", MaxJobs, n)
	}
	if !triggerOK {
		return
	}
	for i, seg := range w.Profile {
		if seg.For > 0 && seg.For < s.Trigger {
			p.add(key(index("workload.profile", i), "for"), "must be at least the trigger (%s): a segment shorter than one batch cannot show, got %s", s.Trigger, seg.For)
		}
	}
	// The estimate needs valid rates and retries (Validate reports those).
	valid := validRate(w.Rate) && validProbability(w.Retries.Probability)
	for _, seg := range w.Profile {
		valid = valid && validRate(&seg.Rate)
	}
	if rows, path := s.RowsPerBatch(); valid && rows > MaxRowsPerBatch {
		p.add(path, "must make at most %d rows per batch, the limit (estimated as peak rate x trigger x (1 + retries.probability x mean extra copies) + heartbeats per trigger), got about %s rows per batch at trigger %s: lower the rate or the trigger",
			MaxRowsPerBatch, formatRows(rows), s.Trigger)
	}
}

func validRate(r *Rate) bool { return r == nil || (*r >= 0 && *r <= maxRate) }

func validProbability(v float64) bool { return v >= 0 && v <= 1 }

// formatRows renders an estimated row count as a whole number, or in
// exponent form when it is too large to read.
func formatRows(v float64) string {
	if v < 1e15 {
		return strconv.FormatFloat(math.Ceil(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
