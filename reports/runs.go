package reports

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// scenarioInfo is the part of the resolved scenario (summary.json's
// "scenario", keys as in docs/scenario.md) that reports interpret. Everything
// else is only printed back.
type scenarioInfo struct {
	Name     string     `json:"name"`
	Seed     *uint64    `json:"seed"`
	Start    *time.Time `json:"start"`
	Duration string     `json:"duration"`
	Trigger  string     `json:"trigger"`
	Workload struct {
		Rate    string `json:"rate"`
		Profile []struct {
			For  string `json:"for"`
			Rate string `json:"rate"`
		} `json:"profile"`
		Retries struct {
			Probability float64  `json:"probability"`
			Timestamp   string   `json:"timestamp"`
			Metadata    []string `json:"metadata"`
		} `json:"retries"`
	} `json:"workload"`
	Queries []scenarioQuery `json:"queries"`
	Sweep   *struct {
		Delay []string `json:"delay"`
	} `json:"sweep"`
	Spark *struct {
		Provider string `json:"provider"`
		Downtime []struct {
			At  string `json:"at"`
			For string `json:"for"`
		} `json:"downtime"`
	} `json:"spark"`
}

// parseScenario decodes what it can of raw; a missing or odd scenario
// leaves the zero value, since the report can still be drawn from the
// numbers.
func parseScenario(raw json.RawMessage) scenarioInfo {
	var sc scenarioInfo
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &sc) // best effort: see the doc comment
	}
	return sc
}

// run is one query (or one query and delay in a sweep): its totals and
// its batches in timeseries order (all of them, or past exactBatches the
// ones a series keeps).
type run struct {
	sum     *metrics.QuerySummary
	batches []metrics.BatchRecord
	// spark is the run's rows of spark.csv, in order; nil without one.
	spark []metrics.SparkBatch
}

// label names the run in legends and tables: the query name, plus the
// delay when the results hold several delays of the query.
func (r *run) label(withDelay bool) string {
	if withDelay {
		return r.sum.Name + " @ " + formatDelay(r.sum.Delay)
	}
	return r.sum.Name
}

// results is a results folder as the reports see it.
type results struct {
	sum  *metrics.Summary
	sc   scenarioInfo
	runs []*run
	// origin is the processing time (ms since the epoch) that chart axes
	// and marker offsets count from: the scenario's start.
	origin int64
	// curves are a sweep's exact curves (curves.json), nil without.
	curves *metrics.Curves
}

// delayKey renders a delay the way timeseries.csv does, so summary
// entries and timeseries groups can be matched.
func delayKey(d *float64) string {
	if d == nil {
		return ""
	}
	return strconv.FormatFloat(*d, 'f', -1, 64)
}

type runKey struct{ query, delay string }

// newResults groups the timeseries by (query, delay) under the summary's
// entries, in the summary's order. Batches whose group has no summary
// entry are ignored: the summary is what the report is about.
func newResults(s *metrics.Summary, ts []metrics.BatchRecord) *results {
	g := newGrouper(s)
	for i := range ts {
		g.add(&ts[i])
	}
	return g.done()
}

// grouper builds a results from the timeseries one row at a time,
// holding each run's batches in a series (bounded memory: exactBatches).
type grouper struct {
	res    *results
	byKey  map[runKey]*run
	ended  map[*run]bool
	series map[*run]*series[metrics.BatchRecord]
	// first is the earliest processing time seen, for results without a
	// start.
	first    int64
	anyBatch bool
}

// newGrouper starts the results of summary s, one run per summary entry.
func newGrouper(s *metrics.Summary) *grouper {
	res := &results{sum: s, sc: parseScenario(s.Scenario)}
	res.markDowntime()
	g := &grouper{res: res, byKey: make(map[runKey]*run, len(s.Queries)), ended: map[*run]bool{}, series: map[*run]*series[metrics.BatchRecord]{}}
	for i := range s.Queries {
		q := &s.Queries[i]
		k := runKey{q.Name, delayKey(q.Delay)}
		if _, dup := g.byKey[k]; dup {
			continue // a repeated entry would double-draw; keep the first
		}
		r := &run{sum: q}
		g.byKey[k] = r
		g.series[r] = newBatchSeries()
		res.runs = append(res.runs, r)
	}
	return g
}

// add takes one timeseries row; b is not held.
func (g *grouper) add(b *metrics.BatchRecord) {
	if !g.anyBatch || b.ProcessingTime < g.first {
		g.first, g.anyBatch = b.ProcessingTime, true
	}
	r := g.byKey[runKey{b.Query, delayKey(b.Delay)}]
	if r == nil || g.ended[r] {
		return
	}
	sr := g.series[r]
	// Processing time never goes back within one run, restarts
	// included. If it does, the group repeats (a query without a
	// watermark run once per delay of a sweep): keep the first, as for
	// the summary.
	if last, ok := sr.last(); ok && b.ProcessingTime < last.ProcessingTime {
		g.ended[r] = true
		return
	}
	sr.add(b)
}

// done returns the results, each run holding its kept batches.
func (g *grouper) done() *results {
	res := g.res
	for _, r := range res.runs {
		r.batches = g.series[r].records()
	}
	switch {
	case res.sc.Start != nil:
		res.origin = res.sc.Start.UnixMilli()
	case g.anyBatch:
		// Without a start, count from the first batch: offsets are then
		// relative to it, which the charts' axis still labels correctly.
		res.origin = g.first
	}
	return res
}

// queryNames returns the distinct query names in summary order.
func (res *results) queryNames() []string {
	var names []string
	for _, r := range res.runs {
		if !slices.Contains(names, r.sum.Name) {
			names = append(names, r.sum.Name)
		}
	}
	return names
}

// runsOf returns the runs of the named query, in summary order.
func (res *results) runsOf(name string) []*run {
	var out []*run
	for _, r := range res.runs {
		if r.sum.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// isSweep reports whether some query was run with several delays.
func (res *results) isSweep() bool {
	for _, name := range res.queryNames() {
		if len(res.runsOf(name)) > 1 {
			return true
		}
	}
	return false
}

// scenarioQuery is a query of the scenario file, with the keys that set
// the other engines' horizons (a sweep replaces them).
type scenarioQuery struct {
	Name     string         `json:"name"`
	Query    string         `json:"query"`
	Engine   string         `json:"engine"`
	Options  map[string]any `json:"options"`
	Window   string         `json:"window"`
	Duration string         `json:"duration"`
}

// key returns the value the query gives the key k (a summary's
// horizon key: "window", "duration", "options.NAME"), "" when unset.
func (q scenarioQuery) key(k string) string {
	switch k {
	case "window":
		return q.Window
	case "duration":
		return q.Duration
	}
	if opt, ok := strings.CutPrefix(k, "options."); ok {
		v, _ := q.Options[opt].(string)
		return v
	}
	return ""
}

// writtenDelay returns the horizon, in seconds, that the scenario file
// wrote for the named query: a Spark query's watermark delay, read off the
// query text, or another engine's own horizon (Flink's state TTL, Kafka
// Streams' window, Beam's duration), which a sweep sets as it sets Spark's
// delay.
func (res *results) writtenDelay(name string) (float64, bool) {
	for _, q := range res.sc.Queries {
		if q.Name != name {
			continue
		}
		if q.Engine != "" && q.Engine != "spark" {
			// The summary names the key that sets the engine's horizon
			// (sim/registry's): the reports know no engine's keys.
			var other string
			for _, r := range res.runsOf(name) {
				if h := r.sum.Horizon; h != nil && h.Key != "" {
					other = q.key(h.Key)
					break
				}
			}
			d, err := interval.Parse(other)
			if other == "" || err != nil {
				return 0, false
			}
			return d.Seconds(), true
		}
		// Compiled here rather than in a package variable: the package
		// keeps no globals, and this runs once per query.
		re := regexp.MustCompile(`withWatermark\(\s*["'][^"']*["']\s*,\s*["']([^"']+)["']`)
		m := re.FindStringSubmatch(q.Query)
		if m == nil {
			return 0, false
		}
		d, err := interval.Parse(m[1])
		if err != nil {
			return 0, false
		}
		return d.Seconds(), true
	}
	return 0, false
}

// timelineRuns picks one run per query for the charts over processing
// time. Without a sweep that is every run. In a sweep it is the base run
// (the delay the scenario file wrote) when the sweep holds it, else the
// middle delay of the query's sweep; note says which, for the title.
func (res *results) timelineRuns() (runs []*run, note string) {
	if !res.isSweep() {
		return res.runs, ""
	}
	base := true
	var chosen []string
	for _, name := range res.queryNames() {
		rs := res.runsOf(name)
		if len(rs) == 1 {
			runs = append(runs, rs[0])
			continue
		}
		var pick *run
		if d, ok := res.writtenDelay(name); ok {
			for _, r := range rs {
				if r.sum.Delay != nil && math.Round(*r.sum.Delay*1000) == math.Round(d*1000) {
					pick = r
					break
				}
			}
		}
		if pick == nil {
			base = false
			sorted := slices.Clone(rs)
			slices.SortStableFunc(sorted, func(a, b *run) int { return compareDelay(a.sum.Delay, b.sum.Delay) })
			pick = sorted[(len(sorted)-1)/2]
		}
		runs = append(runs, pick)
		if d := formatDelay(pick.sum.Delay); !slices.Contains(chosen, d) {
			chosen = append(chosen, d)
		}
	}
	switch {
	case base:
		note = "sweep: each query at the delay its scenario wrote"
	case len(chosen) == 1:
		note = "sweep: each query at delay " + chosen[0]
	default:
		note = "sweep: each query at its middle delay"
	}
	return runs, note
}

// compareDelay orders delays with "no watermark" first.
func compareDelay(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	case *a < *b:
		return -1
	case *a > *b:
		return 1
	}
	return 0
}

// offsetSeconds converts a processing time in ms since the epoch to
// seconds after the origin.
func (res *results) offsetSeconds(ms int64) float64 {
	return float64(ms-res.origin) / 1000
}
