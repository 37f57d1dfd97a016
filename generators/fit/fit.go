package fit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Options tune a fit; the zero value takes every default.
type Options struct {
	// Trigger is the trigger interval of the scenario written: profile
	// segments last at least one trigger, and start is rounded down to a
	// whole trigger since the epoch. Default 10s.
	Trigger time.Duration
	// Tolerance is how far ahead of its arrival a row's event time may be
	// before the row counts as a bad clock. Default 1m.
	Tolerance time.Duration
	// MaxEvents bounds the events followed individually (a hash sample of
	// ids). Default 200,000.
	MaxEvents int
	// Seed fixes the bootstrap and reservoir draws. Default 1.
	Seed uint64
}

func (o *Options) defaults() {
	if o.Trigger <= 0 {
		o.Trigger = 10 * time.Second
	}
	if o.Tolerance <= 0 {
		o.Tolerance = time.Minute
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 200_000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// RareBadClocks is the number of bad-clock rows below which each becomes
// a bad-clock fault at its own time rather than a futureTimestamps share.
const RareBadClocks = 20

// reservoirSize bounds every sample of values (delays, gaps, skews).
const reservoirSize = 50_000

// maxLatenessPoints bounds the points of the lateness picture: every
// (rows/maxLatenessPoints)-th row, and bad clocks, up to twice as many.
const maxLatenessPoints = 5000

// Segment is one piece of the fitted rate profile.
type Segment struct {
	// Start is the offset from the fit's start, Length the segment's
	// length.
	Start, Length time.Duration
	// Rate is originals per second, with a Poisson 95% interval.
	Rate Interval
	// Count is the sampled originals in the segment.
	Count int64
}

// BadClockRow is one row whose event time is ahead of its arrival.
type BadClockRow struct {
	// At is its arrival, an offset from the fit's start.
	At time.Duration
	// Skew is how far ahead of its arrival its event time is.
	Skew time.Duration
}

// Point is one (arrival offset, value) pair of a picture.
type Point struct{ X, Y float64 }

// Result is everything a fit estimates, with the series the fit report
// draws.
type Result struct {
	Options Options
	// Rows and Events are the log's rows and its events (distinct ids
	// among the sampled ones, scaled by the sample fraction).
	Rows   int64
	Events float64
	// SampleFraction is the share of ids followed individually: the
	// retry, delay and rate estimates come from them.
	SampleFraction float64
	// SampledEvents is the number of events followed.
	SampledEvents int64
	// Start is the first arrival rounded down to a whole trigger since
	// the epoch; Duration runs to the last original's arrival, rounded up
	// to a whole interval.
	Start    time.Time
	Duration time.Duration
	// Bin is the width of the per-interval counts the profile is cut
	// from.
	Bin time.Duration
	// Profile is the fitted rate of originals.
	Profile []Segment
	// PerBinOriginals and PerBinRows are the estimated originals and the
	// rows per bin (the picture of rate over time).
	PerBinOriginals []float64
	PerBinRows      []int64
	// ArrivalDelay is the fitted delay of originals.
	ArrivalDelay DistFit
	// NegativeDelays counts first rows whose event time was ahead of
	// their arrival within the tolerance (fitted as a delay of 0).
	NegativeDelays int64
	// Resent is the share of events with more than one row.
	Resent Interval
	// Copies is the fitted extra copies of resent events.
	Copies CountFit
	// Gap is the fitted gap between successive copies' arrivals.
	Gap DistFit
	// Timestamp is same, restamp or jitter; TimestampVotes counts the
	// copies that kept the first row's event time, that were re-stamped
	// by the time between arrivals, and the others.
	Timestamp      string
	TimestampVotes [3]int64
	// Jitter is the largest move of a copy's event time, with jitter.
	Jitter time.Duration
	// BadClock is the share of rows with a bad clock; BadClockRows
	// counts them.
	BadClock     Interval
	BadClockRows int64
	// Skew is the fitted skew of bad clocks (when at least
	// RareBadClocks), and Faults the bad rows themselves (when fewer).
	Skew   DistFit
	Faults []BadClockRow
	// KeyForm is uuid, int or other.
	KeyForm string
	// Customers is the number of distinct customer values (0: no
	// column), with its interval.
	Customers Interval
	// Lateness is a sample of (arrival offset in seconds, event time
	// minus arrival in seconds) for the picture.
	Lateness []Point
}

// tracked is what the fit follows of one sampled event.
type tracked struct {
	firstArr, firstEvt, lastArr int64
	rows                        int32
	firstBad                    bool
	fault                       bool // a rare bad clock's event: written as a fault
}

// reservoir keeps a uniform sample of at most reservoirSize values
// (Vitter's algorithm R) drawn from its own seeded stream.
type reservoir struct {
	vals []float64
	seen int64
	rng  *rand.Rand
}

func newReservoir(seed, stream uint64) *reservoir {
	return &reservoir{rng: rand.New(rand.NewPCG(seed, stream))}
}

func (r *reservoir) add(v float64) {
	r.seen++
	if len(r.vals) < reservoirSize {
		r.vals = append(r.vals, v)
		return
	}
	if j := r.rng.Int64N(r.seen); j < reservoirSize {
		r.vals[j] = v
	}
}

// hashID is FNV-1a of s finished by splitmix64's mixer, so that its
// high bits are uniform: the sample takes the ids whose hash is below a
// threshold.
func hashID(s []byte) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// ErrEmpty is returned for a log without rows.
var ErrEmpty = errors.New("the log has no rows")

// Fit reads the log twice through open and estimates its workload. The
// first pass counts rows, finds the time span, the key form, the
// customers and the bad clocks; the second follows the events of a hash
// sample of ids sized so that at most MaxEvents are followed.
func Fit(open Opener, opt Options) (*Result, error) {
	opt.defaults()
	res := &Result{Options: opt}
	tol := opt.Tolerance.Microseconds()

	// Pass 1.
	var first, last int64
	uuidForm, intForm := true, true
	kmv := newKMV(4096)
	hasCustomer := false
	skews := newReservoir(opt.Seed, 3)
	rows, err := scan(open, func(n int64, r *Record) error {
		if n == 0 {
			first = r.Arrival
		} else if r.Arrival < last {
			return fmt.Errorf("row %d: arrival %s is before the previous row's %s: rows must be in arrival order", n+1, fmtMicros(r.Arrival), fmtMicros(last))
		}
		last = r.Arrival
		if len(r.ID) == 0 {
			return fmt.Errorf("row %d: empty id", n+1)
		}
		if uuidForm && !isUUID(r.ID) {
			uuidForm = false
		}
		if intForm && !isInt(r.ID) {
			intForm = false
		}
		if len(r.Customer) > 0 {
			hasCustomer = true
			kmv.add(hashID(r.Customer))
		}
		if ahead := r.EventTime - r.Arrival; ahead > tol {
			res.BadClockRows++
			skews.add(float64(ahead) / 1e6)
			if len(res.Faults) < RareBadClocks {
				res.Faults = append(res.Faults, BadClockRow{At: time.Duration(r.Arrival) * time.Microsecond, Skew: time.Duration(ahead) * time.Microsecond})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Rows = rows
	if res.Rows == 0 {
		return nil, ErrEmpty
	}
	switch {
	case uuidForm:
		res.KeyForm = "uuid"
	case intForm:
		res.KeyForm = "int"
	default:
		res.KeyForm = "other"
	}
	if hasCustomer {
		res.Customers = kmv.estimate()
	}
	trig := opt.Trigger.Microseconds()
	start := floorDiv(first, trig) * trig
	res.Start = time.UnixMicro(start).UTC()
	if y := res.Start.Year(); y < 1000 || y >= 9000 {
		// A scenario starts from 1000-01-01 to before 9000-01-01 (sim/scenario's
		// bounds: every time of a run prints with a four-digit year).
		return nil, fmt.Errorf("the log's first arrival, %s, is outside the years a scenario can start in (1000 to 8999): are the arrival times in the unit --time-unit says?", res.Start.Format(time.RFC3339Nano))
	}
	for i := range res.Faults {
		res.Faults[i].At -= time.Duration(start) * time.Microsecond
	}
	span := last - start + 1
	bin := int64(time.Second / time.Microsecond)
	for span/bin > 200_000 {
		bin *= 2
	}
	res.Bin = time.Duration(bin) * time.Microsecond
	nbins := int((span + bin - 1) / bin)
	frac := math.Min(1, float64(opt.MaxEvents)/float64(res.Rows))
	threshold := uint64(math.MaxUint64)
	if frac < 1 {
		threshold = uint64(frac * math.MaxUint64)
	}
	res.SampleFraction = frac

	// Pass 2.
	events := make(map[string]*tracked)
	origBins := make([]float64, nbins)
	res.PerBinRows = make([]int64, nbins)
	delays := newReservoir(opt.Seed, 1)
	gaps := newReservoir(opt.Seed, 2)
	var lastOrig int64
	var maxJitter int64
	hist := make([]int64, 2)
	every := max(1, res.Rows/maxLatenessPoints)
	rareBad := res.BadClockRows < RareBadClocks
	rows2, err := scan(open, func(n int64, r *Record) error {
		b := (r.Arrival - start) / bin
		if n >= res.Rows || r.Arrival < first || r.Arrival > last {
			return fmt.Errorf("row %d: the log changed between the fit's two passes", n+1)
		}
		res.PerBinRows[b]++
		ahead := r.EventTime - r.Arrival
		bad := ahead > tol
		if (n%every == 0 || bad) && len(res.Lateness) < 2*maxLatenessPoints {
			res.Lateness = append(res.Lateness, Point{X: float64(r.Arrival-start) / 1e6, Y: float64(ahead) / 1e6})
		}
		if hashID(r.ID) > threshold {
			return nil
		}
		e, ok := events[string(r.ID)]
		if !ok {
			e = &tracked{firstArr: r.Arrival, firstEvt: r.EventTime, lastArr: r.Arrival, rows: 1, firstBad: bad}
			events[string(r.ID)] = e
			if bad && rareBad {
				// A bad-clock fault is a row of its own, not an
				// original of the profile.
				e.fault = true
				return nil
			}
			origBins[b]++
			lastOrig = r.Arrival
			if !bad {
				if ahead > 0 {
					res.NegativeDelays++
				}
				delays.add(float64(max(0, -ahead)) / 1e6)
			}
			return nil
		}
		e.rows++
		gaps.add(float64(r.Arrival-e.lastArr) / 1e6)
		e.lastArr = r.Arrival
		if bad || e.firstBad {
			return nil
		}
		dE, dA := r.EventTime-e.firstEvt, r.Arrival-e.firstArr
		switch {
		case dE == 0:
			res.TimestampVotes[0]++
		case abs(dE-dA) <= 1000:
			res.TimestampVotes[1]++
		default:
			res.TimestampVotes[2]++
			maxJitter = max(maxJitter, abs(dE))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rows2 != res.Rows {
		return nil, fmt.Errorf("the log changed between the fit's two passes: %d rows, then %d", res.Rows, rows2)
	}
	var resent, followed int64
	for _, e := range events {
		if e.fault {
			continue
		}
		followed++
		k := int(e.rows) - 1
		if k >= 1 {
			resent++
			for len(hist) <= k {
				hist = append(hist, 0)
			}
			hist[k]++
		}
	}
	res.SampledEvents = followed
	res.Events = float64(followed) / frac
	res.Resent = wilson(resent, followed)
	res.Copies = fitCounts(hist)
	res.ArrivalDelay = fitTime(delays.vals, opt.Seed)
	res.Gap = fitTime(gaps.vals, opt.Seed+1)
	res.Timestamp = "same"
	v := res.TimestampVotes
	if tot := v[0] + v[1] + v[2]; tot > 0 {
		switch {
		case v[0] >= v[1] && v[0] >= v[2]:
			res.Timestamp = "same"
		case v[1] >= v[2]:
			res.Timestamp = "restamp"
		default:
			res.Timestamp = "jitter"
			res.Jitter = time.Duration(maxJitter) * time.Microsecond
		}
	}
	res.BadClock = wilson(res.BadClockRows, res.Rows)
	if res.BadClockRows >= RareBadClocks {
		res.Skew = fitTime(skews.vals, opt.Seed+2)
	}

	// The profile: originals per bin, cut by binary segmentation, up to
	// the last original.
	end := int((lastOrig-start)/bin) + 1
	res.Duration = time.Duration(int64(end)*bin) * time.Microsecond
	if res.Duration < opt.Trigger {
		// A profile segment shorter than the trigger cannot show in a
		// run: the scenario written would not load.
		return nil, fmt.Errorf("the log's originals arrive within %s of the trigger grid's start, less than one trigger (%s): a fitted rate needs at least one whole batch; fit with a smaller trigger (fit --trigger, or the scenario's trigger:), or a longer log", fmtDur(res.Duration), fmtDur(opt.Trigger))
	}
	res.PerBinOriginals = make([]float64, nbins)
	for i := range origBins {
		res.PerBinOriginals[i] = origBins[i] / frac
	}
	minLen := max(1, int((trig+bin-1)/bin))
	counts := origBins[:end]
	starts := profileStarts(counts, minLen)
	for i, a := range starts {
		b := end
		if i+1 < len(starts) {
			b = starts[i+1]
		}
		var s float64
		for _, c := range counts[a:b] {
			s += c
		}
		secs := float64(int64(b-a)*bin) / 1e6
		rate := s / frac / secs
		h := 1.959964 * math.Sqrt(s) / frac / secs
		iv := Interval{Value: rate, Lo: max(0, rate-h), Hi: rate + h, Method: "Poisson normal approximation, 95%"}
		if s == 0 {
			iv.Hi = 3 / frac / secs
			iv.Method = "rule of three, 95%"
		}
		res.Profile = append(res.Profile, Segment{
			Start:  time.Duration(int64(a)*bin) * time.Microsecond,
			Length: time.Duration(int64(b-a)*bin) * time.Microsecond,
			Rate:   iv, Count: int64(s),
		})
	}
	if res.BadClockRows >= RareBadClocks {
		res.Faults = nil
	}
	// A bad-clock fault must arrive within the run: a later one extends
	// it with a stall.
	for _, f := range res.Faults {
		if f.At >= res.Duration {
			d := (f.At/res.Bin + 1) * res.Bin
			if lastSeg := &res.Profile[len(res.Profile)-1]; lastSeg.Rate.Value == 0 || d-res.Duration < opt.Trigger {
				lastSeg.Length += d - res.Duration
			} else {
				res.Profile = append(res.Profile, Segment{Start: res.Duration, Length: d - res.Duration, Rate: Interval{Method: "no originals: the run extended to a bad clock"}})
			}
			res.Duration = d
		}
	}
	return res, nil
}

// scan opens the log and calls fn with each row and its index; it returns
// the number of rows.
func scan(open Opener, fn func(n int64, r *Record) error) (int64, error) {
	src, err := open()
	if err != nil {
		return 0, err
	}
	var r Record
	var n int64
	for {
		ok, err := src.Next(&r)
		if err != nil {
			src.Close()
			return n, err
		}
		if !ok {
			break
		}
		if err := fn(n, &r); err != nil {
			src.Close()
			return n, err
		}
		n++
	}
	return n, src.Close()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func fmtMicros(us int64) string {
	return time.UnixMicro(us).UTC().Format(time.RFC3339Nano)
}

// isUUID reports whether s has a UUID's text form: 36 characters, hex
// digits with hyphens at 8, 13, 18 and 23.
func isUUID(s []byte) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// isInt reports whether s is a decimal integer that fits in 64 bits.
func isInt(s []byte) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 19 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(s) < 19 || string(s) <= "9223372036854775807"
}

// kmv estimates a number of distinct values from the k smallest hashes
// (k-minimum-values): exact while fewer than k distinct hashes were seen.
type kmv struct {
	k    int
	heap []uint64 // max-heap of the k smallest hashes
	set  map[uint64]struct{}
}

func newKMV(k int) *kmv { return &kmv{k: k, set: map[uint64]struct{}{}} }

func (m *kmv) add(h uint64) {
	if _, ok := m.set[h]; ok {
		return
	}
	if len(m.heap) < m.k {
		m.set[h] = struct{}{}
		m.heap = append(m.heap, h)
		m.up(len(m.heap) - 1)
		return
	}
	if h >= m.heap[0] {
		return
	}
	delete(m.set, m.heap[0])
	m.set[h] = struct{}{}
	m.heap[0] = h
	m.down(0)
}

func (m *kmv) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if m.heap[p] >= m.heap[i] {
			return
		}
		m.heap[p], m.heap[i] = m.heap[i], m.heap[p]
		i = p
	}
}

func (m *kmv) down(i int) {
	for {
		l, big := 2*i+1, i
		if l < len(m.heap) && m.heap[l] > m.heap[big] {
			big = l
		}
		if r := l + 1; r < len(m.heap) && m.heap[r] > m.heap[big] {
			big = r
		}
		if big == i {
			return
		}
		m.heap[i], m.heap[big] = m.heap[big], m.heap[i]
		i = big
	}
}

// estimate returns the distinct count: exact below k, else (k-1)/u_k with
// u_k the k-th smallest hash as a fraction of 2^64, whose relative
// standard error is about 1/sqrt(k-2).
func (m *kmv) estimate() Interval {
	n := len(m.heap)
	if n < m.k {
		return Interval{Value: float64(n), Lo: float64(n), Hi: float64(n), Method: "exact (fewer than 4096 distinct values)"}
	}
	u := float64(m.heap[0]) / math.Exp2(64)
	est := float64(m.k-1) / u
	rel := 1.959964 / math.Sqrt(float64(m.k-2))
	return Interval{Value: est, Lo: est * (1 - rel), Hi: est * (1 + rel), Method: "k-minimum-values (k=4096), 95%"}
}
