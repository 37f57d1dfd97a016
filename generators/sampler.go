package generators

import (
	"math"
	"math/rand/v2"

	"github.com/dedupsim/dedupsim/generators/randvar"
)

// Bounds on single draws, so that a heavy tail (a Pareto with a small
// alpha) cannot overflow a timestamp or make one event resend forever.
const (
	// maxDrawMicros caps a time draw: 100 years.
	maxDrawMicros = 100 * 365 * 24 * 3600 * 1e6
	// maxExtraCopies caps the extra copies of one event.
	maxExtraCopies = 1 << 20
)

// MaxExtraCopies is the most extra copies one event gets, whatever its
// count distribution draws.
const MaxExtraCopies = maxExtraCopies

// sampler draws one part's values: a distribution of the workload over
// the part's own stream.
type sampler struct {
	d   randvar.Sampler
	rng *rand.Rand
}

// newSampler returns a sampler of s drawing from rng. The zero Spec, and
// a family randvar does not know, draw constant 0.
func newSampler(s randvar.Spec, rng *rand.Rand) sampler {
	d, err := randvar.New(s)
	if err != nil {
		d = randvar.Constant(0)
	}
	return sampler{d: d, rng: rng}
}

// micros draws a time and returns it in whole microseconds, rounded to the
// nearest, within [0, 100 years].
func (s *sampler) micros() int64 {
	v := math.Round(s.d.Sample(s.rng) * 1e6)
	switch {
	case v > maxDrawMicros:
		return maxDrawMicros
	case v > 0:
		return int64(v)
	}
	return 0 // also NaN
}

// count draws a count of extra copies: the draw rounded to the nearest
// whole number (a geometric and a count uniform draw whole numbers
// already, see randvar), at least 1 and at most maxExtraCopies.
func (s *sampler) count() uint32 {
	v := math.Round(s.d.Sample(s.rng))
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
