package reports

import (
	"slices"

	"github.com/dedupsim/dedupsim/metrics"
)

// A report's memory must not grow with the run: a month at a 1 s trigger
// is 2.6 million batches per query, and a chart can draw about a thousand
// points across. So the batches of a run are kept exactly up to
// exactBatches, and past that in at most seriesBuckets buckets of
// processing time: per bucket the first and the last batch and, for every
// value a chart draws or a finding reads, the batches holding its least and
// its greatest value. Charts so keep every peak and every drop (min/max
// per bucket), and a finding that places a moment places it to within a
// bucket. Which batches are kept depends only on the file: the buckets'
// width is a power of two of milliseconds, doubled (pairs merged) whenever
// the run outgrows them.
const (
	exactBatches  = 8192
	seriesBuckets = 1024
)

// score is one value of a record that a bucket keeps the extremes of; ok
// is false for a record that has no such value.
type score[T any] func(*T) (v float64, ok bool)

// kept is a record and its place in the run, so that records kept for
// several reasons are kept once, in order.
type kept[T any] struct {
	rec T
	seq int64
	set bool
}

// bucket is one span of processing time in bounded mode: roles[0] is its
// first record, roles[1] its last, roles[2+2k] and roles[3+2k] the least
// and the greatest of score k.
type bucket[T any] struct {
	idx   int64
	roles []kept[T]
}

// series holds one run's records within bounded memory (see exactBatches).
type series[T any] struct {
	at     func(*T) int64 // the record's processing time, ms
	scores []score[T]
	all    []T // every record, while there are at most exactBatches
	seq    int64
	// Bounded mode (width > 0): bucket i covers [origin+i*width,
	// origin+(i+1)*width) ms.
	origin, width int64
	buckets       []bucket[T]
}

// add appends rec, whose processing time is not before the last one's.
func (s *series[T]) add(rec *T) {
	s.seq++
	if s.width == 0 {
		s.all = append(s.all, *rec)
		if len(s.all) > exactBatches {
			s.bound()
		}
		return
	}
	s.place(kept[T]{rec: *rec, seq: s.seq, set: true})
}

// bound switches to bounded mode, with buckets just wide enough for the
// records so far, and moves them into the buckets.
func (s *series[T]) bound() {
	all := s.all
	s.all = nil
	s.origin = s.at(&all[0])
	span := s.at(&all[len(all)-1]) - s.origin
	s.width = 1
	for span/s.width >= seriesBuckets {
		s.width *= 2
	}
	for i := range all {
		s.place(kept[T]{rec: all[i], seq: int64(i + 1), set: true})
	}
}

// place puts k into its bucket, halving the buckets' number while k lies
// past the last one.
func (s *series[T]) place(k kept[T]) {
	idx := (s.at(&k.rec) - s.origin) / s.width
	for idx >= seriesBuckets {
		s.halve()
		idx = (s.at(&k.rec) - s.origin) / s.width
	}
	if n := len(s.buckets); n == 0 || s.buckets[n-1].idx != idx {
		s.buckets = append(s.buckets, bucket[T]{idx: idx, roles: make([]kept[T], 2+2*len(s.scores))})
	}
	s.merge(&s.buckets[len(s.buckets)-1], k)
}

// merge takes k, a record later than every one of b, into b's roles.
// Ties keep the earlier record.
func (s *series[T]) merge(b *bucket[T], k kept[T]) {
	if !k.set {
		return
	}
	if !b.roles[0].set {
		b.roles[0] = k
	}
	b.roles[1] = k
	for i, sc := range s.scores {
		v, ok := sc(&k.rec)
		if !ok {
			continue
		}
		lo, hi := &b.roles[2+2*i], &b.roles[3+2*i]
		if lv, _ := sc(&lo.rec); !lo.set || v < lv {
			*lo = k
		}
		if hv, _ := sc(&hi.rec); !hi.set || v > hv {
			*hi = k
		}
	}
}

// halve doubles the buckets' width, merging each pair in time order.
func (s *series[T]) halve() {
	s.width *= 2
	var out []bucket[T]
	for _, b := range s.buckets {
		idx := b.idx / 2
		if n := len(out); n > 0 && out[n-1].idx == idx {
			last := &out[n-1]
			// Every record of b is later than every record of last.
			for _, k := range s.ordered(b) {
				s.merge(last, k)
			}
			continue
		}
		b.idx = idx
		out = append(out, b)
	}
	s.buckets = out
}

// ordered returns the distinct records of b in time order.
func (s *series[T]) ordered(b bucket[T]) []kept[T] {
	var ks []kept[T]
	for _, k := range b.roles {
		if k.set && !slices.ContainsFunc(ks, func(x kept[T]) bool { return x.seq == k.seq }) {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, func(a, b kept[T]) int { return int(a.seq - b.seq) })
	return ks
}

// records returns the records kept, in time order: every record in exact
// mode.
func (s *series[T]) records() []T {
	if s.width == 0 {
		return s.all
	}
	var out []T
	for _, b := range s.buckets {
		for _, k := range s.ordered(b) {
			out = append(out, k.rec)
		}
	}
	return out
}

// last returns the latest record added, if any.
func (s *series[T]) last() (T, bool) {
	var zero T
	switch {
	case s.width == 0 && len(s.all) > 0:
		return s.all[len(s.all)-1], true
	case s.width > 0 && len(s.buckets) > 0:
		return s.buckets[len(s.buckets)-1].roles[1].rec, true
	}
	return zero, false
}

// newBatchSeries keeps a run's timeseries rows: the extremes of what the
// charts draw (state rows and bytes, the watermark and its lag) and
// findings read (the lag; counters are cumulative, so a bucket's first
// and last batch bound them), and the first batch without a set
// watermark, where the watermark chart breaks its line.
func newBatchSeries() *series[metrics.BatchRecord] {
	wm := func(b *metrics.BatchRecord) (float64, bool) { return float64(b.Watermark), b.WatermarkSet() }
	return &series[metrics.BatchRecord]{
		at: func(b *metrics.BatchRecord) int64 { return b.ProcessingTime },
		scores: []score[metrics.BatchRecord]{
			func(b *metrics.BatchRecord) (float64, bool) { return float64(b.StateRows), true },
			func(b *metrics.BatchRecord) (float64, bool) { return float64(b.StateBytes), true },
			wm,
			func(b *metrics.BatchRecord) (float64, bool) {
				return float64(b.ProcessingTime - b.Watermark), b.WatermarkSet()
			},
			func(b *metrics.BatchRecord) (float64, bool) { return 0, !b.WatermarkSet() },
		},
	}
}

// newSparkSeries keeps a run's spark.csv rows: the extremes of every value
// the Spark charts draw.
func newSparkSeries() *series[metrics.SparkBatch] {
	opt := func(p func(*metrics.SparkBatch) *float64) score[metrics.SparkBatch] {
		return func(b *metrics.SparkBatch) (float64, bool) {
			if v := p(b); v != nil {
				return *v, true
			}
			return 0, false
		}
	}
	return &series[metrics.SparkBatch]{
		at: func(b *metrics.SparkBatch) int64 { return b.StartMs },
		scores: []score[metrics.SparkBatch]{
			opt(func(b *metrics.SparkBatch) *float64 { return b.DurationMs }),
			opt(func(b *metrics.SparkBatch) *float64 { return b.ProcessingLagSeconds }),
			func(b *metrics.SparkBatch) (float64, bool) { return float64(b.MaxPartitionRows), true },
			func(b *metrics.SparkBatch) (float64, bool) { return b.MeanPartitionRows, true },
			func(b *metrics.SparkBatch) (float64, bool) { return float64(b.ExecutorMemoryBytes), true },
			func(b *metrics.SparkBatch) (float64, bool) { return float64(b.ExecutorDiskBytes), true },
		},
	}
}
