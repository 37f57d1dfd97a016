package generators

import "math/rand/v2"

// arrivalDelay moves each original's event time back from its arrival by
// a draw of workload.arrivalDelay: event_time = arrival - delay. Arrivals
// stay in order while event times do not, which is the out-of-order input
// a watermark exists for.
type arrivalDelay struct {
	in    stage
	src   *rand.PCG
	delay sampler
}

func newArrivalDelay(in stage, s sampler, src *rand.PCG) *arrivalDelay {
	return &arrivalDelay{in: in, src: src, delay: s}
}

func (a *arrivalDelay) peek() (int64, bool) { return a.in.peek() }

func (a *arrivalDelay) next(r *Row) bool {
	if !a.in.next(r) {
		return false
	}
	r.EventTime = r.Arrival - a.delay.micros()
	return true
}

func (a *arrivalDelay) save(e *encoder) { e.pcg(a.src) }
func (a *arrivalDelay) load(d *decoder) { d.pcg(a.src) }
