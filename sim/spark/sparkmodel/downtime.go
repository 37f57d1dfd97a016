package sparkmodel

import (
	"fmt"
	"slices"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// MaxDowntimes bounds spark.downtime's spans.
const MaxDowntimes = 1000

// Downtime is a span of processing time in which the query does not run:
// its driver is down, a deploy, a cluster outage. No trigger fires in
// [At, At+For); the first one after fires at At+For, at once, as a
// restarted query's first batch does, and takes every row that arrived
// meanwhile (at most maxRowsPerBatch of them, the oldest first). Rows keep
// arriving at the source; the query's state and watermark wait, as after
// a restart from its checkpoint.
type Downtime struct {
	// At is the span's start, a processing-time offset from the
	// scenario's start.
	At interval.Duration `json:"at" yaml:"at" need:"a processing-time offset such as 20m"`
	// For is the span's length.
	For interval.Duration `json:"for" yaml:"for" need:"a duration such as 30m"`
}

// checkDowntime returns the problems of the block's downtime spans that
// need no scenario: each above 0, in time order, none overlapping the
// next. The scenario checks them against its trigger and duration.
func (c *Config) checkDowntime() []Problem {
	var out []Problem
	if len(c.Downtime) > MaxDowntimes {
		return append(out, Problem{"downtime", fmt.Sprintf("must hold at most %d spans, got %d", MaxDowntimes, len(c.Downtime))})
	}
	for i, d := range c.Downtime {
		path := fmt.Sprintf("downtime[%d]", i)
		if d.At <= 0 {
			out = append(out, Problem{path + ".at", fmt.Sprintf("must be above 0, got %s", d.At)})
		}
		if d.For <= 0 {
			out = append(out, Problem{path + ".for", fmt.Sprintf("must be above 0, got %s", d.For)})
		}
		if i > 0 {
			prev := c.Downtime[i-1]
			if d.At < prev.At+prev.For {
				out = append(out, Problem{path + ".at", fmt.Sprintf("must be at or after the end of the span before it (%s), got %s: spans go in time order, without overlapping", prev.At+prev.For, d.At)})
			}
		}
	}
	return out
}

// downSpans returns the block's downtime as [from, to) in µs since the
// epoch, for a scenario starting at origin (µs).
func (c *Config) downSpans(origin int64) [][2]int64 {
	var out [][2]int64
	for _, d := range c.Downtime {
		from := origin + d.At.Micros()
		out = append(out, [2]int64{from, from + d.For.Micros()})
	}
	return out
}

// afterDowntime moves a trigger at next out of the downtime: to the end
// of the span it falls in, if any (and of the span that starts there).
func afterDowntime(spans [][2]int64, next int64) int64 {
	for {
		i, _ := slices.BinarySearchFunc(spans, next, func(s [2]int64, t int64) int {
			switch {
			case s[1] <= t:
				return -1
			case s[0] > t:
				return 1
			}
			return 0
		})
		if i >= len(spans) || next < spans[i][0] || next >= spans[i][1] {
			return next
		}
		next = spans[i][1]
	}
}
