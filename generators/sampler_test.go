package generators

import (
	"github.com/dedupsim/dedupsim/generators/randvar"
	"math"
	"math/rand/v2"
	"testing"
)

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

	geo := newSampler(randvar.Spec{Kind: randvar.KindGeometric, Mean: 2.5, Counts: true}, rand.New(src))
	within(t, "geometric mean", sampleMean(&geo, n, count), 2.5, 5*math.Sqrt(2.5*1.5/n), 0)
	one := newSampler(randvar.Spec{Kind: randvar.KindGeometric, Mean: 1, Counts: true}, rand.New(src))
	if m := sampleMean(&one, 1000, count); m != 1 {
		t.Errorf("geometric mean 1 drew mean %v", m)
	}

	uni := newSampler(randvar.Spec{Kind: randvar.KindUniform, Min: 1, Max: 3, Counts: true}, rand.New(src))
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

	con := newSampler(randvar.Spec{Kind: randvar.KindConstant, Value: 3, Counts: true}, rand.New(src))
	if c := con.count(); c != 3 {
		t.Errorf("constant 3 drew %d", c)
	}
	// Continuous families are rounded and never below one copy.
	exp := newSampler(randvar.Spec{Kind: randvar.KindExponential, Mean: 0.1, Counts: true}, rand.New(src))
	for range 1000 {
		if c := exp.count(); c < 1 {
			t.Fatalf("exponential count %d below 1", c)
		}
	}
	emp := newSampler(randvar.Spec{Kind: randvar.KindEmpirical, Samples: []float64{1, 4}, Counts: true}, rand.New(src))
	for range 1000 {
		if c := emp.count(); c != 1 && c != 4 {
			t.Fatalf("empirical count %d is not a sample", c)
		}
	}
}

func TestTimeSamplers(t *testing.T) {
	src := rand.NewPCG(5, 6)
	emp := newSampler(randvar.Spec{Kind: randvar.KindEmpirical, Samples: []float64{0.5, 2, 30}}, rand.New(src))
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
	zero := newSampler(randvar.Spec{}, rand.New(src))
	if zero.d != randvar.Constant(0) || zero.micros() != 0 || zero.count() != 1 {
		t.Error("the zero Dist does not draw constant 0")
	}
	heavy := newSampler(randvar.Spec{Kind: randvar.KindPareto, Min: 1, Alpha: 0.01}, rand.New(src))
	for range 1000 {
		if v := heavy.micros(); v < 1e6 || v > maxDrawMicros {
			t.Fatalf("pareto draw %d outside [1s, cap]", v)
		}
	}
	exp := newSampler(randvar.Spec{Kind: randvar.KindExponential, Mean: 2}, rand.New(src))
	within(t, "exponential mean (s)", sampleMean(&exp, 100000, func(s *sampler) float64 { return float64(s.micros()) / 1e6 }), 2, 5*2/math.Sqrt(100000), 0)
}

func TestStreamsDiffer(t *testing.T) {
	seen := map[uint64]string{}
	for _, seed := range []uint64{0, 1, 2} {
		for _, part := range []string{partArrivals, partIDs, partCustomers, partPayload, partArrivalDelay,
			partRetries, partRetryDelay, partJitter, partBadClock} {
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
