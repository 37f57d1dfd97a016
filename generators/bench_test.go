package generators

import (
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/dedupsim/dedupsim/generators/randvar"
	"gonum.org/v1/gonum/stat/distuv"
)

// BenchmarkGenerator measures Next per row on each benchmark workload. A
// generator that runs out is replaced by a fresh one outside the timer.
// Compare with BenchmarkBareDraws: the ratio is the cost of the pipeline
// around the random draws.
func BenchmarkGenerator(b *testing.B) {
	for _, name := range slices.Sorted(maps.Keys(benchWorkloads())) {
		s := benchWorkloads()[name]
		b.Run("workload="+name, func(b *testing.B) {
			g := mustNew(b, s)
			var r Row
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if !g.Next(&r) {
					b.StopTimer()
					g = mustNew(b, s)
					g.Next(&r)
					b.StartTimer()
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/row")
			// Counted over the whole loop, so it includes the queue's
			// growth (and any restart of an exhausted generator).
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/row")
		})
	}
}

// BenchmarkBareDraws draws, per row, the random numbers the generator
// draws for a quickstart original (an Exp(1) gap, two words of UUID, a
// customer, a payload, an exponential arrival delay) from the same kinds
// of streams, with no generator around them: the floor the generator is
// measured against.
func BenchmarkBareDraws(b *testing.B) {
	b.Run("workload=quickstart", func(b *testing.B) {
		arrivals, ids, cust, pay, delay := rand.NewPCG(1, 1), rand.NewPCG(2, 2), rand.NewPCG(3, 3), rand.NewPCG(4, 4), rand.NewPCG(5, 5)
		gap := distuv.Exponential{Rate: 1, Src: arrivals}
		d := distuv.Exponential{Rate: 0.5, Src: delay}
		custRNG := rand.New(cust)
		var sink uint64
		var fsink float64
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			fsink += gap.Rand() + d.Rand()
			//lint:ignore SA4000 each call draws a new value (the event id's two halves), so the two operands differ
			sink += ids.Uint64() ^ ids.Uint64() ^ uint64(custRNG.Int64N(1000)) ^ pay.Uint64()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/row")
		if sink == 42 && fsink == 42 {
			b.Log("unlikely")
		}
	})
}

// BenchmarkBareDrawsRetries is the floor of the retries workload: the
// quickstart draws, plus per original the resend coin, and per resent
// original a geometric count of copies and a lognormal gap per copy. Its
// ns/row divides by the rows those draws make (originals and copies).
func BenchmarkBareDrawsRetries(b *testing.B) {
	b.Run("workload=retries", func(b *testing.B) {
		arrivals, ids, cust, pay, delay := rand.NewPCG(1, 1), rand.NewPCG(2, 2), rand.NewPCG(3, 3), rand.NewPCG(4, 4), rand.NewPCG(5, 5)
		retry, gaps := rand.NewPCG(6, 6), rand.NewPCG(7, 7)
		gap := distuv.Exponential{Rate: 1, Src: arrivals}
		d := distuv.Exponential{Rate: 0.5, Src: delay}
		mu, sigma := randvar.Spec{Kind: randvar.KindLogNormal, Median: 30, P99: 900}.LogNormalParams()
		retryGap := distuv.LogNormal{Mu: mu, Sigma: sigma, Src: gaps}
		custRNG, retryRNG := rand.New(cust), rand.New(retry)
		logQ := math.Log1p(-1 / 1.5)
		var sink uint64
		var fsink float64
		rows := 0
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			fsink += gap.Rand() + d.Rand()
			//lint:ignore SA4000 each call draws a new value (the event id's two halves), so the two operands differ
			sink += ids.Uint64() ^ ids.Uint64() ^ uint64(custRNG.Int64N(1000)) ^ pay.Uint64()
			rows++
			if retryRNG.Float64() < 0.05 {
				extra := 1 + int(math.Floor(math.Log(1-retryRNG.Float64())/logQ))
				for range extra {
					fsink += retryGap.Rand()
				}
				rows += extra
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		if sink == 42 && fsink == 42 {
			b.Log("unlikely")
		}
	})
}
