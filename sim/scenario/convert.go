package scenario

import (
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// convert builds the typed scenario from the raw one: defaults first, then
// every key that is present. Required keys that are absent are reported
// here, where absence is still visible.
func convert(raw *rawScenario, p *problems) *Scenario {
	c := &conv{p: p, dir: filepath.Dir(p.file)}
	s := Defaults()
	s.File = p.file
	if present(&raw.Name) {
		s.Name, _ = c.str(&raw.Name, "name", "a name")
	} else {
		c.missing("name", "a name for the results folder")
	}
	if present(&raw.Seed) {
		c.seed(&raw.Seed, &s.Seed)
	}
	if present(&raw.Start) {
		if t, ok := c.timestamp(&raw.Start, "start"); ok {
			s.Start = t
		}
	}
	if present(&raw.Duration) {
		s.Duration, _ = c.duration(&raw.Duration, "duration")
	} else {
		c.missing("duration", "the processing time of original arrivals, such as 2h")
	}
	if present(&raw.Trigger) {
		if d, ok := c.duration(&raw.Trigger, "trigger"); ok {
			s.Trigger = d
		}
	}
	if present(&raw.NoDataMicroBatches) {
		if b, ok := c.boolean(&raw.NoDataMicroBatches, "noDataMicroBatches"); ok {
			s.NoDataMicroBatches = b
		}
	}
	if raw.Workload != nil {
		c.workload(raw.Workload, &s.Workload)
	} else {
		c.missing("workload", "a mapping with at least rate or profile")
	}
	c.queries(raw.Queries, &s)
	if present(&raw.Store) {
		s.Store, _ = c.str(&raw.Store, "store", "memory or pebble")
	}
	if raw.Sink != nil {
		c.sink(raw.Sink, &s.Sink)
	}
	for i, f := range raw.Faults {
		c.fault(&f, index("faults", i), &s)
	}
	if raw.Sweep != nil {
		c.sweep(raw.Sweep, &s)
	}
	return &s
}

// seed decodes the seed, a whole number from 0 to 2^64-1.
func (c *conv) seed(n *yaml.Node, dst *uint64) {
	const want = "a whole number from 0 to 18446744073709551615"
	s, ok := c.scalar(n, "seed", want)
	if !ok {
		return
	}
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		c.fail("seed", n, want)
		return
	}
	*dst = v
}

func (c *conv) workload(raw *rawWorkload, w *Workload) {
	if present(&raw.Rate) {
		if r, ok := c.rate(&raw.Rate, "workload.rate"); ok {
			w.Rate = &r
		}
	}
	if raw.Profile != nil {
		if len(raw.Profile) == 0 {
			c.p.add("workload.profile", "must list at least one segment {for, rate}, got an empty list")
			// Validate would also find neither rate nor profile.
			c.p.breakPath("workload.rate")
		}
		w.Profile = make([]Segment, len(raw.Profile))
		for i := range raw.Profile {
			c.segment(&raw.Profile[i], index("workload.profile", i), &w.Profile[i])
		}
	}
	if present(&raw.IDs) {
		if s, ok := c.str(&raw.IDs, "workload.ids", "uuid or int"); ok {
			w.IDs = IDForm(s)
		}
	}
	if present(&raw.Customers) {
		if v, ok := c.integer(&raw.Customers, "workload.customers", "a whole number of at least 1"); ok {
			w.Customers = v
		}
	}
	if raw.ArrivalDelay != nil {
		w.ArrivalDelay = c.dist(raw.ArrivalDelay, "workload.arrivalDelay", false)
	}
	if raw.Retries != nil {
		c.retries(raw.Retries, &w.Retries)
	}
	if w.Retries.Probability == 0 && w.Retries.Delay.Kind == "" {
		w.Retries.Delay = Dist{Kind: Constant}
	}
	if raw.FutureTimestamps != nil {
		ft := raw.FutureTimestamps
		if present(&ft.Probability) {
			w.FutureTimestamps.Probability, _ = c.number(&ft.Probability, "workload.futureTimestamps.probability", "a probability between 0 and 1")
		}
		if ft.Skew != nil {
			w.FutureTimestamps.Skew = c.dist(ft.Skew, "workload.futureTimestamps.skew", false)
		}
	}
	if w.FutureTimestamps.Probability == 0 && w.FutureTimestamps.Skew.Kind == "" {
		w.FutureTimestamps.Skew = Dist{Kind: Constant}
	}
	if present(&raw.Heartbeat) {
		w.Heartbeat, _ = c.duration(&raw.Heartbeat, "workload.heartbeat")
	}
}

func (c *conv) segment(raw *rawSegment, path string, seg *Segment) {
	if present(&raw.For) {
		seg.For, _ = c.duration(&raw.For, key(path, "for"))
	} else {
		c.missing(key(path, "for"), "how long the segment lasts, such as 30m")
	}
	if present(&raw.Rate) {
		seg.Rate, _ = c.rate(&raw.Rate, key(path, "rate"))
	} else {
		c.missing(key(path, "rate"), "a rate such as 2000/s, or 0 for a stall")
	}
}

func (c *conv) retries(raw *rawRetries, r *Retries) {
	const path = "workload.retries"
	if present(&raw.Probability) {
		r.Probability, _ = c.number(&raw.Probability, key(path, "probability"), "a probability between 0 and 1")
	}
	if raw.Copies != nil {
		r.Copies = c.dist(raw.Copies, key(path, "copies"), true)
	}
	if raw.Delay != nil {
		r.Delay = c.dist(raw.Delay, key(path, "delay"), false)
	}
	if present(&raw.Timestamp) {
		if s, ok := c.str(&raw.Timestamp, key(path, "timestamp"), "same, restamp or jitter"); ok {
			r.Timestamp = TimestampMode(s)
		}
	}
	if present(&raw.Jitter) {
		r.Jitter, _ = c.duration(&raw.Jitter, key(path, "jitter"))
	}
	if present(&raw.Metadata) {
		const want = "a list of attempt and/or ingest_time"
		items, ok := c.list(&raw.Metadata, key(path, "metadata"), want)
		if !ok {
			return
		}
		r.Metadata = make([]string, 0, len(items))
		for i, n := range items {
			if s, ok := c.str(n, index(key(path, "metadata"), i), "attempt or ingest_time"); ok {
				r.Metadata = append(r.Metadata, s)
			}
		}
	}
}

func (c *conv) queries(raw []rawQuery, s *Scenario) {
	s.Queries = make([]Query, len(raw))
	for i := range raw {
		path := index("queries", i)
		if present(&raw[i].Name) {
			s.Queries[i].Name, _ = c.str(&raw[i].Name, key(path, "name"), "a name")
		}
		if present(&raw[i].Query) {
			s.Queries[i].Query, _ = c.str(&raw[i].Query, key(path, "query"), "a query such as dropDuplicates([\"event_id\"])")
		}
	}
}

func (c *conv) sink(raw *rawSink, k *Sink) {
	if present(&raw.Kind) {
		k.Kind, _ = c.str(&raw.Kind, "sink.kind", "append or idempotent")
	}
	if present(&raw.FailureProbability) {
		k.FailureProbability, _ = c.number(&raw.FailureProbability, "sink.failureProbability", "a probability from 0 to below 1")
	}
}

func (c *conv) fault(raw *rawFault, path string, s *Scenario) {
	var f Fault
	if present(&raw.At) {
		f.At, _ = c.duration(&raw.At, key(path, "at"))
	} else {
		c.missing(key(path, "at"), "a processing-time offset such as 1h")
	}
	if present(&raw.Kind) {
		if k, ok := c.str(&raw.Kind, key(path, "kind"), "restart or lose-checkpoint"); ok {
			f.Kind = FaultKind(k)
		}
	} else {
		c.missing(key(path, "kind"), "restart or lose-checkpoint")
	}
	s.Faults = append(s.Faults, f)
}

func (c *conv) sweep(raw *rawSweep, s *Scenario) {
	s.Sweep = &Sweep{}
	if !present(&raw.Delay) {
		c.missing("sweep.delay", "a list of delays such as [1m, 5m, 20m]")
		return
	}
	items, ok := c.list(&raw.Delay, "sweep.delay", "a list of delays such as [1m, 5m, 20m]")
	if !ok {
		return
	}
	s.Sweep.Delay = make([]Duration, len(items))
	for i, n := range items {
		s.Sweep.Delay[i], _ = c.duration(n, index("sweep.delay", i))
	}
}
