package reports

import (
	"fmt"
	"math"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/metrics"
)

// The traffic window and the drain (metrics.Windows): originals arrive up
// to the duration; after it the watermark stands still while the last
// copies arrive. Charts shade the drain and cut it short; findings read
// only the batches of the traffic window.

// seconds parses a duration of the resolved scenario ("30m"), 0 when it
// is absent or odd.
func seconds(s string) float64 {
	d, err := interval.Parse(s)
	if err != nil || d < 0 {
		return 0
	}
	return d.Seconds()
}

// triggerSeconds is the scenario's trigger, 10s when the results do not
// say.
func (res *results) triggerSeconds() float64 {
	if t := seconds(res.sc.Trigger); t > 0 {
		return t
	}
	return 10
}

// durationSeconds is the scenario's duration, 0 when unknown.
func (res *results) durationSeconds() float64 {
	if w := res.sum.Windows; w != nil {
		return w.TrafficEnd
	}
	return seconds(res.sc.Duration)
}

// lastTrafficBatch is the processing time of the last batch of the
// traffic window, seconds after the start; +Inf when the results say
// nothing of the window (every batch is then in it).
func (res *results) lastTrafficBatch() float64 {
	if w := res.sum.Windows; w != nil {
		return w.LastTrafficBatch
	}
	d, t := seconds(res.sc.Duration), seconds(res.sc.Trigger)
	switch {
	case d <= 0:
		return math.Inf(1)
	case t <= 0:
		return d
	}
	return math.Ceil(d/t-1e-9) * t
}

// inTraffic reports whether batch b is in the traffic window.
func (res *results) inTraffic(b metrics.BatchRecord) bool {
	return res.offsetSeconds(b.ProcessingTime) <= res.lastTrafficBatch()+1e-6
}

// traffic returns the batches of r in the traffic window.
func (res *results) traffic(r *run) []metrics.BatchRecord {
	n := 0
	for n < len(r.batches) && res.inTraffic(r.batches[n]) {
		n++
	}
	return r.batches[:n]
}

// drained reports whether some run has batches after the traffic window.
func (res *results) drained(runs []*run) bool {
	for _, r := range runs {
		if n := len(r.batches); n > 0 && !res.inTraffic(r.batches[n-1]) {
			return true
		}
	}
	return false
}

// runEnd is the last batch of runs, seconds after the start.
func (res *results) runEnd(runs []*run) float64 {
	end := 0.0
	for _, r := range runs {
		if n := len(r.batches); n > 0 {
			end = max(end, res.offsetSeconds(r.batches[n-1].ProcessingTime))
		}
	}
	return end
}

// axisEnd is where a chart over processing time ends: the traffic window
// plus a short visible tail of the drain (a tenth of the duration, at
// least two triggers), or the last batch when that comes first. A chart
// that ran to the last late copy would spend most of its width on a drain
// a real stream never has.
func (res *results) axisEnd(runs []*run) float64 {
	end := res.runEnd(runs)
	for _, m := range res.sum.Markers {
		end = max(end, m.At)
	}
	last := res.lastTrafficBatch()
	if math.IsInf(last, 1) {
		return end
	}
	tail := max(0.1*res.durationSeconds(), 2*res.triggerSeconds())
	return min(end, last+tail)
}

// horizonOf returns a run's key horizon in seconds and whether it has one
// (false: it never evicts). Results written before the horizon was
// recorded get it from the flavour, delay and trigger.
func (res *results) horizonOf(q *metrics.QuerySummary) (float64, bool) {
	if q.KeyHorizonSeconds != nil {
		return *q.KeyHorizonSeconds, true
	}
	if q.Delay == nil || q.Flavour != "" {
		return 0, false
	}
	switch flavourOf(q) {
	case metrics.FlavourWithin:
		return 2**q.Delay + res.triggerSeconds(), true
	case metrics.FlavourPairKeyed:
		return *q.Delay + res.triggerSeconds(), true
	}
	return 0, false
}

// saturated reports whether a run's key horizon reaches the traffic window.
func (res *results) saturated(q *metrics.QuerySummary) bool {
	if q.Saturated {
		return true
	}
	if q.KeyHorizonSeconds != nil || q.Flavour != "" {
		return false
	}
	h, ok := res.horizonOf(q)
	d := res.durationSeconds()
	return ok && d > 0 && h >= d
}

// resolvingDuration is a run length that would resolve a horizon of h
// seconds: three horizons, rounded up to a duration a scenario would
// write.
func resolvingDuration(h float64) float64 {
	need := 3 * h
	for _, d := range []float64{60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200, 10800, 14400, 18000, 21600, 28800, 43200, 86400} {
		if d >= need {
			return d
		}
	}
	return math.Ceil(need/86400) * 86400
}

// maxScenarioSeconds is the longest duration a scenario holds, a
// time.Duration's range in whole seconds.
const maxScenarioSeconds = float64(math.MaxInt64 / int64(time.Second))

// SaturationWarnings returns one line per query of s whose key horizon
// reaches the traffic window at some delay: the delays, and the duration
// that would resolve them (three times the longest such horizon, rounded
// up to a duration a scenario would write). simulate run and sweep print
// them on stderr; nil when no query is saturated.
func SaturationWarnings(s *metrics.Summary) []string {
	res := newResults(s, nil)
	var out []string
	for _, name := range res.queryNames() {
		var ds []string
		longest := 0.0
		for _, r := range res.runsOf(name) {
			if !res.saturated(r.sum) {
				continue
			}
			ds = append(ds, formatDelay(r.sum.Delay))
			if h, ok := res.horizonOf(r.sum); ok {
				longest = max(longest, h)
			}
		}
		if len(ds) == 0 {
			continue
		}
		lead := fmt.Sprintf("warning: %s is saturated at delay %s: its key horizon (up to %s) reaches the %s traffic window, so it holds every key of the run there; ",
			name, joinNames(ds), formatSpan(longest), formatSpan(res.durationSeconds()))
		if d := resolvingDuration(longest); d <= maxScenarioSeconds {
			out = append(out, lead+fmt.Sprintf("run for %s to resolve it (duration: %s)", formatSpan(d), interval.FormatSeconds(d)))
		} else {
			// No scenario runs that long (a duration is a time.Duration):
			// only a shorter horizon resolves it.
			out = append(out, lead+fmt.Sprintf("no duration resolves it (that needs %s, beyond the longest a scenario holds, %s): shorten the horizon", formatSpan(d), interval.MaxText))
		}
	}
	return out
}
