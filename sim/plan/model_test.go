package plan

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func steady(rate float64) ModelWorkload {
	return ModelWorkload{
		Segments:        []ModelSegment{{Rate: rate}},
		DurationSeconds: 7200,
		TriggerSeconds:  10,
	}
}

func estimate(t *testing.T, w ModelWorkload, q ModelQuery) ModelEstimate {
	t.Helper()
	est, err := EstimateModel(w, q)
	if err != nil {
		t.Fatal(err)
	}
	return est
}

func near(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want)+1e-12 {
		t.Errorf("%s = %.6g, want %.6g (within %.2g%%)", what, got, want, 100*rel)
	}
}

// With no retries and no arrival delay the horizon is the whole story:
// state = rate x (delay + trigger + q0) for pair-keyed and
// rate x (2 delay + trigger + q0) for within-watermark, q0 = ln 2 / rate.
func TestModelRetentionWithoutRetries(t *testing.T) {
	w := steady(1000)
	q0 := math.Ln2 / 1000
	pair := estimate(t, w, ModelQuery{Shape: PairKeyed, DelaySeconds: 300, BytesPerEntry: 200})
	near(t, "pair-keyed q0", pair.WatermarkLagSeconds, q0, 1e-3)
	near(t, "pair-keyed horizon", pair.HorizonSeconds, 310+q0, 1e-9)
	near(t, "pair-keyed steady rows", pair.SteadyStateRows, 1000*(310+q0), 1e-3)
	near(t, "pair-keyed steady bytes", pair.SteadyStateBytes, 200*1000*(310+q0), 1e-3)
	// The run's peak adds the Poisson fluctuation of the largest batch.
	fluct := math.Sqrt(2*math.Log(7200/(310+q0))) * math.Sqrt(1000*(310+q0))
	near(t, "pair-keyed peak rows", pair.PeakStateRows, 1000*(310+q0)+fluct, 1e-3)
	if pair.MissedRate != 0 || pair.FalseDropRate != 0 || pair.KeysPerOriginal != 1 {
		t.Errorf("pair-keyed without retries or delays: missed %v, false drops %v, keys/original %v; want 0, 0, 1", pair.MissedRate, pair.FalseDropRate, pair.KeysPerOriginal)
	}
	within := estimate(t, w, ModelQuery{Shape: WithinWatermark, DelaySeconds: 300})
	near(t, "within-watermark steady rows", within.SteadyStateRows, 1000*(610+q0), 1e-3)

	never := estimate(t, w, ModelQuery{Shape: NeverEvicts, DelaySeconds: 300, WatermarkReaches: true, BytesPerEntry: 200})
	if !never.Unbounded || !math.IsInf(never.SteadyStateRows, 1) || !math.IsInf(never.HorizonSeconds, 1) {
		t.Errorf("never-evicting: unbounded %v, steady %v, horizon %v; want true, +Inf, +Inf", never.Unbounded, never.SteadyStateRows, never.HorizonSeconds)
	}
	near(t, "never-evicting rows over the run", never.PeakStateRows, 1000*7200, 1e-9)
}

// A run shorter than the horizon peaks at what arrived during the run.
func TestModelShortRun(t *testing.T) {
	w := steady(100)
	w.DurationSeconds = 600
	est := estimate(t, w, ModelQuery{Shape: WithinWatermark, DelaySeconds: 600})
	near(t, "peak of a run shorter than the horizon", est.PeakStateRows, 100*600, 1e-3)
	if est.SteadyStateRows < 2*est.PeakStateRows {
		t.Errorf("steady state %v should be about twice the short run's peak %v", est.SteadyStateRows, est.PeakStateRows)
	}
}

// Arrival delays shorten the time a key spends in state: rows =
// rate x (H - E[min(A, H)]), and false drops follow the tail past
// delay + q0 + T (averaged over the batch phase).
func TestModelArrivalDelay(t *testing.T) {
	w := steady(1000)
	mean := 20.0
	w.ArrivalDelay = distuv.Exponential{Rate: 1 / mean}
	est := estimate(t, w, ModelQuery{Shape: PairKeyed, DelaySeconds: 60})
	H := est.HorizonSeconds
	emin := mean * (1 - math.Exp(-H/mean)) // E[min(A, H)] for an exponential
	near(t, "rows with arrival delays", est.SteadyStateRows, 1000*(H-emin), 2e-3)
	lth := 60 + est.WatermarkLagSeconds + 10
	fd := mean / 10 * (math.Exp(-lth/mean) - math.Exp(-(lth+10)/mean)) * (1 - 20.0/7200)
	near(t, "false-drop rate", est.FalseDropRate, fd, 1e-4)
	// A longer delay loses fewer events and keeps more.
	longer := estimate(t, w, ModelQuery{Shape: PairKeyed, DelaySeconds: 120})
	if !(longer.FalseDropRate < est.FalseDropRate && longer.SteadyStateRows > est.SteadyStateRows) {
		t.Errorf("delay 120s: false drops %v, rows %v; want below %v and above %v", longer.FalseDropRate, longer.SteadyStateRows, est.FalseDropRate, est.SteadyStateRows)
	}
}

// One re-stamped copy per resent event with a uniform gap: within the
// watermark it is missed when the gap exceeds R = 2D + 1.5T + q0, and each
// missed copy is one more key; pair-keyed misses every copy.
func TestModelRestampedCopies(t *testing.T) {
	w := steady(1000)
	w.RetryProbability = 0.1
	w.ExtraCopies = []float64{1}
	w.RetryGap = distuv.Uniform{Min: 0, Max: 400}
	w.CopyTimestamp = Restamped
	within := estimate(t, w, ModelQuery{Shape: WithinWatermark, DelaySeconds: 100})
	R := 200 + 15 + within.WatermarkLagSeconds
	near(t, "within-watermark missed rate", within.MissedRate, (400-R)/400, 0.01)
	near(t, "keys per original", within.KeysPerOriginal, 1+0.1*(400-R)/400, 1e-3)
	near(t, "rows with re-admitted copies", within.SteadyStateRows, 1000*within.KeysPerOriginal*within.HorizonSeconds, 1e-3)

	pair := estimate(t, w, ModelQuery{Shape: PairKeyed, DelaySeconds: 100, CopiesAreNewKeys: true})
	near(t, "pair-keyed missed rate", pair.MissedRate, 1, 1e-9)
	near(t, "pair-keyed rows", pair.SteadyStateRows, 1000*1.1*pair.HorizonSeconds, 1e-3)

	// The same copies keeping the original's event time are dropped late
	// once their key is evicted: nothing is missed.
	w.CopyTimestamp = SameTimestamp
	same := estimate(t, w, ModelQuery{Shape: WithinWatermark, DelaySeconds: 100})
	if same.MissedRate != 0 {
		t.Errorf("within-watermark with same-timestamp copies: missed %v, want 0", same.MissedRate)
	}
}

// Several copies per event: the renewal over the gaps. With a constant
// gap g and K copies, copy k is k*g after the original; with R between g
// and 2g every second copy is re-admitted.
func TestModelCopyChain(t *testing.T) {
	w := steady(100)
	w.RetryProbability = 1
	w.ExtraCopies = []float64{0, 0, 0, 1} // always 4 extra copies
	w.RetryGap = distuv.Uniform{Min: 149, Max: 151}
	w.CopyTimestamp = Restamped
	// R = 2*50 + 15 + q0, about 115: every gap (150) exceeds it, so all
	// four copies are missed.
	est := estimate(t, w, ModelQuery{Shape: WithinWatermark, DelaySeconds: 50})
	near(t, "missed with gaps past R", est.MissedRate, 1, 1e-6)
	// R about 215: 150 < R < 300, so copies 2 and 4 are re-admitted.
	est = estimate(t, w, ModelQuery{Shape: WithinWatermark, DelaySeconds: 100})
	near(t, "missed with R between g and 2g", est.MissedRate, 0.5, 1e-3)
}

// A rate profile peaks at its busiest segment's steady state when the
// segment is longer than the horizon.
func TestModelProfile(t *testing.T) {
	w := ModelWorkload{
		Segments:        []ModelSegment{{Seconds: 1200, Rate: 500}, {Seconds: 600, Rate: 0}, {Seconds: 1200, Rate: 50}},
		DurationSeconds: 6000,
		TriggerSeconds:  10,
	}
	est := estimate(t, w, ModelQuery{Shape: PairKeyed, DelaySeconds: 290})
	base := 500 * est.HorizonSeconds
	if est.PeakStateRows < base || est.PeakStateRows > base*1.05 {
		t.Errorf("profile peak %v, want about %v (the 500/s segment's steady state)", est.PeakStateRows, base)
	}
	near(t, "steady state at the peak rate", est.SteadyStateRows, base, 1e-3)
}

func TestModelErrors(t *testing.T) {
	if _, err := EstimateModel(ModelWorkload{Segments: []ModelSegment{{Rate: 1}}}, ModelQuery{}); err == nil {
		t.Error("no trigger: want an error")
	}
	if _, err := EstimateModel(steady(1), ModelQuery{DelaySeconds: -1}); err == nil {
		t.Error("negative delay: want an error")
	}
	if _, err := EstimateModel(ModelWorkload{TriggerSeconds: 1}, ModelQuery{}); err == nil {
		t.Error("no rate: want an error")
	}
}
