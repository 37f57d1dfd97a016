// Package randvar holds the distributions of dedupsim's workloads, one
// type per family (Constant, Uniform, Exponential, LogNormal, Pareto,
// Geometric, Empirical), after pebble's internal/randvar: each draws from
// a random stream the caller passes in, never from a global one, and New
// builds one from its description (Spec), so that neither the generators
// nor the scenario loader switch on a family.
//
// Each type also gives its CDF and quantiles, which the capacity
// planner's closed-form model integrates over; for a count distribution
// CountPMF gives the probability of each count as the generators draw it.
package randvar

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Sampler draws values of one distribution: seconds for a time
// distribution, a count for a count distribution (whole for Geometric,
// a whole-number Uniform, and whole-valued Constant and Empirical ones;
// callers round the others).
type Sampler interface {
	// Sample draws one value from rng. It does not allocate.
	Sample(rng *rand.Rand) float64
}

// Dist is a Sampler whose distribution function is known.
type Dist interface {
	Sampler
	// CDF returns P(X <= x).
	CDF(x float64) float64
	// Quantile returns the x at which CDF(x) = p.
	Quantile(p float64) float64
}

// New returns the distribution s describes. The zero Spec is Constant 0.
// A Spec that Check rejects may still build, but draws nothing useful;
// only a family New does not know is an error.
func New(s Spec) (Dist, error) {
	switch s.Kind {
	case "":
		return Constant(0), nil
	case KindConstant:
		return Constant(s.Value), nil
	case KindUniform:
		return Uniform{Min: s.Min, Max: s.Max, Whole: s.Counts}, nil
	case KindExponential:
		return NewExponential(s.Mean), nil
	case KindLogNormal:
		mu, sigma := s.LogNormalParams()
		return LogNormal{Mu: mu, Sigma: sigma}, nil
	case KindPareto:
		return Pareto{Xm: s.Min, Alpha: s.Alpha}, nil
	case KindGeometric:
		return NewGeometric(s.Mean), nil
	case KindEmpirical:
		return Empirical(s.Samples), nil
	}
	return nil, fmt.Errorf("randvar: unknown distribution %q", s.Kind)
}

// Constant always yields its value.
type Constant float64

// Sample returns c; it draws nothing.
func (c Constant) Sample(*rand.Rand) float64 { return float64(c) }

// CDF is a step at c.
func (c Constant) CDF(x float64) float64 {
	if x >= float64(c) {
		return 1
	}
	return 0
}

// Quantile returns c.
func (c Constant) Quantile(float64) float64 { return float64(c) }

// Uniform yields values uniformly in [Min, Max]; with Whole, whole
// numbers uniformly in [round(Min), round(Max)], each equally likely.
type Uniform struct {
	Min, Max float64
	Whole    bool
}

// Sample draws one value: Min + (Max-Min) U for U uniform in [0, 1), as
// gonum's distuv.Uniform draws it, or a whole number.
func (u Uniform) Sample(rng *rand.Rand) float64 {
	if u.Whole {
		lo, hi := int64(math.Round(u.Min)), int64(math.Round(u.Max))
		return float64(lo + rng.Int64N(hi-lo+1))
	}
	return rng.Float64()*(u.Max-u.Min) + u.Min
}

// CDF returns P(X <= x).
func (u Uniform) CDF(x float64) float64 {
	if u.Whole {
		lo, hi := math.Round(u.Min), math.Round(u.Max)
		return math.Max(0, math.Min(1, (math.Floor(x)-lo+1)/(hi-lo+1)))
	}
	return distuv.Uniform{Min: u.Min, Max: u.Max}.CDF(x)
}

// Quantile returns the x at which CDF(x) = p.
func (u Uniform) Quantile(p float64) float64 {
	if u.Whole {
		lo, hi := math.Round(u.Min), math.Round(u.Max)
		return math.Min(hi, lo+math.Max(0, math.Ceil(p*(hi-lo+1))-1))
	}
	return distuv.Uniform{Min: u.Min, Max: u.Max}.Quantile(p)
}

// Exponential yields values with a given mean.
type Exponential struct {
	mean float64
	// rate is 1/mean, kept as distuv.Exponential keeps it, so that a draw
	// divides by it exactly as gonum does.
	rate float64
}

// NewExponential returns the exponential distribution of mean mean.
func NewExponential(mean float64) Exponential { return Exponential{mean: mean, rate: 1 / mean} }

// Sample draws one value: an Exp(1) draw divided by the rate.
func (e Exponential) Sample(rng *rand.Rand) float64 { return rng.ExpFloat64() / e.rate }

// CDF returns P(X <= x).
func (e Exponential) CDF(x float64) float64 { return distuv.Exponential{Rate: e.rate}.CDF(x) }

// Quantile returns the x at which CDF(x) = p.
func (e Exponential) Quantile(p float64) float64 {
	return distuv.Exponential{Rate: e.rate}.Quantile(p)
}

// LogNormal yields values whose logarithm is normal with mean Mu and
// standard deviation Sigma.
type LogNormal struct{ Mu, Sigma float64 }

// Sample draws one value: exp(N Sigma + Mu) for a standard normal N.
func (l LogNormal) Sample(rng *rand.Rand) float64 { return math.Exp(rng.NormFloat64()*l.Sigma + l.Mu) }

// CDF returns P(X <= x).
func (l LogNormal) CDF(x float64) float64 { return distuv.LogNormal{Mu: l.Mu, Sigma: l.Sigma}.CDF(x) }

// Quantile returns the x at which CDF(x) = p.
func (l LogNormal) Quantile(p float64) float64 {
	return distuv.LogNormal{Mu: l.Mu, Sigma: l.Sigma}.Quantile(p)
}

// Pareto yields values of at least Xm with tail index Alpha.
type Pareto struct{ Xm, Alpha float64 }

// Sample draws one value: Xm exp(E / Alpha) for an Exp(1) draw E.
func (p Pareto) Sample(rng *rand.Rand) float64 { return p.Xm * math.Exp(rng.ExpFloat64()/p.Alpha) }

// CDF returns P(X <= x).
func (p Pareto) CDF(x float64) float64 { return distuv.Pareto{Xm: p.Xm, Alpha: p.Alpha}.CDF(x) }

// Quantile returns the x at which CDF(x) = p.
func (p Pareto) Quantile(q float64) float64 {
	return distuv.Pareto{Xm: p.Xm, Alpha: p.Alpha}.Quantile(q)
}

// Geometric yields counts on {1, 2, ...} with a given mean: the number of
// trials up to the first success, each succeeding with probability
// 1/mean.
type Geometric struct {
	mean float64
	// logQ is ln(1 - 1/mean); 0 when the mean is 1 (always 1).
	logQ float64
}

// NewGeometric returns the geometric distribution of mean mean (at
// least 1).
func NewGeometric(mean float64) Geometric {
	g := Geometric{mean: mean}
	if mean > 1 {
		g.logQ = math.Log1p(-1 / mean)
	}
	return g
}

// Sample draws one count: 1 + floor(ln U / ln(1 - 1/mean)) for U uniform
// in (0, 1]; with mean 1 it draws nothing and returns 1.
func (g Geometric) Sample(rng *rand.Rand) float64 {
	if g.logQ == 0 {
		return 1
	}
	return 1 + math.Floor(math.Log(1-rng.Float64())/g.logQ)
}

// CDF returns P(K <= x).
func (g Geometric) CDF(x float64) float64 {
	if x < 1 {
		return 0
	}
	if g.logQ == 0 {
		return 1
	}
	return 1 - math.Exp(math.Floor(x)*g.logQ)
}

// Quantile returns the smallest count k with CDF(k) >= p.
func (g Geometric) Quantile(p float64) float64 {
	if g.logQ == 0 || p <= 0 {
		return 1
	}
	return math.Max(1, math.Ceil(math.Log1p(-p)/g.logQ))
}

// Empirical yields one of its sorted samples, each equally likely.
type Empirical []float64

// Sample draws one of the samples.
func (e Empirical) Sample(rng *rand.Rand) float64 { return e[rng.IntN(len(e))] }

// CDF returns the share of samples at or below x.
func (e Empirical) CDF(x float64) float64 {
	return float64(sort.Search(len(e), func(i int) bool { return e[i] > x })) / float64(len(e))
}

// Quantile returns the sample at rank ceil(p n).
func (e Empirical) Quantile(p float64) float64 {
	i := int(math.Ceil(p*float64(len(e)))) - 1
	return e[min(max(i, 0), len(e)-1)]
}

// CountPMF returns P(K = k) for k = 1, 2, ... of a count distribution as
// the generators draw it: a geometric or whole-number uniform as is, any
// other family rounded to the nearest whole number, and at least 1. The
// tail beyond a cumulative 1 - eps (or maxK copies, where the rest is
// counted) is dropped.
func CountPMF(d Dist, maxK int, eps float64) []float64 {
	var out []float64
	add := func(k int, p float64) {
		k = min(max(k, 1), maxK)
		for len(out) < k {
			out = append(out, 0)
		}
		out[k-1] += p
	}
	switch d := d.(type) {
	case Geometric:
		if d.logQ == 0 {
			return []float64{1}
		}
		q := 1 - 1/d.mean
		left := 1.0
		for k := 1; k <= maxK && left > eps; k++ {
			p := (1 - q) * math.Pow(q, float64(k-1))
			add(k, p)
			left -= p
		}
	case Uniform:
		lo, hi := int(math.Round(d.Min)), int(math.Round(d.Max))
		for k := lo; k <= hi; k++ {
			add(k, 1/float64(hi-lo+1))
		}
	case Empirical:
		for _, v := range d {
			add(int(math.Round(v)), 1/float64(len(d)))
		}
	case Constant:
		add(int(math.Round(float64(d))), 1)
	default:
		prev := 0.0
		for k := 1; k <= maxK && prev < 1-eps; k++ {
			c := d.CDF(float64(k) + 0.5)
			add(k, c-prev)
			prev = c
		}
	}
	return out
}

// CountMean returns the mean of a count distribution as the generators
// draw it (see CountPMF): a constant's value and a uniform's bounds
// rounded, an exponential's or a geometric's mean, a lognormal's
// exp(mu + sigma^2/2), a Pareto's alpha x_m / (alpha - 1) (infinite for
// alpha <= 1), an empirical distribution's average; before the cap on
// copies and the floor of 1, which the caller applies.
func CountMean(d Dist) float64 {
	switch d := d.(type) {
	case Constant:
		return math.Round(float64(d))
	case Uniform:
		return (math.Round(d.Min) + math.Round(d.Max)) / 2
	case Exponential:
		return d.mean
	case Geometric:
		return d.mean
	case LogNormal:
		return math.Exp(d.Mu + d.Sigma*d.Sigma/2)
	case Pareto:
		if d.Alpha > 1 {
			return d.Alpha * d.Xm / (d.Alpha - 1)
		}
		return math.Inf(1)
	case Empirical:
		m := 0.0
		for _, v := range d {
			m += v
		}
		if len(d) > 0 {
			m /= float64(len(d))
		}
		return m
	}
	return math.NaN()
}
