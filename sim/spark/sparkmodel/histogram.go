package sparkmodel

import "slices"

// Histogram counts non-negative values (batch durations in microseconds)
// truncated to four significant decimal digits, so that percentiles take
// memory bounded by the range of the values (at most 9,000 buckets per
// power of ten), never by how many values there are: values below 10,000
// (10 ms) are kept exactly, larger ones within 0.1% below (2,199,551 µs
// counts as 2,199,000). Its JSON form, which a job snapshot holds, is the
// counts by bucket. The zero Histogram is empty and ready to use.
type Histogram struct {
	// Counts maps each bucket, its value truncated to four significant
	// digits, to its count.
	Counts map[int64]int64 `json:"counts"`
	// N is the number of values; Max the largest, exactly.
	N   int64 `json:"n"`
	Max int64 `json:"max"`
}

// truncate returns v truncated to 4 significant decimal digits, the
// precision of a bucket.
func truncate(v int64) int64 {
	p := int64(1)
	for w := v; w >= 10_000; w /= 10 {
		p *= 10
	}
	return v / p * p
}

// Add counts v (a negative value counts as 0).
func (h *Histogram) Add(v int64) {
	v = max(v, 0)
	if h.Counts == nil {
		h.Counts = map[int64]int64{}
	}
	h.Counts[truncate(v)]++
	h.N++
	h.Max = max(h.Max, v)
}

// Quantile returns the q-quantile (0 < q <= 1) by the nearest-rank rule:
// the smallest bucket with at least ceil(q × N) values at or below it.
// It returns 0 for an empty histogram.
func (h *Histogram) Quantile(q float64) int64 {
	if h.N == 0 {
		return 0
	}
	rank := int64(q * float64(h.N))
	if float64(rank) < q*float64(h.N) {
		rank++
	}
	rank = max(rank, 1)
	keys := make([]int64, 0, len(h.Counts))
	for k := range h.Counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := int64(0)
	for _, k := range keys {
		seen += h.Counts[k]
		if seen >= rank {
			return k
		}
	}
	return keys[len(keys)-1]
}
