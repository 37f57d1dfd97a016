package fit

import (
	"math"

	"github.com/dedupsim/dedupsim/generators/randvar"
	"gonum.org/v1/gonum/stat"
)

// CountFit is a fitted count distribution: the extra copies of a resent
// event.
type CountFit struct {
	// Spec is the chosen distribution; an empirical one holds the
	// observed counts in Samples.
	Spec randvar.Spec `json:"spec"`
	// TV is the total-variation distance between the observed counts and
	// the chosen family (0 for empirical).
	TV float64 `json:"tv"`
	// Mean is the mean number of extra copies with a normal-approximation
	// 95% interval.
	Mean Interval `json:"mean"`
	// Histogram counts the events by extra copies: Histogram[k] events had
	// k extra copies (index 0 unused).
	Histogram []int64 `json:"histogram"`
}

// maxTV is the largest total-variation distance at which a family is
// taken rather than the observed counts.
const maxTV = 0.02

// fitCounts fits the extra copies of resent events from hist (hist[k]:
// events with k extra copies, k >= 1): constant, uniform or geometric,
// whichever is closest in total variation when within maxTV (plus the
// sampling noise 1/sqrt(n)), else empirical with the observed counts.
func fitCounts(hist []int64) CountFit {
	f := CountFit{Histogram: hist}
	var n, lo, hi int64
	var vals, wts []float64
	for k := 1; k < len(hist); k++ {
		if hist[k] == 0 {
			continue
		}
		if lo == 0 {
			lo = int64(k)
		}
		hi = int64(k)
		n += hist[k]
		vals = append(vals, float64(k))
		wts = append(wts, float64(hist[k]))
	}
	if n == 0 {
		f.Spec = randvar.Spec{Kind: randvar.KindConstant, Value: 1, Counts: true}
		f.Mean = Interval{Value: 1, Lo: 1, Hi: 1, Method: "no resent events"}
		return f
	}
	mean, sd := stat.MeanStdDev(vals, wts)
	if math.IsNaN(sd) {
		sd = 0
	}
	h := 1.959964 * sd / math.Sqrt(float64(n))
	f.Mean = Interval{Value: mean, Lo: mean - h, Hi: mean + h, Method: "normal approximation, 95%"}
	pmfs := map[randvar.Kind]func(k int64) float64{
		randvar.KindConstant: func(k int64) float64 {
			if lo == hi && k == lo {
				return 1
			}
			return 0
		},
		randvar.KindUniform: func(k int64) float64 {
			if k >= lo && k <= hi {
				return 1 / float64(hi-lo+1)
			}
			return 0
		},
		randvar.KindGeometric: func(k int64) float64 {
			p := 1 / mean
			return p * math.Pow(1-p, float64(k-1))
		},
	}
	specs := map[randvar.Kind]randvar.Spec{
		randvar.KindConstant:  {Kind: randvar.KindConstant, Value: float64(lo), Counts: true},
		randvar.KindUniform:   {Kind: randvar.KindUniform, Min: float64(lo), Max: float64(hi), Counts: true},
		randvar.KindGeometric: {Kind: randvar.KindGeometric, Mean: mean, Counts: true},
	}
	best, bestTV := randvar.Kind(""), math.Inf(1)
	for _, k := range []randvar.Kind{randvar.KindConstant, randvar.KindUniform, randvar.KindGeometric} {
		pmf := pmfs[k]
		var tv, covered float64
		for c := int64(1); c < int64(len(hist)); c++ {
			p := pmf(c)
			covered += p
			tv += math.Abs(float64(hist[c])/float64(n) - p)
		}
		tv = (tv + (1 - covered)) / 2
		if tv < bestTV {
			best, bestTV = k, tv
		}
	}
	if bestTV <= maxTV+1/math.Sqrt(float64(n)) && !(best == randvar.KindGeometric && mean <= 1) {
		f.Spec, f.TV = specs[best], bestTV
		return f
	}
	var samples []float64
	for k := 1; k < len(hist); k++ {
		// The empirical file holds one line per value: the proportions
		// of the histogram in at most 1000 lines.
		reps := int64(math.Round(float64(hist[k]) / float64(n) * 1000))
		for range reps {
			samples = append(samples, float64(k))
		}
	}
	f.Spec = randvar.Spec{Kind: randvar.KindEmpirical, Samples: samples, Counts: true}
	return f
}
