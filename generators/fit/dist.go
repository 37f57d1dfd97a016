package fit

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dedupsim/dedupsim/generators/randvar"
	"gonum.org/v1/gonum/stat"
)

// Interval is an estimate with its confidence interval.
type Interval struct {
	// Value is the point estimate.
	Value float64 `json:"value"`
	// Lo and Hi bound the interval.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Method names how the interval was made.
	Method string `json:"method"`
}

// Contains reports whether x lies in [Lo, Hi].
func (i Interval) Contains(x float64) bool { return x >= i.Lo && x <= i.Hi }

// Candidate is one family tried against observed values.
type Candidate struct {
	// Spec is the family with its fitted parameters.
	Spec randvar.Spec `json:"spec"`
	// KS is the one-sample Kolmogorov-Smirnov statistic of the values
	// against it.
	KS float64 `json:"ks"`
}

// DistFit is a fitted time distribution (seconds).
type DistFit struct {
	// Spec is the chosen distribution; an empirical one holds the
	// observed values in Samples.
	Spec randvar.Spec `json:"spec"`
	// KS is the chosen family's statistic (0 for empirical, against its
	// own values).
	KS float64 `json:"ks"`
	// Critical is the 1% critical value of the statistic for N values,
	// 1.628/sqrt(N).
	Critical float64 `json:"critical"`
	// N is the number of values fitted.
	N int `json:"n"`
	// Candidates are every family tried, best first.
	Candidates []Candidate `json:"candidates"`
	// Params holds the chosen family's parameters with bootstrap
	// intervals, by parameter key ("mu", "sigma", "mean", ...).
	Params map[string]Interval `json:"params"`
	// Values are the observed values, sorted (a bounded sample).
	Values []float64 `json:"-"`
}

// ksCritical99 is the asymptotic 1% critical value of the one-sample
// Kolmogorov-Smirnov statistic times sqrt(n).
const ksCritical99 = 1.628

// bootstrapRounds is the number of percentile-bootstrap resamples.
const bootstrapRounds = 200

// ksStat returns the one-sample Kolmogorov-Smirnov statistic of sorted
// values against cdf: the largest distance between their empirical
// distribution function and cdf.
func ksStat(sorted []float64, cdf func(float64) float64) float64 {
	n := float64(len(sorted))
	var d float64
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		f := cdf(sorted[i])
		d = max(d, math.Abs(float64(j)/n-f), math.Abs(f-float64(i)/n))
		i = j
	}
	return d
}

// fitFamily fits one family to values (in any order) by maximum likelihood; ok is
// false when the family cannot hold them (a lognormal or Pareto with a
// value of 0).
func fitFamily(k randvar.Kind, sorted []float64) (randvar.Spec, bool) {
	lo, hi := slices.Min(sorted), slices.Max(sorted)
	switch k {
	case randvar.KindConstant:
		if hi-lo > 1e-6 {
			return randvar.Spec{}, false
		}
		return randvar.Spec{Kind: k, Value: stat.Mean(sorted, nil)}, true
	case randvar.KindUniform:
		if hi <= lo {
			return randvar.Spec{}, false
		}
		return randvar.Spec{Kind: k, Min: lo, Max: hi}, true
	case randvar.KindExponential:
		m := stat.Mean(sorted, nil)
		if m <= 0 {
			return randvar.Spec{}, false
		}
		return randvar.Spec{Kind: k, Mean: m}, true
	case randvar.KindLogNormal:
		if lo <= 0 {
			return randvar.Spec{}, false
		}
		var s, s2 float64
		for _, v := range sorted {
			l := math.Log(v)
			s += l
			s2 += l * l
		}
		n := float64(len(sorted))
		mu := s / n
		sigma := math.Sqrt(max(s2/n-mu*mu, 0))
		if sigma <= 0 {
			return randvar.Spec{}, false
		}
		return randvar.Spec{Kind: k, Mu: mu, Sigma: sigma}, true
	case randvar.KindPareto:
		if lo <= 0 {
			return randvar.Spec{}, false
		}
		var s float64
		for _, v := range sorted {
			s += math.Log(v / lo)
		}
		if s <= 0 {
			return randvar.Spec{}, false
		}
		return randvar.Spec{Kind: k, Min: lo, Alpha: float64(len(sorted)) / s}, true
	}
	return randvar.Spec{}, false
}

// paramKeys lists the fitted parameters of a family.
func paramKeys(k randvar.Kind) []string {
	switch k {
	case randvar.KindConstant:
		return []string{"value"}
	case randvar.KindUniform:
		return []string{"min", "max"}
	case randvar.KindExponential:
		return []string{"mean"}
	case randvar.KindLogNormal:
		return []string{"mu", "sigma"}
	case randvar.KindPareto:
		return []string{"min", "alpha"}
	}
	return nil
}

// fitTime chooses a time distribution for values (seconds, at least 0):
// the family with the smallest Kolmogorov-Smirnov statistic whose
// statistic is at most the 1% critical value, else empirical. The chosen
// family's parameters get percentile-bootstrap 95% intervals drawn with
// the fixed seed. values is sorted in place.
func fitTime(values []float64, seed uint64) DistFit {
	slices.Sort(values)
	n := len(values)
	f := DistFit{N: n, Values: values, Params: map[string]Interval{}}
	if n == 0 {
		f.Spec = randvar.Spec{Kind: randvar.KindConstant}
		return f
	}
	f.Critical = ksCritical99 / math.Sqrt(float64(n))
	for _, k := range []randvar.Kind{randvar.KindConstant, randvar.KindUniform, randvar.KindExponential, randvar.KindLogNormal, randvar.KindPareto} {
		s, ok := fitFamily(k, values)
		if !ok {
			continue
		}
		d, err := randvar.New(s)
		if err != nil {
			continue
		}
		f.Candidates = append(f.Candidates, Candidate{Spec: s, KS: ksStat(values, d.CDF)})
	}
	slices.SortStableFunc(f.Candidates, func(a, b Candidate) int { return cmpFloat(a.KS, b.KS) })
	if len(f.Candidates) > 0 && f.Candidates[0].KS <= f.Critical {
		f.Spec, f.KS = f.Candidates[0].Spec, f.Candidates[0].KS
		f.Params = bootstrapParams(f.Spec.Kind, values, seed)
		return f
	}
	f.Spec = randvar.Spec{Kind: randvar.KindEmpirical, Samples: values}
	return f
}

// bootstrapParams refits family k to bootstrapRounds resamples of values
// (drawn with replacement from a PCG seeded with seed) and returns each
// parameter's estimate on values with the 2.5% and 97.5% quantiles of its
// resampled estimates.
func bootstrapParams(k randvar.Kind, values []float64, seed uint64) map[string]Interval {
	keys := paramKeys(k)
	point, _ := fitFamily(k, values)
	out := map[string]Interval{}
	rng := rand.New(rand.NewPCG(seed, 0x62_6f_6f_74))
	draws := make([][]float64, len(keys))
	re := make([]float64, len(values))
	for range bootstrapRounds {
		for i := range re {
			re[i] = values[rng.IntN(len(values))]
		}
		s, ok := fitFamily(k, re)
		if !ok {
			continue
		}
		for j, key := range keys {
			draws[j] = append(draws[j], s.Param(key))
		}
	}
	for j, key := range keys {
		iv := Interval{Value: point.Param(key), Lo: point.Param(key), Hi: point.Param(key), Method: "percentile bootstrap, 200 resamples, fixed seed"}
		if len(draws[j]) > 0 {
			slices.Sort(draws[j])
			iv.Lo = min(iv.Value, stat.Quantile(0.025, stat.Empirical, draws[j], nil))
			iv.Hi = max(iv.Value, stat.Quantile(0.975, stat.Empirical, draws[j], nil))
		}
		out[key] = iv
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// wilson returns the Wilson score 95% interval of k successes in n.
func wilson(k, n int64) Interval {
	iv := Interval{Method: "Wilson score interval, 95%"}
	if n == 0 {
		return iv
	}
	p := float64(k) / float64(n)
	z := 1.959964
	nf := float64(n)
	den := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / den
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	iv.Value, iv.Lo, iv.Hi = p, max(0, c-h), min(1, c+h)
	return iv
}
