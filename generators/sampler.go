package generators

import (
	"math"
	"math/rand/v2"

	"github.com/dedupsim/dedupsim/sim/scenario"
	"gonum.org/v1/gonum/stat/distuv"
)

// Bounds on single draws, so that a heavy tail (a Pareto with a small
// alpha) cannot overflow a timestamp or make one event resend forever.
const (
	// maxDrawMicros caps a time draw: 100 years.
	maxDrawMicros = 100 * 365 * 24 * 3600 * 1e6
	// maxExtraCopies caps the extra copies of one event.
	maxExtraCopies = 1 << 20
)

// sampler draws from one scenario distribution with the stream of its
// part. Continuous families draw through gonum's distuv with Src set to
// the part's PCG (a distuv draw does not allocate: see
// TestDistuvDrawsDoNotAllocate); constant, geometric and empirical are
// drawn here, as distuv has no geometric.
type sampler struct {
	kind  scenario.DistKind
	value float64
	exp   distuv.Exponential
	logn  distuv.LogNormal
	unif  distuv.Uniform
	par   distuv.Pareto
	// lo and hi bound a count uniform, which draws whole numbers.
	lo, hi int64
	// logQ is ln(1 - 1/mean) of a geometric; 0 when the mean is 1.
	logQ    float64
	samples []float64
	rng     *rand.Rand
}

// newSampler returns a sampler of d drawing from src. The zero Dist draws
// constant 0.
func newSampler(d scenario.Dist, src *rand.PCG) sampler {
	s := sampler{kind: d.Kind, rng: rand.New(src)}
	switch d.Kind {
	case scenario.Constant:
		s.value = d.Value
	case scenario.Uniform:
		s.unif = distuv.Uniform{Min: d.Min, Max: d.Max, Src: src}
		s.lo, s.hi = int64(math.Round(d.Min)), int64(math.Round(d.Max))
	case scenario.Exponential:
		s.exp = distuv.Exponential{Rate: 1 / d.Mean, Src: src}
	case scenario.LogNormal:
		mu, sigma := d.LogNormalParams()
		s.logn = distuv.LogNormal{Mu: mu, Sigma: sigma, Src: src}
	case scenario.Pareto:
		s.par = distuv.Pareto{Xm: d.Min, Alpha: d.Alpha, Src: src}
	case scenario.Geometric:
		if d.Mean > 1 {
			s.logQ = math.Log1p(-1 / d.Mean)
		}
	case scenario.Empirical:
		s.samples = d.Samples
	default:
		s.kind = scenario.Constant
	}
	return s
}

// draw returns one value in the distribution's canonical unit (seconds or
// a count, before rounding).
func (s *sampler) draw() float64 {
	switch s.kind {
	case scenario.Uniform:
		return s.unif.Rand()
	case scenario.Exponential:
		return s.exp.Rand()
	case scenario.LogNormal:
		return s.logn.Rand()
	case scenario.Pareto:
		return s.par.Rand()
	case scenario.Empirical:
		return s.samples[s.rng.IntN(len(s.samples))]
	}
	return s.value
}

// micros draws a time and returns it in whole microseconds, rounded to the
// nearest, within [0, 100 years].
func (s *sampler) micros() int64 {
	v := math.Round(s.draw() * 1e6)
	switch {
	case v > maxDrawMicros:
		return maxDrawMicros
	case v > 0:
		return int64(v)
	}
	return 0 // also NaN
}

// count draws a count of extra copies: a geometric on {1, 2, ...} with the
// given mean (1 + floor(ln U / ln(1 - 1/mean)) for U uniform in (0, 1]); a
// uniform as a whole number in [min, max], each equally likely; any other
// family rounded to the nearest whole number. The result is at least 1 and
// at most maxExtraCopies.
func (s *sampler) count() uint32 {
	var v float64
	switch s.kind {
	case scenario.Geometric:
		v = 1
		if s.logQ != 0 {
			v += math.Floor(math.Log(1-s.rng.Float64()) / s.logQ)
		}
	case scenario.Uniform:
		v = float64(s.lo + s.rng.Int64N(s.hi-s.lo+1))
	default:
		v = math.Round(s.draw())
	}
	switch {
	case v > maxExtraCopies:
		return maxExtraCopies
	case v >= 1:
		return uint32(v)
	}
	return 1 // also NaN
}

// addMicros returns t + d for a draw d >= 0, saturating at the largest
// time instead of wrapping around, so that a pathological tail cannot put
// a row before the ones it follows.
func addMicros(t, d int64) int64 {
	if t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}
