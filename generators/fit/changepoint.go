package fit

import "math"

// profileStarts cuts per-bin counts into segments of at least minLen
// bins: binary segmentation with the penalty 5 ln n and at most 64
// segments, each boundary refined, then short segments merged. It
// returns the segments' first bins.
func profileStarts(counts []float64, minLen int) []int {
	penalty := 5 * math.Log(float64(max(len(counts), 2)))
	return mergeShort(counts, refine(counts, segmentCounts(counts, 1, penalty, 64)), minLen)
}

// poissonCost is minus the maximised Poisson log-likelihood of a segment
// of n intervals holding s counts, without the terms that do not depend
// on the segmentation: -(s ln(s/n) - s).
func poissonCost(s float64, n int) float64 {
	if s <= 0 {
		return 0
	}
	return -(s*math.Log(s/float64(n)) - s)
}

// segmentCounts cuts counts into segments of at least minLen intervals by
// binary segmentation: the segment whose best split lowers the Poisson
// cost most is split, while the gain exceeds penalty and fewer than
// maxSegs segments exist. It returns the segments' start indexes, the
// first 0, in order.
func segmentCounts(counts []float64, minLen int, penalty float64, maxSegs int) []int {
	n := len(counts)
	prefix := make([]float64, n+1)
	for i, c := range counts {
		prefix[i+1] = prefix[i] + c
	}
	sum := func(a, b int) float64 { return prefix[b] - prefix[a] }
	bestSplit := func(a, b int) (int, float64) {
		at, gain := -1, 0.0
		whole := poissonCost(sum(a, b), b-a)
		for k := a + minLen; k <= b-minLen; k++ {
			g := whole - poissonCost(sum(a, k), k-a) - poissonCost(sum(k, b), b-k)
			if g > gain {
				at, gain = k, g
			}
		}
		return at, gain
	}
	type seg struct{ a, b int }
	segs := []seg{{0, n}}
	for len(segs) < maxSegs {
		bi, bk, bg := -1, -1, penalty
		for i, s := range segs {
			if k, g := bestSplit(s.a, s.b); k >= 0 && g > bg {
				bi, bk, bg = i, k, g
			}
		}
		if bi < 0 {
			break
		}
		s := segs[bi]
		segs = append(segs[:bi+1], segs[bi:]...)
		segs[bi] = seg{s.a, bk}
		segs[bi+1] = seg{bk, s.b}
	}
	starts := make([]int, len(segs))
	for i, s := range segs {
		starts[i] = s.a
	}
	return starts
}

// mergeShort merges every segment shorter than minLen intervals into the
// neighbour with which merging raises the Poisson cost least, shortest
// first, so that no segment is shorter than a trigger; starts are the
// segments' start indexes and counts the intervals' counts.
func mergeShort(counts []float64, starts []int, minLen int) []int {
	n := len(counts)
	end := func(i int) int {
		if i+1 < len(starts) {
			return starts[i+1]
		}
		return n
	}
	cost := func(a, b int) float64 {
		var s float64
		for _, c := range counts[a:b] {
			s += c
		}
		return poissonCost(s, b-a)
	}
	// mergeCost is the cost of merging segment i with segment i+1.
	mergeCost := func(i int) float64 {
		a, m, b := starts[i], starts[i+1], end(i+1)
		return cost(a, b) - cost(a, m) - cost(m, b)
	}
	for len(starts) > 1 {
		short := -1
		for i := range starts {
			if l := end(i) - starts[i]; l < minLen && (short < 0 || l < end(short)-starts[short]) {
				short = i
			}
		}
		if short < 0 {
			break
		}
		// Merge with the previous segment (drop short's start) or the
		// next (drop the next's start).
		drop := short
		if short == 0 || short+1 < len(starts) && mergeCost(short) < mergeCost(short-1) {
			drop = short + 1
		}
		starts = append(starts[:drop], starts[drop+1:]...)
	}
	return starts
}

// refine moves each boundary between two segments to the position within
// them that minimises their summed Poisson cost, sweeping until nothing
// moves (at most 10 sweeps): binary segmentation fixes a boundary found
// in a larger segment and never revisits it, which leaves a partial bin
// on the wrong side.
func refine(counts []float64, starts []int) []int {
	n := len(counts)
	prefix := make([]float64, n+1)
	for i, c := range counts {
		prefix[i+1] = prefix[i] + c
	}
	cost := func(a, b int) float64 { return poissonCost(prefix[b]-prefix[a], b-a) }
	for range 10 {
		moved := false
		for i := 1; i < len(starts); i++ {
			a, b := starts[i-1], n
			if i+1 < len(starts) {
				b = starts[i+1]
			}
			best, bestCost := starts[i], cost(a, starts[i])+cost(starts[i], b)
			for k := a + 1; k < b; k++ {
				if c := cost(a, k) + cost(k, b); c < bestCost-1e-9 {
					best, bestCost = k, c
				}
			}
			if best != starts[i] {
				starts[i], moved = best, true
			}
		}
		if !moved {
			break
		}
	}
	return starts
}
