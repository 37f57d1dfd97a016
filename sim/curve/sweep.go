package curve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/scenario"
)

// Resolution returns the delays of the plan's search resolution up to
// maxD: every second up to 199 s, then steps of 1% of the delay in whole
// seconds.
func Resolution(maxD time.Duration) []time.Duration {
	var ds []time.Duration
	for d := Unit; d <= maxD; {
		ds = append(ds, d)
		d += max(Unit, (d / 100).Truncate(Unit))
	}
	return ds
}

// Points samples c at Resolution(c.Max), at the delays it tracked the
// state of and at also (those on the curve), in increasing order.
func (c *Curve) Points(also []time.Duration) []metrics.CurvePoint {
	ds := Resolution(c.Max)
	for d := range c.state {
		ds = append(ds, d)
	}
	ds = append(ds, also...)
	slices.Sort(ds)
	ds = slices.Compact(ds)
	out := make([]metrics.CurvePoint, 0, len(ds))
	for _, d := range ds {
		p, ok := c.At(d)
		if !ok {
			continue
		}
		cp := metrics.CurvePoint{DelaySeconds: d.Seconds(), MissedRate: p.Summary.MissedDuplicateRate, FalseDropRate: p.Summary.FalseDropRate,
			FalseDropsByCause: p.Summary.FalseDropsByCause}
		if p.HasState {
			r, b := p.Summary.PeakStateRows, p.Summary.PeakStateBytes
			cp.PeakStateRows, cp.PeakStateBytes = &r, &b
		}
		out = append(out, cp)
	}
	return out
}

// maxStateLine bounds the delays a sweep's curve tracks the state of
// besides the swept ones: each costs a little per batch and up to
// 256 KiB.
const maxStateLine = 32

// ForSweep computes the curve of every query a sweep of sc reruns with
// each delay (Query.IsSwept) that the curve supports, from 0 to the
// largest swept delay, on sc's seed: its rates at every delay of the
// resolution, and its peak state at the swept delays and at up to
// maxStateLine delays spread over the resolution (the line between
// them). Every other query is named with the reason in Unsupported, and
// so are all of them when a swept delay is not whole seconds.
func ForSweep(ctx context.Context, sc *scenario.Scenario) (*metrics.Curves, error) {
	out := &metrics.Curves{Format: metrics.CurvesFormat, Scenario: sc.Name, Seed: sc.Seed, Queries: []metrics.QueryCurve{}}
	if sc.Sweep == nil || len(sc.Sweep.Delay) == 0 {
		return nil, fmt.Errorf("%s: no delays to sweep", sc.File)
	}
	var swept []time.Duration
	for _, d := range sc.Sweep.Delay {
		swept = append(swept, d.Std())
	}
	maxD := slices.Max(swept)
	var frac time.Duration = -1
	for _, d := range swept {
		if d%Unit != 0 {
			frac = d
		}
	}
	res := Resolution(maxD)
	state := slices.Clone(swept)
	step := max(1, len(res)/maxStateLine)
	for i := 0; i < len(res); i += step {
		state = append(state, res[i])
	}
	state = append(state, maxD)
	for _, q := range sc.Queries {
		if !q.IsSwept() {
			continue
		}
		if frac >= 0 {
			out.Unsupported = append(out.Unsupported, metrics.CurveRefusal{Query: q.Name,
				Reason: fmt.Sprintf("the swept delay %s is not whole seconds, the curve's resolution", frac)})
			continue
		}
		c, err := Compute(ctx, sc, q.Name, Options{MaxDelay: maxD, StateDelays: state})
		if errors.Is(err, ErrUnsupported) {
			out.Unsupported = append(out.Unsupported, metrics.CurveRefusal{Query: q.Name, Reason: err.Error()})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the curve of %s: %w", q.Name, err)
		}
		out.Queries = append(out.Queries, metrics.QueryCurve{Query: q.Name, Points: c.Points(swept)})
	}
	return out, nil
}

// WriteSweep writes a sweep's curves into the results folder dir as
// curves.json, which the report's horizon chart draws.
func WriteSweep(dir string, c *metrics.Curves) error { return metrics.WriteCurves(dir, c) }
