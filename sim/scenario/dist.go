package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// DistKind names a distribution family (the `dist:` key).
type DistKind string

// The distribution families a scenario may use.
const (
	// Constant always yields Value.
	Constant DistKind = "constant"
	// Uniform yields values uniformly in [Min, Max]; as a count
	// distribution, a whole number uniformly in [Min, Max].
	Uniform DistKind = "uniform"
	// Exponential yields values with mean Mean.
	Exponential DistKind = "exponential"
	// LogNormal yields values whose logarithm is normal with mean Mu and
	// standard deviation Sigma, given either directly or as Median and P99.
	LogNormal DistKind = "lognormal"
	// Pareto yields values of at least Min with tail index Alpha.
	Pareto DistKind = "pareto"
	// Geometric yields counts on {1, 2, ...} with mean Mean; it is a count
	// distribution only.
	Geometric DistKind = "geometric"
	// Empirical yields one of Samples, each with equal probability: the
	// observed values of a CSV file.
	Empirical DistKind = "empirical"
)

// timeKinds and countKinds list the families allowed for time and count
// distributions, in the order messages name them.
func timeKinds() []DistKind {
	return []DistKind{Constant, Uniform, Exponential, LogNormal, Pareto, Empirical}
}

func countKinds() []DistKind {
	return []DistKind{Constant, Uniform, Exponential, LogNormal, Pareto, Geometric, Empirical}
}

// params returns the parameter keys of a family, in rendering order. A
// lognormal lists both of its forms; only one form may be given.
func (k DistKind) params() []string {
	switch k {
	case Constant:
		return []string{"value"}
	case Uniform:
		return []string{"min", "max"}
	case Exponential, Geometric:
		return []string{"mean"}
	case LogNormal:
		return []string{"median", "p99", "mu", "sigma"}
	case Pareto:
		return []string{"min", "alpha"}
	case Empirical:
		return []string{"file"}
	}
	return nil
}

// withArticle returns k with its indefinite article, for messages: "an
// exponential", "a lognormal".
func withArticle(k DistKind) string {
	if k == Exponential || k == Empirical {
		return "an " + string(k)
	}
	return "a " + string(k)
}

// z99 is the 99th percentile of the standard normal distribution, which
// turns a lognormal's median and p99 into mu and sigma.
func z99() float64 { return distuv.UnitNormal.Quantile(0.99) }

// Dist is a distribution of a scenario: the family and its parameters in
// canonical units, seconds for a time distribution (delays, skews) and
// counts for a count distribution (retries.copies). Only the parameters of
// Kind are set. The zero Dist (Kind "") stands for an absent optional
// distribution and behaves as constant 0.
type Dist struct {
	// Kind is the family.
	Kind DistKind
	// Counts is set for a count distribution; it decides whether the
	// parameters render as numbers (counts) or durations (seconds).
	Counts bool
	// Value is a constant's value.
	Value float64
	// Min and Max bound a uniform; Min is also a Pareto's scale (x_m).
	Min, Max float64
	// Mean is an exponential's or a geometric's mean.
	Mean float64
	// Median and P99 give a lognormal by its quantiles; when both are zero
	// the lognormal is given by Mu and Sigma.
	Median, P99 float64
	// Mu and Sigma are the mean and standard deviation of a lognormal's
	// logarithm (log-seconds or log-counts).
	Mu, Sigma float64
	// Alpha is a Pareto's tail index.
	Alpha float64
	// File is an empirical distribution's CSV file as written in the
	// scenario (relative to the scenario file).
	File string
	// Samples are an empirical distribution's observed values, sorted.
	Samples []float64
}

// ByQuantiles reports whether a lognormal is given by its median and p99
// rather than by mu and sigma.
func (d Dist) ByQuantiles() bool { return d.Median != 0 || d.P99 != 0 }

// LogNormalParams returns a lognormal's mu and sigma, derived from the
// median and p99 when it is given by quantiles: mu = ln(median) and
// sigma = (ln(p99) - ln(median)) / z where z is the standard normal's 99th
// percentile (about 2.326).
func (d Dist) LogNormalParams() (mu, sigma float64) {
	if !d.ByQuantiles() {
		return d.Mu, d.Sigma
	}
	mu = math.Log(d.Median)
	return mu, (math.Log(d.P99) - mu) / z99()
}

// param returns the value of the numeric parameter key.
func (d Dist) param(key string) float64 {
	switch key {
	case "value":
		return d.Value
	case "min":
		return d.Min
	case "max":
		return d.Max
	case "mean":
		return d.Mean
	case "median":
		return d.Median
	case "p99":
		return d.P99
	case "mu":
		return d.Mu
	case "sigma":
		return d.Sigma
	case "alpha":
		return d.Alpha
	}
	return 0
}

// setParam sets the numeric parameter key.
func (d *Dist) setParam(key string, v float64) {
	switch key {
	case "value":
		d.Value = v
	case "min":
		d.Min = v
	case "max":
		d.Max = v
	case "mean":
		d.Mean = v
	case "median":
		d.Median = v
	case "p99":
		d.P99 = v
	case "mu":
		d.Mu = v
	case "sigma":
		d.Sigma = v
	case "alpha":
		d.Alpha = v
	}
}

// inSeconds reports whether parameter key of d is a time in seconds (as
// opposed to a count, a log-value or a shape).
func (d Dist) inSeconds(key string) bool {
	if d.Counts {
		return false
	}
	switch key {
	case "value", "min", "max", "mean", "median", "p99":
		return true
	}
	return false
}

// formatParam renders parameter key of d as a human reads it: a duration
// for a time in seconds, a number otherwise.
func (d Dist) formatParam(key string) string {
	v := d.param(key)
	if d.inSeconds(key) {
		return formatSeconds(v)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// formatSeconds renders a number of seconds as a duration ("30s"), or as a
// number when it is too large for a time.Duration.
func formatSeconds(s float64) string {
	if math.Abs(s) >= float64(math.MaxInt64)/1e9 || math.IsNaN(s) {
		return strconv.FormatFloat(s, 'g', -1, 64) + "s"
	}
	return Duration(time.Duration(math.Round(s * 1e9))).String()
}

// MarshalJSON renders d with its family's parameters in a fixed order, as
// the scenario file writes them: {"dist":"lognormal","median":"30s","p99":"15m"}.
// An empirical distribution renders its file and the number of samples.
// The zero Dist renders as null.
func (d Dist) MarshalJSON() ([]byte, error) {
	if d.Kind == "" {
		return []byte("null"), nil
	}
	for _, key := range d.Kind.params() {
		if v := d.param(key); math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("scenario: %s distribution: %s is %v, not a number JSON can hold", d.Kind, key, v)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"dist":`)
	k, _ := json.Marshal(string(d.Kind))
	b.Write(k)
	field := func(key string, v []byte) {
		b.WriteString(`,"` + key + `":`)
		b.Write(v)
	}
	for _, key := range d.Kind.params() {
		switch {
		case key == "file":
			f, _ := json.Marshal(d.File)
			field("file", f)
			field("samples", strconv.AppendInt(nil, int64(len(d.Samples)), 10))
		case d.Kind == LogNormal && d.ByQuantiles() != (key == "median" || key == "p99"):
			// Only the form the scenario used.
		case d.inSeconds(key):
			s, _ := json.Marshal(formatSeconds(d.param(key)))
			field(key, s)
		default:
			field(key, strconv.AppendFloat(nil, d.param(key), 'g', -1, 64))
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
