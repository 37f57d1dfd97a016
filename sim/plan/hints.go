package plan

import (
	"slices"
	"time"
)

// The hints: what a search may ask next, given the results known so far,
// computed as the search itself would from each outcome still possible.
// A hint is the delays of every request the search's next step can make;
// the pool's idle workers simulate them, largest first within a request,
// and cancel those a result rules out.

// bisectMids returns the delays a bisection round splits (lo, hi) at: three
// evenly spaced whole seconds; nil once the interval is at most
// max(1s, 1% of hi) wide.
func bisectMids(lo, hi time.Duration) []time.Duration {
	if hi-lo <= max(time.Second, hi/100) {
		return nil
	}
	var mids []time.Duration
	for k := 1; k <= 3; k++ {
		m := (lo + (hi-lo)*time.Duration(k)/4).Round(time.Second)
		if m > lo && m < hi && !slices.Contains(mids, m) {
			mids = append(mids, m)
		}
	}
	return mids
}

// largestFirst appends ds to out, largest first (the longest simulation
// starts first).
func largestFirst(out, ds []time.Duration) []time.Duration {
	for i := len(ds) - 1; i >= 0; i-- {
		out = append(out, ds[i])
	}
	return out
}

// bisectHint is the hint of a bisection round of (lo, hi) at mids: the
// mids of every next interval the round's results can still choose (the
// first passing mid ends it).
func bisectHint(lo, hi time.Duration, mids []time.Duration, ok func(Point) bool) hintFunc {
	return func(known func(time.Duration) (Point, bool)) []time.Duration {
		var out []time.Duration
		l := lo
		for _, m := range mids {
			p, k := known(m)
			if k && !ok(p) {
				l = m
				continue
			}
			out = largestFirst(out, bisectMids(l, m))
			if k {
				return out
			}
			l = m
		}
		return largestFirst(out, bisectMids(l, hi))
	}
}

// bracketHint is the hint of the bracket's chunk of grid delays from
// index i: for every delay of the chunk that may be the first to pass,
// what the search asks then (afterFirst); if none may, the next chunk.
// tried is what the search has asked for, the chunk included.
func bracketHint(grid []time.Duration, i int, tried map[time.Duration]bool, ok func(Point) bool) hintFunc {
	return func(known func(time.Duration) (Point, bool)) []time.Duration {
		var out []time.Duration
		end := min(i+gridChunk, len(grid))
		for j := i; j < end; j++ {
			p, k := known(grid[j])
			if k && !ok(p) {
				continue
			}
			out = append(out, afterFirst(grid, j, tried, ok, known)...)
			if k {
				return out
			}
		}
		return largestFirst(out, grid[end:min(end+gridChunk, len(grid))])
	}
}

// afterFirst is what the search asks once grid[f] is the first passing
// delay it found, as bracket's walk down and smallest do: the chunk below
// when the delay below is untried; the first bisection round when it
// fails; nothing more when it is unknown and may pass, or f is 0.
func afterFirst(grid []time.Duration, f int, tried map[time.Duration]bool, ok func(Point) bool, known func(time.Duration) (Point, bool)) []time.Duration {
	for f > 0 {
		below := grid[f-1]
		if !tried[below] {
			return largestFirst(nil, grid[max(f-gridChunk, 0):f])
		}
		p, k := known(below)
		if !k || !ok(p) {
			return largestFirst(nil, bisectMids(below, grid[f]))
		}
		f--
	}
	return nil
}

// triedWith returns the delays s has asked for, and ds.
func (s *searcher) triedWith(ds []time.Duration) map[time.Duration]bool {
	out := make(map[time.Duration]bool, len(s.seen)+len(ds))
	for d := range s.seen {
		out[d] = true
	}
	for _, d := range ds {
		out[d] = true
	}
	return out
}

// finished records that s's search is over, with the seed's delay as the
// seeds' combination counts it, and sets its hint to the other finished
// seeds' delays, which the combination may simulate on it: at quantile
// 1 only the larger ones (the recommendation is the largest).
func (p *pool) finished(s *searcher, q float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.done = true
	s.final = s.res.Recommended
	if s.final == nil && s.res.BudgetExceeded && s.meetsAt != nil {
		s.final = s.meetsAt
	}
	if !s.info.delayMatters {
		s.hint = nil
		return
	}
	s.hint = func(func(time.Duration) (Point, bool)) []time.Duration {
		var out []time.Duration
		for _, o := range p.seeds {
			if o == s || !o.done || o.final == nil || slices.Contains(out, *o.final) {
				continue
			}
			if s.final != nil && (*o.final == *s.final || q >= 1 && *o.final < *s.final) {
				continue
			}
			if q >= 1 && s.final == nil {
				continue
			}
			out = append(out, *o.final)
		}
		slices.Sort(out)
		slices.Reverse(out)
		return out
	}
	p.wake()
}

// joinHints returns the delays of a, then those of b; nil when both are.
func joinHints(a, b hintFunc) hintFunc {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(known func(time.Duration) (Point, bool)) []time.Duration {
		return append(a(known), b(known)...)
	}
}

// aloneHint is the first step of the search of one rate target alone
// (ok), as far as the results known tell it: its bracket starts at the
// same grid delay as the targets' and walks up the grid delays already
// simulated; at the first that passes, the chunk below it when the delay
// below is not known, or the first bisection round when it fails.
// Nothing when a result on the way is not known, or the delay below
// passes too.
func (s *searcher) aloneHint(grid []time.Duration, ok func(Point) bool) hintFunc {
	start := min(s.modelStart(grid), max(len(grid)-gridChunk, 0))
	return func(known func(time.Duration) (Point, bool)) []time.Duration {
		for j := start; j < len(grid); j++ {
			p, k := known(grid[j])
			if !k {
				return nil
			}
			if !ok(p) {
				continue
			}
			if j == 0 {
				return nil
			}
			b, kb := known(grid[j-1])
			switch {
			case !kb:
				return largestFirst(nil, grid[max(j-gridChunk, 0):j])
			case !ok(b):
				return largestFirst(nil, bisectMids(grid[j-1], grid[j]))
			}
			return nil
		}
		return nil
	}
}
