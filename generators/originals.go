package generators

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// segment is one step of the rate profile.
type segment struct {
	forNs int64   // length in nanoseconds
	rate  float64 // originals per second
}

// originals is the base stage: the original rows, arriving by a Poisson
// process whose rate follows the profile, repeated to fill the window
// [start, start+duration). Each original gets its id, customer and
// payload here; its event time is its arrival until arrivalDelay moves it.
//
// The process is sampled by time rescaling: each gap is one Exp(1) draw of
// "work", spent at the current segment's rate (work / rate seconds) and
// carried over segment ends, so a stall (rate 0) costs nothing and a rate
// change is exact. Whole cycles of the profile that the remaining work
// spans are skipped at once, so a low rate over a short profile costs O(1)
// per original.
type originals struct {
	segs        []segment
	cycleNs     int64   // length of one pass of the profile
	cycleWork   float64 // expected originals per pass
	windowS     float64 // the window's length in seconds
	startMicros int64
	endMicros   int64 // start + duration: no original arrives at or after it
	customers   int64

	arrivals  *rand.PCG
	work      distuv.Exponential
	custSrc   *rand.PCG
	custRNG   *rand.Rand
	payload   *rand.PCG
	t         float64 // the next original's arrival, seconds after start
	segIdx    int     // the segment holding t
	segEndNs  int64   // that segment's end, nanoseconds after start
	nextAt    int64   // the next original's arrival, microseconds since the epoch
	exhausted bool
}

func newOriginals(segs []segment, startMicros, durationNs int64, customers int64, seed uint64) *originals {
	o := &originals{
		segs:        segs,
		windowS:     float64(durationNs) / 1e9,
		startMicros: startMicros,
		endMicros:   startMicros + durationNs/1000,
		customers:   customers,
		arrivals:    newStream(seed, partArrivals),
		custSrc:     newStream(seed, partCustomers),
		payload:     newStream(seed, partPayload),
	}
	o.work = distuv.Exponential{Rate: 1, Src: o.arrivals}
	o.custRNG = rand.New(o.custSrc)
	for _, s := range segs {
		o.cycleNs += s.forNs
		o.cycleWork += s.rate * float64(s.forNs) / 1e9
	}
	if o.cycleWork <= 0 {
		o.exhausted = true // every segment is a stall: no originals at all
		return o
	}
	o.segEndNs = segs[0].forNs
	o.advance()
	return o
}

// advance places the next original, or marks the stage exhausted when it
// would arrive at or after the end of the window.
func (o *originals) advance() {
	work := o.work.Rand()
	for {
		seg := o.segs[o.segIdx]
		end := float64(o.segEndNs) / 1e9
		if seg.rate > 0 {
			if need := work / seg.rate; o.t+need < end {
				o.t += need
				break
			}
			work = max(work-(end-o.t)*seg.rate, 0)
		}
		if end >= o.windowS {
			o.exhausted = true
			return
		}
		o.t = end
		o.segIdx++
		if o.segIdx == len(o.segs) {
			o.segIdx = 0
			if n := math.Floor(work / o.cycleWork); n >= 1 {
				cycles := math.Ceil((o.windowS - o.t) / (float64(o.cycleNs) / 1e9))
				n = min(n, cycles)
				o.segEndNs += int64(n) * o.cycleNs
				o.t = float64(o.segEndNs) / 1e9
				work = max(work-n*o.cycleWork, 0)
			}
		}
		o.segEndNs += o.segs[o.segIdx].forNs
	}
	at := o.startMicros + int64(o.t*1e6)
	if at >= o.endMicros {
		o.exhausted = true
		return
	}
	o.nextAt = at
}

func (o *originals) peek() (int64, bool) { return o.nextAt, !o.exhausted }

func (o *originals) next(r *Row) bool {
	if o.exhausted {
		return false
	}
	at := o.nextAt
	*r = Row{
		CustomerID: o.custRNG.Int64N(o.customers),
		EventTime:  at,
		IngestTime: at,
		Arrival:    at,
		Payload:    int64(o.payload.Uint64()),
		Truth:      Truth{Copies: 1},
	}
	o.advance()
	return true
}

func (o *originals) save(e *encoder) {
	e.pcg(o.arrivals)
	e.pcg(o.custSrc)
	e.pcg(o.payload)
	e.f64(o.t)
	e.i64(int64(o.segIdx))
	e.i64(o.segEndNs)
	e.i64(o.nextAt)
	e.flag(o.exhausted)
}

func (o *originals) load(d *decoder) {
	d.pcg(o.arrivals)
	d.pcg(o.custSrc)
	d.pcg(o.payload)
	o.t = d.f64()
	idx := d.i64()
	o.segEndNs = d.i64()
	o.nextAt = d.i64()
	o.exhausted = d.flag()
	if idx < 0 || idx >= int64(len(o.segs)) {
		d.fail(fmt.Errorf("segment %d out of range", idx))
		return
	}
	o.segIdx = int(idx)
}
