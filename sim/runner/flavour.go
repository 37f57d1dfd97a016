package runner

import (
	"github.com/dedupsim/dedupsim/metrics"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// flavour classifies a plan's dedup for the reports' one look per API
// (metrics.Flavour*): a single dropDuplicatesWithinWatermark; a single
// dropDuplicates with the watermarked event time among its keys
// (pair-keyed); a single dropDuplicates no watermark reaches (unbounded,
// a watermark after it included); anything else.
func flavour(p chain.Plan) string {
	d := p.Dedups()
	if len(d) != 1 {
		return metrics.FlavourOther
	}
	n := p.Nodes[d[0]]
	switch {
	case n.Op.Kind == chain.TransformWithStateDedup:
		// A processing-time TTL, or an event-time timer from the first
		// copy (keyed on the id alone, as within-watermark, but its
		// horizon is the timer, not the delay): none of the three looks.
		return metrics.FlavourOther
	case n.Op.Kind == chain.DropDuplicatesWithinWatermark:
		return metrics.FlavourWithin
	case n.WatermarkReaches && n.EventTimeInKeys:
		return metrics.FlavourPairKeyed
	case !n.WatermarkReaches:
		return metrics.FlavourUnbounded
	}
	return metrics.FlavourOther
}

// keyHorizon returns how long, in seconds of event time, the plan keeps a
// key, with trigger in seconds: a pair-keyed dropDuplicates keeps it until
// the watermark (the largest event time seen a trigger ago, minus the
// delay) passes its event time, about delay + trigger; a
// dropDuplicatesWithinWatermark until it passes the first event time plus
// the delay, about 2 x delay + trigger. Over several dedups, the longest.
// ok is false when some dedup never evicts.
func keyHorizon(p chain.Plan, trigger float64) (h float64, ok bool) {
	for _, i := range p.Dedups() {
		n := p.Nodes[i]
		if !n.Evicts() {
			return 0, false
		}
		d := float64(n.DelayMs) / 1000
		switch n.Op.Kind {
		case chain.DropDuplicatesWithinWatermark:
			d *= 2
		case chain.TransformWithStateDedup:
			// A processing-time TTL from the key's first copy, removed by
			// the first batch at or after it: about TTL + trigger. An
			// event-time timer at the first copy's event time + horizon
			// fires once the watermark (a delay behind) passes it: about
			// horizon + delay + trigger.
			d = float64(n.Op.TTLMs) / 1000
			if n.Op.TimerMs > 0 {
				d = float64(n.Op.TimerMs+n.DelayMs) / 1000
			}
		}
		h = max(h, d+trigger)
	}
	return h, len(p.Dedups()) > 0
}
