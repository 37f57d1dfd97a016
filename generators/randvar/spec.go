package randvar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/internal/echo"
	"gonum.org/v1/gonum/stat/distuv"
)

// Kind names a distribution family (a scenario's `dist:` key).
type Kind string

// The distribution families.
const (
	// KindConstant always yields Value.
	KindConstant Kind = "constant"
	// KindUniform yields values uniformly in [Min, Max]; as a count
	// distribution, a whole number uniformly in [Min, Max].
	KindUniform Kind = "uniform"
	// KindExponential yields values with mean Mean.
	KindExponential Kind = "exponential"
	// KindLogNormal yields values whose logarithm is normal with mean Mu
	// and standard deviation Sigma, given either directly or as Median
	// and P99.
	KindLogNormal Kind = "lognormal"
	// KindPareto yields values of at least Min with tail index Alpha.
	KindPareto Kind = "pareto"
	// KindGeometric yields counts on {1, 2, ...} with mean Mean; it is a
	// count distribution only.
	KindGeometric Kind = "geometric"
	// KindEmpirical yields one of Samples, each with equal probability:
	// the observed values of a CSV file.
	KindEmpirical Kind = "empirical"
)

// TimeKinds lists the families of a time distribution, in the order
// messages name them.
func TimeKinds() []Kind {
	return []Kind{KindConstant, KindUniform, KindExponential, KindLogNormal, KindPareto, KindEmpirical}
}

// CountKinds lists the families of a count distribution.
func CountKinds() []Kind {
	return []Kind{KindConstant, KindUniform, KindExponential, KindLogNormal, KindPareto, KindGeometric, KindEmpirical}
}

// Params returns the parameter keys of a family, in rendering order. A
// lognormal lists both of its forms; only one form may be given.
func (k Kind) Params() []string {
	switch k {
	case KindConstant:
		return []string{"value"}
	case KindUniform:
		return []string{"min", "max"}
	case KindExponential, KindGeometric:
		return []string{"mean"}
	case KindLogNormal:
		return []string{"median", "p99", "mu", "sigma"}
	case KindPareto:
		return []string{"min", "alpha"}
	case KindEmpirical:
		return []string{"file"}
	}
	return nil
}

// AllParams lists every parameter key of every family, in schema order.
func AllParams() []string {
	return []string{"value", "min", "max", "mean", "median", "p99", "mu", "sigma", "alpha", "file"}
}

// WithArticle returns k with its indefinite article, for messages: "an
// exponential", "a lognormal".
func (k Kind) WithArticle() string {
	if k == KindExponential || k == KindEmpirical {
		return "an " + string(k)
	}
	return "a " + string(k)
}

// ParamsText lists the parameters of a family for messages.
func (k Kind) ParamsText() string {
	if k == KindLogNormal {
		return "{median, p99} or {mu, sigma}"
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range k.Params() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p)
	}
	b.WriteByte('}')
	return b.String()
}

// Spec describes a distribution: the family and its parameters in
// canonical units, seconds for a time distribution (delays, skews) and
// counts for a count distribution (the extra copies of a retried event).
// Only the parameters of Kind are set. The zero Spec (Kind "") stands for
// an absent optional distribution and draws constant 0. New turns a Spec
// into the distribution.
type Spec struct {
	// Kind is the family.
	Kind Kind
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
	// File is an empirical distribution's CSV file as the configuration
	// names it.
	File string
	// Samples are an empirical distribution's observed values, sorted.
	Samples []float64
}

// ByQuantiles reports whether a lognormal is given by its median and p99
// rather than by mu and sigma.
func (s Spec) ByQuantiles() bool { return s.Median != 0 || s.P99 != 0 }

// z99 is the 99th percentile of the standard normal distribution, which
// turns a lognormal's median and p99 into mu and sigma.
func z99() float64 { return distuv.UnitNormal.Quantile(0.99) }

// LogNormalParams returns a lognormal's mu and sigma, derived from the
// median and p99 when it is given by quantiles: mu = ln(median) and
// sigma = (ln(p99) - ln(median)) / z where z is the standard normal's 99th
// percentile (about 2.326).
func (s Spec) LogNormalParams() (mu, sigma float64) {
	if !s.ByQuantiles() {
		return s.Mu, s.Sigma
	}
	mu = math.Log(s.Median)
	return mu, (math.Log(s.P99) - mu) / z99()
}

// Param returns the value of the numeric parameter key.
func (s Spec) Param(key string) float64 {
	if p := s.param(key); p != nil {
		return *p
	}
	return 0
}

// SetParam sets the numeric parameter key.
func (s *Spec) SetParam(key string, v float64) {
	if p := s.param(key); p != nil {
		*p = v
	}
}

func (s *Spec) param(key string) *float64 {
	switch key {
	case "value":
		return &s.Value
	case "min":
		return &s.Min
	case "max":
		return &s.Max
	case "mean":
		return &s.Mean
	case "median":
		return &s.Median
	case "p99":
		return &s.P99
	case "mu":
		return &s.Mu
	case "sigma":
		return &s.Sigma
	case "alpha":
		return &s.Alpha
	}
	return nil
}

// InSeconds reports whether parameter key of s is a time in seconds (as
// opposed to a count, a log-value or a shape).
func (s Spec) InSeconds(key string) bool {
	if s.Counts {
		return false
	}
	switch key {
	case "value", "min", "max", "mean", "median", "p99":
		return true
	}
	return false
}

// FormatParam renders parameter key of s as a human reads it: a duration
// for a time in seconds, a number otherwise.
func (s Spec) FormatParam(key string) string {
	v := s.Param(key)
	if s.InSeconds(key) {
		return FormatSeconds(v)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// FormatSeconds renders a number of seconds as a duration ("30s"), or as
// a number when it is too large for a time.Duration.
func FormatSeconds(s float64) string {
	if math.Abs(s) >= float64(math.MaxInt64)/1e9 || math.IsNaN(s) {
		return strconv.FormatFloat(s, 'g', -1, 64) + "s"
	}
	return interval.Duration(time.Duration(math.Round(s * 1e9))).String()
}

// MarshalJSON renders s with its family's parameters in a fixed order, as
// a scenario file writes them: {"dist":"lognormal","median":"30s","p99":"15m"}.
// An empirical distribution renders its file and the number of samples.
// The zero Spec renders as null.
func (s Spec) MarshalJSON() ([]byte, error) {
	if s.Kind == "" {
		return []byte("null"), nil
	}
	for _, key := range s.Kind.Params() {
		if v := s.Param(key); math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("randvar: %s distribution: %s is %v, not a number JSON can hold", s.Kind, key, v)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"dist":`)
	k, _ := json.Marshal(string(s.Kind))
	b.Write(k)
	field := func(key string, v []byte) {
		b.WriteString(`,"` + key + `":`)
		b.Write(v)
	}
	for _, key := range s.Kind.Params() {
		switch {
		case key == "file":
			f, _ := json.Marshal(s.File)
			field("file", f)
			field("samples", strconv.AppendInt(nil, int64(len(s.Samples)), 10))
		case s.Kind == KindLogNormal && s.ByQuantiles() != (key == "median" || key == "p99"):
			// Only the form the scenario used.
		case s.InSeconds(key):
			v, _ := json.Marshal(FormatSeconds(s.Param(key)))
			field(key, v)
		default:
			field(key, strconv.AppendFloat(nil, s.Param(key), 'g', -1, 64))
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Problem is one invalid part of a Spec: the parameter key at fault
// ("dist" for the family itself) and what it must be.
type Problem struct {
	Param string
	Msg   string
}

// Check returns every problem of s as a distribution of the given kind
// (counts: a count distribution), nil when it is valid. The zero Spec is
// not checked: whether it may be absent is the caller's to say.
func (s Spec) Check(counts bool) []Problem {
	if s.Kind == "" {
		return nil
	}
	var out []Problem
	add := func(param, format string, args ...any) {
		out = append(out, Problem{Param: param, Msg: fmt.Sprintf(format, args...)})
	}
	kinds := TimeKinds()
	if counts {
		kinds = CountKinds()
	}
	if !slices.Contains(kinds, s.Kind) {
		add("dist", "must be one of %s, got %s", joinKinds(kinds), echo.Show(string(s.Kind)))
		return out
	}
	if s.Counts != counts {
		want := "a time distribution (Counts false)"
		if counts {
			want = "a count distribution (Counts true)"
		}
		add("dist", "must be %s, got Counts %t", want, s.Counts)
	}
	allowed := s.Kind.Params()
	for _, name := range AllParams() {
		if name != "file" && !slices.Contains(allowed, name) && s.Param(name) != 0 {
			add(name, "must not be set for %s distribution (it takes %s), got %s", s.Kind.WithArticle(), s.Kind.ParamsText(), s.FormatParam(name))
		}
	}
	if s.Kind != KindEmpirical && (s.File != "" || len(s.Samples) > 0) {
		add("file", "must not be set for %s distribution (it takes %s), got %s", s.Kind.WithArticle(), s.Kind.ParamsText(), echo.Show(s.File))
	}
	finite := true
	for _, name := range allowed {
		if v := s.Param(name); math.IsNaN(v) || math.IsInf(v, 0) {
			add(name, "must be a finite number, got %g", v)
			finite = false
		}
	}
	if !finite {
		return out
	}
	atLeastZero := func(name string) {
		if s.Param(name) < 0 {
			add(name, "must be at least 0, got %s", s.FormatParam(name))
		}
	}
	aboveZero := func(name string) bool {
		if s.Param(name) <= 0 {
			add(name, "must be above 0, got %s", s.FormatParam(name))
			return false
		}
		return true
	}
	wholeAtLeastOne := func(name string) {
		if v := s.Param(name); v < 1 || v != math.Trunc(v) {
			add(name, "must be a whole number of copies of at least 1, got %s", s.FormatParam(name))
		}
	}
	switch s.Kind {
	case KindConstant:
		if counts {
			wholeAtLeastOne("value")
		} else {
			atLeastZero("value")
		}
	case KindUniform:
		if counts {
			wholeAtLeastOne("min")
			if v := s.Max; v != math.Trunc(v) {
				add("max", "must be a whole number of copies, got %s", s.FormatParam("max"))
			}
		} else {
			atLeastZero("min")
		}
		if s.Max < s.Min {
			add("max", "must be at least min (%s), got %s", s.FormatParam("min"), s.FormatParam("max"))
		}
	case KindExponential:
		aboveZero("mean")
	case KindLogNormal:
		if !s.ByQuantiles() {
			aboveZero("sigma")
			break
		}
		if aboveZero("median") && s.P99 <= s.Median {
			add("p99", "must be above the median (%s), got %s", s.FormatParam("median"), s.FormatParam("p99"))
		}
		for _, name := range []string{"mu", "sigma"} {
			if s.Param(name) != 0 {
				add(name, "must not be set together with median or p99 (a lognormal takes {median, p99} or {mu, sigma}), got %s", s.FormatParam(name))
			}
		}
	case KindPareto:
		aboveZero("min")
		aboveZero("alpha")
	case KindGeometric:
		if s.Mean < 1 {
			add("mean", "must be at least 1 (a resent event has at least one extra copy), got %s", s.FormatParam("mean"))
		}
	case KindEmpirical:
		if len(s.Samples) == 0 {
			add("file", "must name a CSV file holding at least one value, got %s with none", echo.Show(s.File))
			break
		}
		for i, v := range s.Samples {
			if msg := SampleProblem(v, s.Counts); msg != "" {
				add("file", "sample %d must be %s, got %g", i, msg, v)
				break
			}
		}
	}
	return out
}

// SampleProblem says what an empirical value must be when v is not a
// valid one (counts: a count distribution's), else returns "".
func SampleProblem(v float64, counts bool) string {
	if counts {
		if !(v >= 1 && v <= math.MaxUint32 && v == math.Trunc(v)) {
			return "a whole number of copies of at least 1"
		}
		return ""
	}
	if !(v >= 0) || math.IsInf(v, 0) {
		return "a duration of at least 0 such as 30s, or a number of seconds"
	}
	return ""
}

// joinKinds lists families for "must be one of ..." messages.
func joinKinds(kinds []Kind) string {
	var b bytes.Buffer
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(k))
	}
	return b.String()
}

// JoinKinds lists families for messages: "constant, uniform, ...".
func JoinKinds(kinds []Kind) string { return joinKinds(kinds) }
