package generators

import (
	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators/randvar"
	"math"
	"slices"
	"testing"
	"time"
)

// TestPoissonRate checks the count of originals against the rate, and
// that counts per second are as dispersed as a Poisson process's (index
// of dispersion, variance over mean, near 1).
func TestPoissonRate(t *testing.T) {
	const seed, rate, secs = 1, 2000.0, 1000
	s := workload(secs*time.Second, rate, func(s *Config) { s.Seed = seed })
	g := mustNew(t, s)
	start, end := micros(s, 0), micros(s, secs*time.Second)
	var perSecond [secs]float64
	n := 0.0
	var r Row
	for g.Next(&r) {
		if r.Arrival < start || r.Arrival >= end {
			t.Fatalf("original outside the window: %s", rowString(&r))
		}
		perSecond[(r.Arrival-start)/1e6]++
		n++
	}
	want := rate * secs
	within(t, "originals", n, want, 5*math.Sqrt(want), seed)
	mean, variance := meanVar(perSecond[:])
	within(t, "index of dispersion", variance/mean, 1, 0.15, seed)
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// TestProfile checks that a profile repeats to fill the duration, that a
// stall has no originals at all while copies and heartbeats still arrive,
// and that each segment's count follows its rate.
func TestProfile(t *testing.T) {
	const seed = 3
	s := workload(time.Hour, 0, withRetries(0.2, constant(1), exponential(60), SameTimestamp), func(s *Config) {
		s.Seed = seed
		s.Workload.Rate = nil
		s.Workload.Profile = []Segment{
			{For: interval.Duration(10 * time.Minute), Rate: 200},
			{For: interval.Duration(5 * time.Minute), Rate: 0},
			{For: interval.Duration(2 * time.Minute), Rate: 1000},
		}
		s.Workload.Heartbeat = interval.Duration(time.Minute)
	})
	start := micros(s, 0)
	cycle := int64(17 * time.Minute / time.Microsecond)
	var originals [3]float64
	stallCopies, stallBeats := 0, 0
	var r Row
	for g := mustNew(t, s); g.Next(&r); {
		in := (r.Arrival - start) % cycle
		seg := 0
		switch {
		case in >= 15*60e6:
			seg = 2
		case in >= 10*60e6:
			seg = 1
		}
		switch {
		case r.Truth.Heartbeat:
			if seg == 1 {
				stallBeats++
			}
		case r.Truth.Copy > 0:
			if seg == 1 && r.Arrival < micros(s, time.Hour) {
				stallCopies++
			}
		default:
			originals[seg]++
		}
	}
	if originals[1] != 0 {
		t.Errorf("%v originals arrived during stalls", originals[1])
	}
	if stallCopies == 0 || stallBeats == 0 {
		t.Errorf("stalls held %d copies and %d heartbeats; want some of each", stallCopies, stallBeats)
	}
	// An hour holds 3 full cycles and 9 minutes of a fourth (all at 200/s).
	want0 := 200.0 * 60 * (3*10 + 9)
	want2 := 1000.0 * 60 * 3 * 2
	within(t, "originals at 200/s", originals[0], want0, 5*math.Sqrt(want0), seed)
	within(t, "originals at 1000/s", originals[2], want2, 5*math.Sqrt(want2), seed)
}

// TestLowRateShortProfile checks that a rate far below one event per pass
// of a short profile is still exact and fast (whole passes are skipped).
func TestLowRateShortProfile(t *testing.T) {
	s := workload(1000*time.Hour, 0, func(s *Config) {
		s.Workload.Rate = nil
		s.Workload.Profile = []Segment{
			{For: interval.Duration(time.Millisecond), Rate: 0},
			{For: interval.Duration(time.Millisecond), Rate: 2.0 / 3600 * 2},
		}
	})
	n := float64(len(all(mustNew(t, s))))
	within(t, "originals", n, 2000, 5*math.Sqrt(2000), s.Seed)
}

func TestAllStall(t *testing.T) {
	s := workload(10*time.Minute, 0)
	if rows := all(mustNew(t, s)); len(rows) != 0 {
		t.Fatalf("rate 0 gave %d rows", len(rows))
	}
	s.Workload.Heartbeat = interval.Duration(time.Minute)
	rows := all(mustNew(t, s))
	if len(rows) != 9 {
		t.Fatalf("rate 0 with a heartbeat every minute for 10 minutes gave %d rows, want 9 heartbeats", len(rows))
	}
	// A profile replaces the rate.
	s = workload(10*time.Minute, 1000, func(s *Config) {
		s.Workload.Profile = []Segment{{For: interval.Duration(time.Minute), Rate: 0}}
	})
	if rows := all(mustNew(t, s)); len(rows) != 0 {
		t.Fatalf("a stall profile beside rate 1000/s gave %d rows", len(rows))
	}
}

// TestRetryModel checks the share of resent originals, the mean number of
// extra copies (geometric) and the mean gap between copies.
func TestRetryModel(t *testing.T) {
	const seed, p, meanCopies, meanGap = 4, 0.2, 1.5, 30.0
	s := workload(200*time.Second, 1000, withRetries(p, geometric(meanCopies), exponential(meanGap), SameTimestamp),
		func(s *Config) { s.Seed = seed })
	var originals, resent, extras float64
	var gaps, ngaps float64
	last := map[uint64]int64{}
	var r Row
	for g := mustNew(t, s); g.Next(&r); {
		if r.Truth.Copy == 0 {
			originals++
			if r.Truth.Copies > 1 {
				resent++
				extras += float64(r.Truth.Copies - 1)
			}
		} else {
			gaps += float64(r.Arrival - last[r.Truth.Event])
			ngaps++
		}
		last[r.Truth.Event] = r.Arrival
		if r.Truth.Copy == r.Truth.Copies-1 {
			delete(last, r.Truth.Event)
		}
	}
	within(t, "share resent", resent/originals, p, 5*math.Sqrt(p*(1-p)/originals), seed)
	// A geometric on {1, 2, ...} with mean m has variance m(m-1).
	within(t, "mean extra copies", extras/resent, meanCopies, 5*math.Sqrt(meanCopies*(meanCopies-1)/resent), seed)
	within(t, "mean gap (s)", gaps/ngaps/1e6, meanGap, 5*meanGap/math.Sqrt(ngaps), seed)
	if len(last) != 0 {
		t.Errorf("%d events ended with copies missing", len(last))
	}
}

// TestTimestampModes checks each copy's event time against its original's,
// exactly.
func TestTimestampModes(t *testing.T) {
	const jitter = 1500 * time.Millisecond
	for _, mode := range []TimestampMode{SameTimestamp, Restamp, JitterTimestamp} {
		t.Run(string(mode), func(t *testing.T) {
			s := workload(100*time.Second, 200, withRetries(0.5, geometric(2), exponential(5), mode), func(s *Config) {
				s.Workload.ArrivalDelay = exponential(3)
				if mode == JitterTimestamp {
					s.Workload.Retries.Jitter = interval.Duration(jitter)
				}
			})
			orig := map[uint64]Row{}
			var below, above int
			var r Row
			for g := mustNew(t, s); g.Next(&r); {
				if r.Truth.Copy == 0 {
					orig[r.Truth.Event] = r
					continue
				}
				o := orig[r.Truth.Event]
				got := r.EventTime - o.EventTime
				switch mode {
				case SameTimestamp:
					if got != 0 {
						t.Fatalf("same: copy moved by %dµs:\n%s\n%s", got, rowString(&o), rowString(&r))
					}
				case Restamp:
					if got != r.Arrival-o.Arrival {
						t.Fatalf("restamp: copy moved by %dµs, arrived %dµs later:\n%s\n%s", got, r.Arrival-o.Arrival, rowString(&o), rowString(&r))
					}
				case JitterTimestamp:
					if got < -jitter.Microseconds() || got > jitter.Microseconds() {
						t.Fatalf("jitter: copy moved by %dµs, beyond ±%v", got, jitter)
					}
					if got < 0 {
						below++
					} else if got > 0 {
						above++
					}
				}
			}
			if mode == JitterTimestamp && (below < 1000 || above < 1000) {
				t.Errorf("jitter moved %d copies back and %d forward; want both sides", below, above)
			}
		})
	}
}

// TestMetadata checks attempt and ingest_time under each metadata list.
func TestMetadata(t *testing.T) {
	for _, meta := range [][]string{nil, {MetaAttempt}, {MetaIngestTime}, {MetaAttempt, MetaIngestTime}} {
		s := workload(20*time.Second, 200, withRetries(0.5, geometric(2), exponential(5), SameTimestamp), func(s *Config) {
			s.Workload.Retries.Metadata = meta
		})
		attempt, ingest := slices.Contains(meta, MetaAttempt), slices.Contains(meta, MetaIngestTime)
		firstArrival := map[uint64]int64{}
		copies := 0
		var r Row
		for g := mustNew(t, s); g.Next(&r); {
			if r.Truth.Copy == 0 {
				firstArrival[r.Truth.Event] = r.Arrival
				if r.Attempt != 0 || r.IngestTime != r.Arrival {
					t.Fatalf("metadata %v: original %s", meta, rowString(&r))
				}
				continue
			}
			copies++
			wantAttempt, wantIngest := int64(0), firstArrival[r.Truth.Event]
			if attempt {
				wantAttempt = int64(r.Truth.Copy)
			}
			if ingest {
				wantIngest = r.Arrival
			}
			if r.Attempt != wantAttempt || r.IngestTime != wantIngest {
				t.Fatalf("metadata %v: copy %s, want attempt %d ingest_time %d", meta, rowString(&r), wantAttempt, wantIngest)
			}
		}
		if copies == 0 {
			t.Fatalf("metadata %v: no copies", meta)
		}
	}
}

// TestBadClock checks the share of rows with a bad clock, that their
// event time is the arrival plus a skew within the distribution's range,
// and that copies draw independently of their original.
func TestBadClock(t *testing.T) {
	const seed, p = 6, 0.01
	minSkew, maxSkew := time.Hour, 7*24*time.Hour
	s := workload(100*time.Second, 1000, withRetries(0.3, constant(1), exponential(5), SameTimestamp), func(s *Config) {
		s.Seed = seed
		s.Workload.ArrivalDelay = exponential(1)
		s.Workload.FutureTimestamps = FutureTimestamps{
			Probability: p,
			Skew:        randvar.Spec{Kind: randvar.KindUniform, Min: minSkew.Seconds(), Max: maxSkew.Seconds()},
		}
		s.Workload.Heartbeat = interval.Duration(time.Second)
	})
	var rows, bad, badCopies float64
	var r Row
	for g := mustNew(t, s); g.Next(&r); {
		if r.Truth.Heartbeat {
			if r.Truth.BadClock || r.EventTime != r.Arrival {
				t.Fatalf("heartbeat with a bad clock: %s", rowString(&r))
			}
			continue
		}
		rows++
		if !r.Truth.BadClock {
			if r.EventTime > r.Arrival {
				t.Fatalf("good clock ahead of arrival: %s", rowString(&r))
			}
			continue
		}
		bad++
		if r.Truth.Copy > 0 {
			badCopies++
		}
		if skew := r.EventTime - r.Arrival; skew < minSkew.Microseconds() || skew > maxSkew.Microseconds() {
			t.Fatalf("bad clock skew %dµs outside [%v, %v]: %s", skew, minSkew, maxSkew, rowString(&r))
		}
	}
	within(t, "share of bad clocks", bad/rows, p, 5*math.Sqrt(p*(1-p)/rows), seed)
	if badCopies == 0 {
		t.Error("no copy had a bad clock")
	}
}

// TestHeartbeats checks that heartbeats come at every multiple of the
// interval while originals are generated or copies are pending, and stop
// after that.
func TestHeartbeats(t *testing.T) {
	s := workload(10*time.Minute, 1, withRetries(0.5, constant(1), constant(5*60), SameTimestamp), func(s *Config) {
		s.Workload.Heartbeat = interval.Duration(time.Minute)
	})
	rows := all(mustNew(t, s))
	lastOther := int64(0)
	var beats []int64
	ids := map[[36]byte]bool{}
	for _, r := range rows {
		if !r.Truth.Heartbeat {
			lastOther = r.Arrival
			ids[r.EventID] = true
			continue
		}
		beats = append(beats, r.Arrival)
		if r.EventTime != r.Arrival || r.IngestTime != r.Arrival || r.Truth.Copies != 1 || r.Truth.Copy != 0 ||
			r.CustomerID != -1 || r.Attempt != 0 || r.Truth.BadClock {
			t.Fatalf("heartbeat row %s", rowString(&r))
		}
		if ids[r.EventID] {
			t.Fatalf("heartbeat reuses an id: %s", rowString(&r))
		}
		ids[r.EventID] = true
	}
	end := micros(s, 10*time.Minute)
	for k, at := range beats {
		if want := micros(s, time.Duration(k+1)*time.Minute); at != want {
			t.Fatalf("heartbeat %d at %d, want %d", k, at, want)
		}
	}
	next := micros(s, time.Duration(len(beats)+1)*time.Minute)
	if next < end || next < lastOther {
		t.Errorf("heartbeats stop at %d beats, but the next (%d) is before the end of originals (%d) or the last copy (%d)",
			len(beats), next, end, lastOther)
	}
	if last := beats[len(beats)-1]; last >= end && last >= lastOther {
		t.Errorf("the last heartbeat (%d) is after the originals' window and every copy (%d)", last, lastOther)
	}
	if len(beats) < 13 {
		t.Errorf("%d heartbeats; copies 5 minutes after originals should extend them to about 15", len(beats))
	}
}

// TestLogNormalDelay checks that arrival delays drawn from a lognormal
// given by its median and p99 have those quantiles.
func TestLogNormalDelay(t *testing.T) {
	const seed = 9
	s := workload(200*time.Second, 1000, func(s *Config) {
		s.Seed = seed
		s.Workload.ArrivalDelay = randvar.Spec{Kind: randvar.KindLogNormal, Median: 30, P99: 900}
	})
	var delays []float64
	var r Row
	for g := mustNew(t, s); g.Next(&r); {
		delays = append(delays, float64(r.Arrival-r.EventTime)/1e6)
	}
	slices.Sort(delays)
	q := func(p float64) float64 { return delays[int(p*float64(len(delays)))] }
	within(t, "median delay (s)", q(0.5), 30, 30*0.02, seed)
	within(t, "p99 delay (s)", q(0.99), 900, 900*0.05, seed)
}

// TestPendingBounded checks that memory follows the copies in flight, not
// the length of the run.
func TestPendingBounded(t *testing.T) {
	s := workload(30*time.Minute, 500, withRetries(0.05, geometric(1.5), randvar.Spec{Kind: randvar.KindLogNormal, Median: 30, P99: 900}, SameTimestamp))
	g := mustNew(t, s)
	rows, peak := 0, 0
	var r Row
	for g.Next(&r) {
		rows++
		peak = max(peak, g.Pending())
	}
	// In flight: about rate x share x mean span (~130 s) = 3250 events.
	if rows < 900000 || peak > 10000 {
		t.Errorf("%d rows, peak of %d pending events", rows, peak)
	}
	if g.Pending() != 0 {
		t.Errorf("%d events pending after the end", g.Pending())
	}
}
