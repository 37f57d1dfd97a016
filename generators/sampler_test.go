package generators

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dedupsim/dedupsim/sim/scenario"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestDistuvDrawsDoNotAllocate checks the assumption the samplers rest
// on: a distuv draw with Src set wraps it in rand.New on every call, and
// the compiler keeps that wrapper on the stack.
func TestDistuvDrawsDoNotAllocate(t *testing.T) {
	src := rand.NewPCG(1, 2)
	exp := distuv.Exponential{Rate: 1, Src: src}
	logn := distuv.LogNormal{Mu: 1, Sigma: 1, Src: src}
	unif := distuv.Uniform{Min: 0, Max: 1, Src: src}
	par := distuv.Pareto{Xm: 1, Alpha: 2, Src: src}
	sum := 0.0
	for name, draw := range map[string]func(){
		"Exponential": func() { sum += exp.Rand() },
		"LogNormal":   func() { sum += logn.Rand() },
		"Uniform":     func() { sum += unif.Rand() },
		"Pareto":      func() { sum += par.Rand() },
	} {
		if a := testing.AllocsPerRun(1000, draw); a != 0 {
			t.Errorf("distuv.%s.Rand allocates %v times per draw", name, a)
		}
	}
}

func sampleMean(s *sampler, n int, draw func(*sampler) float64) float64 {
	sum := 0.0
	for range n {
		sum += draw(s)
	}
	return sum / float64(n)
}

func TestCountSamplers(t *testing.T) {
	const n = 200000
	count := func(s *sampler) float64 { return float64(s.count()) }
	src := rand.NewPCG(3, 4)

	geo := newSampler(scenario.Dist{Kind: scenario.Geometric, Mean: 2.5, Counts: true}, src)
	within(t, "geometric mean", sampleMean(&geo, n, count), 2.5, 5*math.Sqrt(2.5*1.5/n), 0)
	one := newSampler(scenario.Dist{Kind: scenario.Geometric, Mean: 1, Counts: true}, src)
	if m := sampleMean(&one, 1000, count); m != 1 {
		t.Errorf("geometric mean 1 drew mean %v", m)
	}

	uni := newSampler(scenario.Dist{Kind: scenario.Uniform, Min: 1, Max: 3, Counts: true}, src)
	var seen [5]float64
	for range n {
		seen[uni.count()]++
	}
	if seen[0] != 0 || seen[4] != 0 {
		t.Errorf("count uniform [1, 3] drew outside: %v", seen)
	}
	for k := 1; k <= 3; k++ {
		within(t, "count uniform share", seen[k]/n, 1.0/3, 5*math.Sqrt(2.0/9/n), 0)
	}

	con := newSampler(scenario.Dist{Kind: scenario.Constant, Value: 3, Counts: true}, src)
	if c := con.count(); c != 3 {
		t.Errorf("constant 3 drew %d", c)
	}
	// Continuous families are rounded and never below one copy.
	exp := newSampler(scenario.Dist{Kind: scenario.Exponential, Mean: 0.1, Counts: true}, src)
	for range 1000 {
		if c := exp.count(); c < 1 {
			t.Fatalf("exponential count %d below 1", c)
		}
	}
	emp := newSampler(scenario.Dist{Kind: scenario.Empirical, Samples: []float64{1, 4}, Counts: true}, src)
	for range 1000 {
		if c := emp.count(); c != 1 && c != 4 {
			t.Fatalf("empirical count %d is not a sample", c)
		}
	}
}

func TestTimeSamplers(t *testing.T) {
	src := rand.NewPCG(5, 6)
	emp := newSampler(scenario.Dist{Kind: scenario.Empirical, Samples: []float64{0.5, 2, 30}}, src)
	var seen [3]int
	for range 3000 {
		switch emp.micros() {
		case 500000:
			seen[0]++
		case 2000000:
			seen[1]++
		case 30000000:
			seen[2]++
		default:
			t.Fatal("empirical drew a value that is not a sample")
		}
	}
	for _, c := range seen {
		if c < 800 {
			t.Errorf("empirical picks %v are not uniform", seen)
		}
	}
	zero := newSampler(scenario.Dist{}, src)
	if zero.kind != scenario.Constant || zero.micros() != 0 || zero.count() != 1 {
		t.Error("the zero Dist does not draw constant 0")
	}
	heavy := newSampler(scenario.Dist{Kind: scenario.Pareto, Min: 1, Alpha: 0.01}, src)
	for range 1000 {
		if v := heavy.micros(); v < 1e6 || v > maxDrawMicros {
			t.Fatalf("pareto draw %d outside [1s, cap]", v)
		}
	}
	exp := newSampler(scenario.Dist{Kind: scenario.Exponential, Mean: 2}, src)
	within(t, "exponential mean (s)", sampleMean(&exp, 100000, func(s *sampler) float64 { return float64(s.micros()) / 1e6 }), 2, 5*2/math.Sqrt(100000), 0)
}

func TestStreamsDiffer(t *testing.T) {
	seen := map[uint64]string{}
	for _, seed := range []uint64{0, 1, 2} {
		for _, part := range []string{partArrivals, partIDs, partCustomers, partPayload, partArrivalDelay,
			partRetries, partRetryDelay, partJitter, partBadClock, partHeartbeats} {
			v := newStream(seed, part).Uint64()
			if other, dup := seen[v]; dup {
				t.Errorf("streams %s and %d/%s start alike", other, seed, part)
			}
			seen[v] = part
		}
	}
}

func TestWriteUUID(t *testing.T) {
	var id [36]byte
	writeUUID(&id, 0xffffffffffffffff, 0xffffffffffffffff)
	if got := string(id[:]); got != "ffffffff-ffff-4fff-bfff-ffffffffffff" {
		t.Errorf("all ones: %s", got)
	}
	writeUUID(&id, 0x0123456789abcdef, 0x0123456789abcdef)
	if got := string(id[:]); got != "01234567-89ab-4def-8123-456789abcdef" {
		t.Errorf("pattern: %s", got)
	}
}
