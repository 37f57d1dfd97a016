package randvar

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestSampleIsGonumsDraw checks that each continuous family draws, from
// the same stream, exactly what gonum's distuv draws (the generators drew
// through distuv before randvar, and a seed must give the same rows).
func TestSampleIsGonumsDraw(t *testing.T) {
	cases := []struct {
		spec Spec
		ref  func(src rand.Source) func() float64
	}{
		{Spec{Kind: KindUniform, Min: 2, Max: 7}, func(src rand.Source) func() float64 {
			return distuv.Uniform{Min: 2, Max: 7, Src: src}.Rand
		}},
		{Spec{Kind: KindExponential, Mean: 3}, func(src rand.Source) func() float64 {
			return distuv.Exponential{Rate: 1.0 / 3, Src: src}.Rand
		}},
		{Spec{Kind: KindLogNormal, Median: 30, P99: 900}, func(src rand.Source) func() float64 {
			mu, sigma := Spec{Kind: KindLogNormal, Median: 30, P99: 900}.LogNormalParams()
			return distuv.LogNormal{Mu: mu, Sigma: sigma, Src: src}.Rand
		}},
		{Spec{Kind: KindPareto, Min: 0.5, Alpha: 1.5}, func(src rand.Source) func() float64 {
			return distuv.Pareto{Xm: 0.5, Alpha: 1.5, Src: src}.Rand
		}},
	}
	for _, c := range cases {
		d, err := New(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 8))
		ref := c.ref(rand.NewPCG(7, 8))
		for i := range 1000 {
			if got, want := d.Sample(rng), ref(); got != want {
				t.Fatalf("%s: draw %d is %v, distuv draws %v", c.spec.Kind, i, got, want)
			}
		}
	}
}

// TestSampleDoesNotAllocate checks every family's draw.
func TestSampleDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []Spec{
		{Kind: KindConstant, Value: 1}, {Kind: KindUniform, Min: 1, Max: 3}, {Kind: KindUniform, Min: 1, Max: 3, Counts: true},
		{Kind: KindExponential, Mean: 1}, {Kind: KindLogNormal, Mu: 1, Sigma: 1}, {Kind: KindPareto, Min: 1, Alpha: 2},
		{Kind: KindGeometric, Mean: 2, Counts: true}, {Kind: KindEmpirical, Samples: []float64{1, 2}},
	} {
		d, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		if a := testing.AllocsPerRun(1000, func() { sum += d.Sample(rng) }); a != 0 {
			t.Errorf("%s draws allocate %v times", s.Kind, a)
		}
	}
}

// TestCountPMF checks the count distributions against their draws: the
// probabilities sum to 1 and match the shares drawn.
func TestCountPMF(t *testing.T) {
	const n = 200000
	for _, s := range []Spec{
		{Kind: KindGeometric, Mean: 2.5, Counts: true}, {Kind: KindUniform, Min: 1, Max: 3, Counts: true},
		{Kind: KindExponential, Mean: 1.5, Counts: true}, {Kind: KindEmpirical, Samples: []float64{1, 1, 4}, Counts: true},
		{Kind: KindConstant, Value: 2, Counts: true},
	} {
		d, _ := New(s)
		pmf := CountPMF(d, 4096, 1e-12)
		total := 0.0
		for _, p := range pmf {
			total += p
		}
		if math.Abs(total-1) > 1e-6 {
			t.Errorf("%s: probabilities sum to %v", s.Kind, total)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		seen := make([]float64, len(pmf)+1)
		for range n {
			k := int(max(math.Round(d.Sample(rng)), 1))
			if k <= len(pmf) {
				seen[k-1]++
			}
		}
		for k, p := range pmf {
			if got := seen[k] / n; math.Abs(got-p) > 5*math.Sqrt(p*(1-p)/n)+3.0/n {
				t.Errorf("%s: P(K=%d) = %v, drawn %v", s.Kind, k+1, p, got)
			}
		}
	}
}

func TestJSONForms(t *testing.T) {
	for _, c := range []struct {
		v    Spec
		want string
	}{
		{Spec{Kind: KindLogNormal, Median: 30, P99: 900}, `{"dist":"lognormal","median":"30s","p99":"15m"}`},
		{Spec{Kind: KindLogNormal, Mu: 1, Sigma: 0.5}, `{"dist":"lognormal","mu":1,"sigma":0.5}`},
		{Spec{Kind: KindGeometric, Mean: 1.5, Counts: true}, `{"dist":"geometric","mean":1.5}`},
		{Spec{Kind: KindUniform, Min: 1, Max: 3, Counts: true}, `{"dist":"uniform","min":1,"max":3}`},
		{Spec{Kind: KindPareto, Min: 0.25, Alpha: 2}, `{"dist":"pareto","min":"250ms","alpha":2}`},
		{Spec{Kind: KindEmpirical, File: "d.csv", Samples: []float64{1, 2}}, `{"dist":"empirical","file":"d.csv","samples":2}`},
		{Spec{}, `null`},
	} {
		got, err := json.Marshal(c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("json.Marshal(%#v) = %s, %v; want %s", c.v, got, err, c.want)
		}
	}
}

// TestLogNormalQuantiles checks that mu and sigma derived from a median and
// a p99 put those quantiles where they were asked for.
func TestLogNormalQuantiles(t *testing.T) {
	d, _ := New(Spec{Kind: KindLogNormal, Median: 30, P99: 900})
	if got := d.Quantile(0.5); math.Abs(got-30) > 1e-9 {
		t.Errorf("median %v, want 30", got)
	}
	if got := d.Quantile(0.99); math.Abs(got-900) > 1e-6 {
		t.Errorf("p99 %v, want 900", got)
	}
}
