package plan

import (
	"errors"
	"fmt"
	"math"
)

// This file is the capacity planner's closed-form model: an estimate, from
// the workload's distributions alone, of what a dedup query keeps in state
// and what it gets wrong at a given watermark delay. `simulate plan` prints
// it beside the simulated values, and the tests check the two against each
// other. It is an estimate: the simulation is the authority.
//
// Notation (all in seconds): D the watermark delay, T the trigger
// interval, A an original's arrival delay (event time to arrival), g the
// gap between successive copies of a resent event, λ the rate of
// originals.
//
// The watermark. A batch at processing time t evicts with watermark
// M(t-T) - D, where M(t-T) is the largest event time seen in earlier
// batches. In steady traffic M(t-T) = t - T - q0: q0, the watermark lag, is
// the smallest arrival delay among the last rows, the x at which
// λ ∫0..x F_A(v) dv = ln 2 (about 0 for an exponential arrival delay, the
// minimum for a uniform one). The late-row filter uses the watermark of
// the batch before, M(t-2T) - D.
//
// Retention. A key is evicted by the first batch whose watermark reaches
// its expiry, so state after the batch at t holds the keys whose event
// time lies within the last H seconds, the event-time horizon:
//
//	pair-keyed       dropDuplicates([id, event_time]):  H = D + T + q0
//	within-watermark dropDuplicatesWithinWatermark([id]): expiresAt = first
//	                 event time + D, so H = 2D + T + q0
//	never evicting   (event time not a key, or no watermark reaching the
//	                 dedup): H = ∞, state grows for as long as the query runs
//
// A key enters state when its row arrives, A after its event time, so it
// stays in state H - A of processing time.
//
// Peak state. Every row a query emits stores exactly one new key, and
// nothing else does, so the keys in state are the emitted rows of the last
// H seconds of event time that have already arrived:
//
//	rows(t) = ∫0..H  λu(t - s) · P(A <= s, not dropped late) ds
//	        ≈ λu · (H - E[min(A, H)])            in steady traffic
//
// where λu, the unique-key rate, is the rate of emitted rows: originals
// that were not late, the copies that the query re-admits (missed
// duplicates) and heartbeats. The rate follows the scenario's profile and
// the model takes the largest rows(t) over the batches of a run of the
// scenario's duration (so a run shorter than H is not over-predicted),
// plus the Poisson fluctuation of the largest batch, sqrt(2 ln n) x
// sqrt(rows) for n = duration / H independent windows; and separately the
// steady state (the mean) at the peak rate. Bytes are rows times the
// bytes of one entry (metrics.EntryBytes).
//
// False drops. A row arriving at a in the batch at t is late when its
// event time a - A is at or below M(t-2T) - D, that is when
// A > D + q0 + T + V with V = T - (t - a) uniform in (0, T]. So the
// false-drop rate, the share of originals whose arrival delay exceeds
// about the delay, is
//
//	falseDrop ≈ (1/T) ∫ D+q0+T .. D+q0+2T  (1 - F_A(x)) dx
//
// (a copy that rescues an event whose original was late is ignored), times
// 1 - 2T/duration over a run, since the first two batches drop nothing.
//
// Missed duplicates. Per copy k of an event (k = 1..K extra copies, the
// copy's gap from the original G_k = g1 + ... + gk):
//
//   - If a key column differs between copies (a re-stamped or jittered
//     event_time in a pair key, or attempt/ingest_time), every copy is a
//     new key at any delay: it is missed unless dropped late. With
//     re-stamped copies (same arrival delay as the original) the missed
//     rate is about 1 - falseDrop whatever the delay.
//   - Within-watermark with re-stamped copies: the key stored by the last
//     admitted copy is still in state when the next copy arrives if its
//     gap from that copy is below R = 2D + 1.5T + q0 - A (the horizon less
//     the arrival delay, plus half a trigger for the batch that evicts);
//     a later copy is re-admitted (missed) and stored anew. The model runs
//     this renewal over the copies with the gap distribution discretised
//     on a grid, averaged over A.
//   - With copies that keep the original's event time (same, jitter) and
//     the same key, a copy arriving after its key was evicted is behind
//     the watermark and dropped late: nothing is missed.

// Distribution is a distribution of seconds the model integrates over:
// gonum's distuv Exponential, LogNormal, Uniform and Pareto satisfy it.
type Distribution interface {
	// CDF returns P(X <= x).
	CDF(x float64) float64
	// Quantile returns the x at which CDF(x) = p.
	Quantile(p float64) float64
}

// CopyTimestamp says which event time a retried copy carries, as the
// scenario's retries.timestamp.
type CopyTimestamp int

// The copy timestamp modes.
const (
	// SameTimestamp: a copy carries the original's event time.
	SameTimestamp CopyTimestamp = iota
	// Restamped: a copy's event time moves by its gap from the original,
	// so its arrival delay equals the original's.
	Restamped
	// Jittered: a copy's event time is the original's moved by a small
	// jitter (the model treats it as the original's).
	Jittered
)

// ModelSegment is one step of a rate profile.
type ModelSegment struct {
	// Seconds is how long the step lasts; 0 for a constant rate.
	Seconds float64
	// Rate is originals per second during the step.
	Rate float64
}

// ModelWorkload is what the model needs to know of the traffic.
type ModelWorkload struct {
	// Segments is the rate profile, repeated to fill the duration; one
	// segment with Seconds 0 is a constant rate.
	Segments []ModelSegment
	// DurationSeconds is the span of original arrivals.
	DurationSeconds float64
	// TriggerSeconds is the trigger interval.
	TriggerSeconds float64
	// HeartbeatSeconds, when above 0, adds a unique row at that interval.
	HeartbeatSeconds float64
	// ArrivalDelay is the distribution of an original's arrival delay;
	// nil is constant 0.
	ArrivalDelay Distribution
	// RetryProbability is the share of originals resent at least once.
	RetryProbability float64
	// ExtraCopies[k-1] is the probability that a resent event has k extra
	// copies.
	ExtraCopies []float64
	// RetryGap is the distribution of the gap between successive copies;
	// nil is constant 0.
	RetryGap Distribution
	// CopyTimestamp is the event time copies carry.
	CopyTimestamp CopyTimestamp
}

// QueryShape classifies a dedup query for the model.
type QueryShape int

// The query shapes.
const (
	// PairKeyed is dropDuplicates with the watermarked event time among
	// its keys: a key lives until the watermark passes its event time.
	PairKeyed QueryShape = iota
	// WithinWatermark is dropDuplicatesWithinWatermark: a key lives until
	// the watermark passes its first event time plus the delay.
	WithinWatermark
	// NeverEvicts is a dedup whose keys are never evicted: no watermark
	// reaches it, or the event time is not among dropDuplicates' keys.
	NeverEvicts
)

// String names the shape.
func (s QueryShape) String() string {
	switch s {
	case PairKeyed:
		return "pair-keyed dropDuplicates"
	case WithinWatermark:
		return "dropDuplicatesWithinWatermark"
	case NeverEvicts:
		return "never-evicting dedup"
	}
	return "unknown"
}

// ModelQuery is the query the model estimates.
type ModelQuery struct {
	Shape QueryShape
	// DelaySeconds is the watermark delay.
	DelaySeconds float64
	// WatermarkReaches is true when a watermark reaches the dedup, so it
	// drops late rows (always true for PairKeyed and WithinWatermark).
	WatermarkReaches bool
	// CopiesAreNewKeys is true when a key column differs between copies
	// of an event (a re-stamped event_time in a pair key, attempt,
	// ingest_time): every copy is then a new key.
	CopiesAreNewKeys bool
	// BytesPerEntry is the modelled size of one state entry.
	BytesPerEntry int64
}

// ModelEstimate is the model's estimate for one query at one delay.
type ModelEstimate struct {
	// HorizonSeconds is the event-time horizon H a key is kept for
	// (+Inf when the query never evicts).
	HorizonSeconds float64
	// WatermarkLagSeconds is q0, how far the largest event time seen
	// trails processing time in steady traffic.
	WatermarkLagSeconds float64
	// KeysPerOriginal is the number of keys stored per original event:
	// 1 - falseDrop plus the re-admitted copies.
	KeysPerOriginal float64
	// PeakStateRows is the largest state over the batches of a run of the
	// workload's duration; for a query that never evicts, the keys stored
	// over the whole run.
	PeakStateRows float64
	// PeakStateBytes is PeakStateRows x BytesPerEntry.
	PeakStateBytes float64
	// SteadyStateRows is the state once the run is longer than the
	// horizon, at the profile's peak rate (+Inf when the query never
	// evicts: state grows without bound).
	SteadyStateRows float64
	// SteadyStateBytes is SteadyStateRows x BytesPerEntry.
	SteadyStateBytes float64
	// Unbounded is true when the query never evicts.
	Unbounded bool
	// FalseDropRate estimates the share of logical events never emitted.
	FalseDropRate float64
	// MissedRate estimates the share of copies emitted again.
	MissedRate float64
}

// Model grid sizes: lattice points of a gap distribution, arrival-delay
// quantiles averaged over, the most copies per event followed, and the
// points of the state kernel.
const (
	gapLattice    = 400
	delayPoints   = 16
	maxCopiesK    = 64
	kernelLattice = 1024
)

// EstimateModel returns the closed-form estimate for q on w.
func EstimateModel(w ModelWorkload, q ModelQuery) (ModelEstimate, error) {
	m, err := newModel(w, q)
	if err != nil {
		return ModelEstimate{}, err
	}
	return m.estimate(), nil
}

// constDist is a constant distribution (an absent one is constant 0).
type constDist float64

func (c constDist) CDF(x float64) float64 {
	if x >= float64(c) {
		return 1
	}
	return 0
}

func (c constDist) Quantile(float64) float64 { return float64(c) }

type model struct {
	w        ModelWorkload
	q        ModelQuery
	a, g     Distribution
	T, D     float64
	q0       float64
	lth      float64   // late threshold on A: D + q0 + T (+V)
	horizon  float64   // H
	surv     []float64 // P(K >= k), k = 1..len
	peakRate float64
	meanRate float64
}

func newModel(w ModelWorkload, q ModelQuery) (*model, error) {
	if !(w.TriggerSeconds > 0) {
		return nil, fmt.Errorf("model: trigger %v s: want above 0", w.TriggerSeconds)
	}
	if q.DelaySeconds < 0 || math.IsNaN(q.DelaySeconds) {
		return nil, fmt.Errorf("model: delay %v s: want at least 0", q.DelaySeconds)
	}
	if len(w.Segments) == 0 {
		return nil, errors.New("model: no rate")
	}
	m := &model{w: w, q: q, a: w.ArrivalDelay, g: w.RetryGap, T: w.TriggerSeconds, D: q.DelaySeconds}
	if m.a == nil {
		m.a = constDist(0)
	}
	if m.g == nil {
		m.g = constDist(0)
	}
	if q.Shape == PairKeyed || q.Shape == WithinWatermark {
		m.q.WatermarkReaches = true
	}
	var cycle, work float64
	for _, s := range w.Segments {
		if s.Rate < 0 || s.Seconds < 0 {
			return nil, fmt.Errorf("model: segment %+v: want non-negative", s)
		}
		m.peakRate = max(m.peakRate, s.Rate)
		cycle += s.Seconds
		work += s.Seconds * s.Rate
	}
	m.meanRate = m.peakRate
	if cycle > 0 {
		m.meanRate = work / cycle
	}
	if w.RetryProbability > 0 {
		left := 1.0
		for k := 1; k <= min(len(w.ExtraCopies), maxCopiesK); k++ {
			if left < 1e-9 {
				break
			}
			m.surv = append(m.surv, left)
			left -= w.ExtraCopies[k-1]
		}
	}
	m.q0 = m.watermarkLag()
	m.lth = m.D + m.q0 + m.T
	switch q.Shape {
	case PairKeyed:
		m.horizon = m.D + m.T + m.q0
	case WithinWatermark:
		m.horizon = 2*m.D + m.T + m.q0
	default:
		m.horizon = math.Inf(1)
	}
	return m, nil
}

// watermarkLag solves λ ∫0..x F_A(v) dv + x/heartbeat = ln 2 for x at the
// peak rate: the median lag of the largest event time behind the batch
// boundary.
func (m *model) watermarkLag() float64 {
	hb := 0.0
	if m.w.HeartbeatSeconds > 0 {
		hb = 1 / m.w.HeartbeatSeconds
	}
	if m.peakRate <= 0 && hb == 0 {
		return 0
	}
	f := func(x float64) float64 {
		return m.peakRate*integrate(m.a.CDF, 0, x, 64) + x*hb - math.Ln2
	}
	hi := math.Max(m.a.Quantile(0.999), 1)
	for f(hi) < 0 && hi < 1e9 {
		hi *= 2
	}
	lo := 0.0
	for range 60 {
		mid := (lo + hi) / 2
		if f(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// late returns L(a), the chance that a row with arrival delay a is behind
// the late-row watermark: A > D + q0 + T + V for V uniform in (0, T].
func (m *model) late(a float64) float64 {
	if !m.q.WatermarkReaches {
		return 0
	}
	return math.Min(math.Max((a-m.lth)/m.T, 0), 1)
}

// falseDrop is E[L(A)] = (1/T) ∫ lth..lth+T (1 - F_A(x)) dx.
func (m *model) falseDrop() float64 {
	if !m.q.WatermarkReaches {
		return 0
	}
	return integrate(func(x float64) float64 { return 1 - m.a.CDF(x) }, m.lth, m.lth+m.T, 64) / m.T
}

// lateSquared is E[L(A)^2] = ∫ lth..lth+T 2(x-lth)/T^2 (1 - F_A(x)) dx.
func (m *model) lateSquared() float64 {
	if !m.q.WatermarkReaches {
		return 0
	}
	return integrate(func(x float64) float64 { return 2 * (x - m.lth) / (m.T * m.T) * (1 - m.a.CDF(x)) }, m.lth, m.lth+m.T, 64)
}

// delayQuantiles returns the midpoint quantiles of A.
func (m *model) delayQuantiles() []float64 {
	out := make([]float64, delayPoints)
	for i := range out {
		out[i] = m.a.Quantile((float64(i) + 0.5) / delayPoints)
	}
	return out
}

// storedWithin is P(A <= s and not late): the share of originals with
// event time s seconds ago that are in state now.
func (m *model) storedWithin(s float64) float64 {
	if !m.q.WatermarkReaches || s <= m.lth {
		return m.a.CDF(s)
	}
	// E_V[F_A(min(s, lth + V))]
	const n = 16
	var sum float64
	for i := range n {
		v := (float64(i) + 0.5) / n * m.T
		sum += m.a.CDF(math.Min(s, m.lth+v))
	}
	return sum / n
}

// lattice discretises the gap distribution on points j*h, j = 0..n-1:
// p[j] = P(g in [(j-1/2)h, (j+1/2)h)); the mass beyond is dropped.
func (m *model) lattice(h float64, n int) []float64 {
	p := make([]float64, n)
	prev := 0.0
	for j := range p {
		c := m.g.CDF((float64(j) + 0.5) * h)
		p[j] = c - prev
		prev = c
	}
	return p
}

// convolve returns (s * p) truncated to len(s).
func convolve(s, p []float64) []float64 {
	out := make([]float64, len(s))
	for i, si := range s {
		if si == 0 {
			continue
		}
		for j := 0; i+j < len(out) && j < len(p); j++ {
			out[i+j] += si * p[j]
		}
	}
	return out
}

func sum(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t
}

// withinChain returns, for copies k = 1..len(surv), the chance that copy
// k is re-admitted by a within-watermark query whose key outlives its
// admitting copy by threshold R seconds of arrival: the renewal over the
// copies' gaps, where a copy more than R after the last admitted one is
// admitted (missed) and restarts the clock.
func (m *model) withinChain(R float64) []float64 {
	out := make([]float64, len(m.surv))
	if R <= 0 {
		for k := range out {
			out[k] = 1
		}
		return out
	}
	h := R / (gapLattice - 1)
	p := m.lattice(h, gapLattice)
	s := make([]float64, gapLattice)
	s[0] = 1
	for k := range out {
		s = convolve(s, p)
		miss := math.Max(1-sum(s), 0)
		s[0] += miss
		out[k] = miss
	}
	return out
}

// copySums returns, for k = 1..len(surv), P(G_k <= x) on the lattice
// j*h, j < n, as cumulative vectors.
func (m *model) copySums(h float64, n int) [][]float64 {
	p := m.lattice(h, n)
	out := make([][]float64, len(m.surv))
	s := p
	for k := range out {
		if k > 0 {
			s = convolve(s, p)
		}
		c := make([]float64, n)
		acc := 0.0
		for j, v := range s {
			acc += v
			c[j] = acc
		}
		out[k] = c
	}
	return out
}

// cdfAt reads a cumulative lattice vector at x.
func cdfAt(c []float64, h, x float64) float64 {
	if x < 0 {
		return 0
	}
	j := int(math.Floor(x/h + 0.5))
	if j >= len(c) {
		return c[len(c)-1]
	}
	return c[j]
}

// copyClass describes the copies a query stores as new keys.
type copyClass struct {
	// missed[k-1] is the chance that copy k is emitted again.
	missed []float64
	// kernel, when set, is the share of stored copies k of an event whose
	// event time is s seconds ago that are in state now, summed over k
	// weighted by P(K >= k) (copies keeping the original's event time);
	// nil means the copies' event times move with them (restamped) and
	// they follow the originals' kernel.
	kernel func(s float64) float64
}

func (m *model) copies() copyClass {
	c := copyClass{missed: make([]float64, len(m.surv))}
	if len(m.surv) == 0 {
		return c
	}
	restamp := m.w.CopyTimestamp == Restamped
	switch {
	case m.q.CopiesAreNewKeys && restamp:
		// Same arrival delay as the original, its own batch phase: missed
		// when neither the original nor the copy is late.
		v := math.Max(1-2*m.falseDrop()+m.lateSquared(), 0)
		for k := range c.missed {
			c.missed[k] = v
		}
	case m.q.CopiesAreNewKeys:
		// The copy keeps the original's event time and arrives G_k later:
		// emitted unless A + G_k is past the late threshold.
		if !m.q.WatermarkReaches {
			for k := range c.missed {
				c.missed[k] = 1
			}
			return c
		}
		top := m.lth + m.T
		if !math.IsInf(m.horizon, 1) {
			top = math.Max(top, m.horizon)
		}
		h := top / (gapLattice - 1)
		sums := m.copySums(h, gapLattice)
		as := m.delayQuantiles()
		const nv = 8
		for k := range c.missed {
			var acc float64
			for _, a := range as {
				for i := range nv {
					v := (float64(i) + 0.5) / nv * m.T
					acc += cdfAt(sums[k], h, m.lth+v-a)
				}
			}
			c.missed[k] = acc / float64(len(as)*nv)
		}
		c.kernel = func(s float64) float64 {
			var tot float64
			for k, w := range m.surv {
				var acc float64
				for _, a := range as {
					lim := s
					if s > m.lth {
						lim = m.lth + m.T/2
					}
					acc += cdfAt(sums[k], h, lim-a)
				}
				tot += w * acc / float64(len(as))
			}
			return tot
		}
	case m.q.Shape == WithinWatermark && restamp:
		// Missed: the original was not late and copy k is re-admitted,
		// averaged over the arrival delay.
		as := m.delayQuantiles()
		for _, a := range as {
			keep := 1 - m.late(a)
			if keep == 0 {
				continue
			}
			ch := m.withinChain(2*m.D + 1.5*m.T + m.q0 - a)
			for k := range c.missed {
				c.missed[k] += keep * ch[k] / float64(len(as))
			}
		}
	}
	return c
}

// kernelTable tabulates the cumulative of a state kernel w over [0, H]:
// cum[i] = ∫0..i*step w.
type kernelTable struct {
	step float64
	cum  []float64
}

func newKernelTable(w func(float64) float64, H float64) kernelTable {
	kt := kernelTable{step: H / kernelLattice, cum: make([]float64, kernelLattice+1)}
	prev := w(0)
	for i := 1; i <= kernelLattice; i++ {
		cur := w(float64(i) * kt.step)
		kt.cum[i] = kt.cum[i-1] + (prev+cur)/2*kt.step
		prev = cur
	}
	return kt
}

// at returns ∫0..s w for s in [0, H].
func (kt kernelTable) at(s float64) float64 {
	if s <= 0 || kt.step == 0 {
		return 0
	}
	x := s / kt.step
	i := int(x)
	if i >= len(kt.cum)-1 {
		return kt.cum[len(kt.cum)-1]
	}
	f := x - float64(i)
	return kt.cum[i]*(1-f) + kt.cum[i+1]*f
}

// profileWindow returns ∫ λ(e) w(t - e) de over the event times e in
// (t-H, t] within [0, dur), for the profile repeating to fill [0, dur),
// with kt the cumulative of the kernel w.
func (m *model) profileWindow(t, H, dur float64, kt kernelTable) float64 {
	lo, hi := math.Max(t-H, 0), math.Min(t, dur)
	if hi <= lo {
		return 0
	}
	segs := m.w.Segments
	if len(segs) == 1 || segs[0].Seconds == 0 {
		// ∫lo..hi λ w(t-e) de = λ (W(t-lo) - W(t-hi))
		return segs[0].Rate * (kt.at(t-lo) - kt.at(t-hi))
	}
	var cycle float64
	for _, s := range segs {
		cycle += s.Seconds
	}
	var total float64
	start := math.Floor(lo/cycle) * cycle
	for c := start; c < hi; c += cycle {
		at := c
		for _, s := range segs {
			a, b := math.Max(at, lo), math.Min(at+s.Seconds, hi)
			if b > a && s.Rate > 0 {
				total += s.Rate * (kt.at(t-a) - kt.at(t-b))
			}
			at += s.Seconds
		}
	}
	return total
}

func (m *model) estimate() ModelEstimate {
	est := ModelEstimate{HorizonSeconds: m.horizon, WatermarkLagSeconds: m.q0}
	fd := m.falseDrop()
	// No row is late in the first two batches (their late-row watermark
	// is 0), so over a run of originals the share is a little lower.
	est.FalseDropRate = fd
	if dur := m.w.DurationSeconds; dur > 0 {
		est.FalseDropRate = fd * math.Max(0, 1-2*m.T/dur)
	}
	cc := m.copies()
	p := m.w.RetryProbability
	var extra, missedW float64
	for k, w := range m.surv {
		extra += w
		missedW += w * cc.missed[k]
	}
	if extra > 0 {
		est.MissedRate = missedW / extra
	}
	// Copies stored per original: p x Σ P(K>=k) missed_k.
	copiesPer := p * missedW
	est.KeysPerOriginal = 1 - fd + copiesPer
	hb := 0.0
	if m.w.HeartbeatSeconds > 0 {
		hb = 1 / m.w.HeartbeatSeconds
	}
	dur := m.w.DurationSeconds

	if math.IsInf(m.horizon, 1) {
		est.Unbounded = true
		est.SteadyStateRows = math.Inf(1)
		est.SteadyStateBytes = math.Inf(1)
		est.PeakStateRows = m.meanRate*dur*est.KeysPerOriginal + hb*dur
		est.PeakStateBytes = est.PeakStateRows * float64(m.q.BytesPerEntry)
		return est
	}
	H := m.horizon
	orig := newKernelTable(m.storedWithin, H)
	// The rows of one original event s seconds ago that are in state:
	// the original, and its stored copies.
	var copyKT kernelTable
	copyScale := 0.0
	if cc.kernel != nil {
		copyKT = newKernelTable(cc.kernel, H)
		copyScale = p
	} else if notLate := m.storedWithin(math.Inf(1)); notLate > 0 {
		// Re-stamped copies move with their gap: each stored one is like
		// an original arriving later (their conditional kernel is the
		// originals' given not late).
		copyKT = orig
		copyScale = copiesPer / notLate
	}
	hbKT := newKernelTable(func(float64) float64 { return 1 }, H)
	rowsAt := func(t, dur float64) float64 {
		r := m.profileWindow(t, H, dur, orig)
		if copyScale > 0 {
			r += copyScale * m.profileWindow(t, H, dur, copyKT)
		}
		if hb > 0 {
			r += hb * (hbKT.at(math.Min(t, H)) - hbKT.at(math.Max(t-dur, 0)))
		}
		return r
	}
	steady := m.peakRate*(orig.at(H)+copyScale*copyKT.at(H)) + hb*H
	est.SteadyStateRows = steady
	est.SteadyStateBytes = steady * float64(m.q.BytesPerEntry)

	// The peak over the batches of the run: every batch time up to the
	// end of original arrivals plus a horizon (at most 200000 of them).
	end := dur + H
	n := math.Ceil(end / m.T)
	stride := math.Max(1, math.Ceil(n/200000))
	var peak float64
	for i := 1.0; i <= n; i += stride {
		peak = math.Max(peak, rowsAt(i*m.T, dur))
	}
	// The largest of the batches is above the mean by the Poisson
	// fluctuation of the count: about sqrt(2 ln n) standard deviations
	// (sqrt(rows)) for n = run / H independent windows.
	if n := dur / H; peak > 0 && n > 1 {
		peak += math.Sqrt(2*math.Log(n)) * math.Sqrt(peak)
	}
	est.PeakStateRows = peak
	est.PeakStateBytes = peak * float64(m.q.BytesPerEntry)
	return est
}

// integrate is composite Simpson's rule with n (even) intervals.
func integrate(f func(float64) float64, a, b float64, n int) float64 {
	if b <= a {
		return 0
	}
	if n%2 == 1 {
		n++
	}
	h := (b - a) / float64(n)
	s := f(a) + f(b)
	for i := 1; i < n; i++ {
		x := a + float64(i)*h
		if i%2 == 1 {
			s += 4 * f(x)
		} else {
			s += 2 * f(x)
		}
	}
	return s * h / 3
}
