package generators

import "math/rand/v2"

// The names of the generator parts that draw random numbers. Each part
// draws from its own stream, derived from the scenario seed and the part's
// name, so that changing one part (say the retry probability) leaves the
// draws of every other part (the arrivals, the ids) as they were.
const (
	partArrivals     = "arrivals"
	partIDs          = "ids"
	partCustomers    = "customers"
	partPayload      = "payload"
	partArrivalDelay = "arrivalDelay"
	partRetries      = "retries"
	partRetryDelay   = "retryDelay"
	partJitter       = "jitter"
	partBadClock     = "futureTimestamps"
	partInjected     = "badClockFaults"
)

// newStream returns the PCG stream of the part named part under the root
// seed: both PCG words come from SplitMix64 started at seed XOR the FNV-1a
// hash of the name. SplitMix64 spreads nearby seeds (1, 2, 3) and the hash
// separates parts, so streams neither coincide nor overlap in practice.
func newStream(seed uint64, part string) *rand.PCG {
	x := seed ^ fnv1a(part)
	hi := splitMix64(&x)
	lo := splitMix64(&x)
	return rand.NewPCG(hi, lo)
}

// splitMix64 advances *x and returns the next SplitMix64 output.
func splitMix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// fnv1a is the 64-bit FNV-1a hash of s.
func fnv1a(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}
