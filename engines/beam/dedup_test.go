package beam

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dedupsim/dedupsim/engines"
)

// refDedup is a deliberately naive model of DeduplicateFn in the global
// window: a map of seen keys to their timers, every advance scanning all
// of it.
type refDedup struct {
	event    bool
	d        int64
	seen     map[string]int64
	wm, proc int64
	fired    int64
}

func (r *refDedup) process(key string) engines.Outcome {
	if r.wm > globalGC {
		return engines.DroppedLate
	}
	if _, ok := r.seen[key]; ok {
		return engines.DroppedDuplicate
	}
	if r.event {
		r.seen[key] = min(r.wm+r.d, globalGC)
	} else {
		r.seen[key] = r.proc + r.d
	}
	return engines.Emitted
}

func (r *refDedup) fire(now int64, domain bool) {
	for k, at := range r.seen {
		if domain && now > at || r.wm > globalGC {
			delete(r.seen, k)
			r.fired++
		}
	}
}

// TestGlobalWindowTimersAgainstReference replays random element,
// watermark and processing-time steps through Dedup (whose global window
// fires from a queue) and the naive model, comparing every verdict, the
// seen keys with their timers and the timers fired. A failure prints the
// seed.
func TestGlobalWindowTimersAgainstReference(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 25))
		domain := TimeDomain(rng.IntN(2))
		dur := []int64{1, 5, 100, 10_000}[rng.IntN(4)]
		d, err := NewDedup(domain, dur, 0)
		if err != nil {
			t.Fatal(err)
		}
		ref := &refDedup{event: domain == EventTime, d: dur, seen: map[string]int64{}, wm: MinTimestamp}
		for i := range 300 {
			where := fmt.Sprintf("seed %d, %s time, d %d, step %d", seed, domain, dur, i)
			switch rng.IntN(4) {
			case 0:
				by := 1 + int64(rng.IntN(int(2*dur)))
				d.AdvanceProcessingTime(by)
				ref.proc += by
				ref.fire(ref.proc, !ref.event)
			case 1:
				wm := max(ref.wm, 0) + int64(rng.IntN(int(2*dur)))
				if rng.IntN(50) == 0 {
					wm = globalGC + 1
				}
				d.AdvanceWatermark(wm)
				ref.wm = max(ref.wm, wm)
				ref.fire(ref.wm, ref.event)
			default:
				key := fmt.Sprint(rng.IntN(8))
				if got, want := d.Process(key, int64(rng.IntN(1000))), ref.process(key); got != want {
					t.Fatalf("%s: %s: verdict %v, reference %v", where, key, got, want)
				}
			}
			var want []KeyTimer
			for k, at := range ref.seen {
				want = append(want, KeyTimer{Key: k, Expiry: at})
			}
			slices.SortFunc(want, func(a, b KeyTimer) int { return cmpString(a.Key, b.Key) })
			if got := d.Keys(); !slices.Equal(got, want) {
				t.Fatalf("%s: keys %v, reference %v", where, got, want)
			}
			if d.TimersFired() != ref.fired || d.Len() != len(ref.seen) {
				t.Fatalf("%s: fired %d, len %d; reference %d, %d", where, d.TimersFired(), d.Len(), ref.fired, len(ref.seen))
			}
			if live := len(d.queue) - d.head; live != d.Len() || d.head > 0 && d.head >= live {
				t.Fatalf("%s: queue holds %d keys after %d spent slots, %d are seen", where, live, d.head, d.Len())
			}
		}
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// refFixed is a deliberately naive model of DeduplicateFn in fixed
// windows of size w with allowed lateness l: a map of seen keys and
// windows to their timers, every advance scanning all of it; a window's
// garbage-collection time is its start + w - 1 + l.
type refFixed struct {
	event       bool
	d, w, l     int64
	seen        map[stateKey]int64
	wm, proc    int64
	fired, late int64
}

func (r *refFixed) process(key string, ts int64) engines.Outcome {
	start := ts - ts%r.w // ts >= 0 here
	gc := start + r.w - 1 + r.l
	if gc < r.wm {
		r.late++
		return engines.DroppedLate
	}
	k := stateKey{key, start}
	if _, ok := r.seen[k]; ok {
		return engines.DroppedDuplicate
	}
	if r.event {
		r.seen[k] = min(r.wm+r.d, gc)
	} else {
		r.seen[k] = r.proc + r.d
	}
	return engines.Emitted
}

func (r *refFixed) fire() {
	for k, at := range r.seen {
		timer := r.event && r.wm > at || !r.event && r.proc > at
		if timer || r.wm > k.start+r.w-1+r.l {
			delete(r.seen, k)
			r.fired++
		}
	}
}

// TestFixedWindowsAgainstReference replays random element, watermark and
// processing-time steps through Dedup in fixed windows, with and without
// allowed lateness (its timers fire from a queue, its windows are
// collected in order), and through the naive model, comparing every
// verdict, the seen keys with their windows and timers, the timers fired
// and the late drops. A failure prints the seed.
func TestFixedWindowsAgainstReference(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 26))
		domain := TimeDomain(rng.IntN(2))
		dur := []int64{1, 5, 100, 10_000}[rng.IntN(4)]
		w := []int64{1, 10, 250, 1000}[rng.IntN(4)]
		l := []int64{0, 0, 1, 30, 400}[rng.IntN(5)]
		d, err := NewWindowed(domain, dur, w, l)
		if err != nil {
			t.Fatal(err)
		}
		ref := &refFixed{event: domain == EventTime, d: dur, w: w, l: l, seen: map[stateKey]int64{}, wm: MinTimestamp}
		for i := range 400 {
			where := fmt.Sprintf("seed %d, %s time, d %d, window %d, lateness %d, step %d", seed, domain, dur, w, l, i)
			switch rng.IntN(4) {
			case 0:
				by := 1 + int64(rng.IntN(int(2*dur)))
				d.AdvanceProcessingTime(by)
				ref.proc += by
				ref.fire()
			case 1:
				wm := max(ref.wm, 0) + int64(rng.IntN(int(min(2*dur, 2*w+l)+1)))
				d.AdvanceWatermark(wm)
				ref.wm = max(ref.wm, wm)
				ref.fire()
			default:
				key := fmt.Sprint(rng.IntN(6))
				ts := max(ref.wm, 0) - int64(rng.IntN(int(2*w+l+1))) + int64(rng.IntN(int(w+1)))
				ts = max(ts, 0)
				if got, want := d.Process(key, ts), ref.process(key, ts); got != want {
					t.Fatalf("%s: %s@%d: verdict %v, reference %v", where, key, ts, got, want)
				}
			}
			var want []KeyTimer
			for k, at := range ref.seen {
				want = append(want, KeyTimer{Key: k.key, Window: k.start, Expiry: at})
			}
			slices.SortFunc(want, func(a, b KeyTimer) int {
				if c := cmpString(a.Key, b.Key); c != 0 {
					return c
				}
				return int(a.Window - b.Window)
			})
			if got := d.Keys(); !slices.Equal(got, want) {
				t.Fatalf("%s: keys %v, reference %v", where, got, want)
			}
			if d.TimersFired() != ref.fired || d.Len() != len(ref.seen) || d.DroppedLate() != ref.late {
				t.Fatalf("%s: fired %d, len %d, late %d; reference %d, %d, %d", where, d.TimersFired(), d.Len(), d.DroppedLate(), ref.fired, len(ref.seen), ref.late)
			}
		}
	}
}
