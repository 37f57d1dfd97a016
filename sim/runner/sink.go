package runner

// sinkDraws decides which batch writes fail. The draw is a pure function
// of the seed and the trigger time, not a stream, so every query of a
// scenario sees the same failures at the same triggers whatever batches it
// ran before.
type sinkDraws struct{ seed uint64 }

func newSinkDraws(seed uint64) sinkDraws { return sinkDraws{seed: seed ^ 0x73696e6b} }

// fails reports whether the write of the batch at trigger time t (us)
// fails, with probability p.
func (s sinkDraws) fails(t int64, p float64) bool {
	if p <= 0 {
		return false
	}
	x := splitmix64(s.seed ^ uint64(t))
	return float64(x>>11)/(1<<53) < p
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
