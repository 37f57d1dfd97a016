package plan

import (
	"fmt"
	"math"
	"slices"

	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// AtRate returns a copy of sc whose peak rate of originals is rate: its
// rate, or every segment of its profile, multiplied by rate over its peak
// rate (stalls stay stalls). Everything drawn per event (copies, retry
// gaps, arrival delays, bad clocks) comes with the traffic, so a bad
// clock's share of the rows is the scenario's and their count grows with
// the rate; what is drawn per unit of time (heartbeats) does not. The copy
// is validated: a rate the simulator cannot run (more rows per batch than
// scenario.MaxRowsPerBatch, a rate above generators.MaxRate) is an error
// naming the limit.
func AtRate(sc *scenario.Scenario, rate float64) (*scenario.Scenario, error) {
	peak := PeakRate(sc)
	switch {
	case peak <= 0:
		return nil, fmt.Errorf("%s: workload: no originals at any rate: nothing to plan at %s/s", sc.File, formatRate(rate))
	case !(rate > 0) || math.IsInf(rate, 0):
		return nil, fmt.Errorf("production rate %v: want a rate of originals above 0", rate)
	case rate == peak:
		return sc, nil
	}
	k := rate / peak
	out := *sc
	w := &out.Workload
	if w.Rate != nil {
		r := generators.Rate(float64(*w.Rate) * k)
		w.Rate = &r
	}
	w.Profile = slices.Clone(w.Profile)
	for i := range w.Profile {
		w.Profile[i].Rate = generators.Rate(float64(w.Profile[i].Rate) * k)
	}
	if err := out.Validate(); err != nil {
		var lines []string
		for _, e := range unjoin(err) {
			lines = append(lines, e.Error())
		}
		return nil, fmt.Errorf("production rate %s/s is %.4g times the scenario's %s/s, which the simulator cannot run: %s",
			formatRate(rate), k, formatRate(peak), lines[0])
	}
	return &out, nil
}

// unjoin returns the errors joined in err, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()
	}
	return []error{err}
}
